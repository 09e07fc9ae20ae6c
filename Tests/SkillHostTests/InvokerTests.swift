import Foundation
import Synchronization
import TestSupport
import Testing

@testable import SkillHost
@testable import SkillJSON

/// The one call path: every entry point (invoke, start, prepare/run, the calling thread) looks up, validates once,
/// applies the registry's policy and carries a typed failure.
struct InvokerTests {
    static let destructive = """
        #include "skill_sdk.h"
        static int wipe(void *s, const skill_call_api *api, skill_call *call, const char *args) {
            (void)s; api->set_result(call, args, strlen(args)); return SKILL_OK;
        }
        static const skill_descriptor skills[] = {
            SKILL_JSON("wipe_all", "Wipe", "Deletes everything.",
                "{\\"type\\":\\"object\\",\\"properties\\":{\\"confirm\\":{\\"type\\":\\"boolean\\",\\"default\\":false}}}",
                SKILL_RISK_DESTRUCTIVE, 0, wipe),
        };
        SKILL_PLUGIN("wiper", "1.0.0", "destructive fixture", skills)
        """

    static func registry(policy: Policy = Policy()) throws -> SkillRegistry {
        let registry = try makeRegistry(policy: policy)
        let folder = Paths.temporaryDirectory("invoker")
        _ = try registry.load(file: try Fixture.compileFile("behaviours.c", into: folder)).get()
        _ = try registry.load(
            file: try Fixture.compile("#include <string.h>\n" + destructive, name: "wiper", into: folder)
        )
        .get()
        return registry
    }

    /// Every way of calling a skill, each returning its outcome.
    static func everyEntryPoint(_ registry: SkillRegistry, _ invocation: SkillInvocation) async throws -> [SkillOutcome]
    {
        let started = await withCheckedContinuation { continuation in
            registry.start(invocation) { continuation.resume(returning: $0) }
        }
        let onThread = try await offPool { registry.invokeOnCurrentThread(invocation) }
        let prepared: SkillOutcome
        switch await registry.prepare(invocation) {
        case .failure(let refusal): prepared = refusal.outcome(after: .zero)
        case .success(let call): prepared = await call.run()
        }
        return [await registry.invoke(invocation), started, onThread, prepared]
    }

    /// A worker trusts its host's validation: arguments its host already checked are not walked again (they
    /// would be refused here: `confirm` must be a boolean).
    @Test func argumentsAValidatorAlreadyCheckedAreNotCheckedAgain() async throws {
        let registry = try Self.registry()
        let invocation = SkillInvocation(skill: "wipe_all", arguments: ["confirm": "yes"], confirmer: .confirmed)
        let checked = try await offPool { registry.invoker.invokeOnCurrentThread(invocation) }
        #expect(checked.code == .invalidArguments)
        var validated = invocation
        validated.argumentsValidated = true
        let sent = validated
        let trusted = try await offPool { registry.invoker.invokeOnCurrentThread(sent) }
        #expect(trusted.result == ["confirm": "yes"], "\(trusted)")
    }

    @Test func aDenyRuleHoldsOnEveryEntryPoint() async throws {
        let registry = try Self.registry(policy: Policy(rules: [PolicyRule("ec*", .deny)]))
        for confirmer in [Confirmer.confirmed, .nobodyToAsk, .person({ _, _ in .allowOnce })] {
            let outcomes = try await Self.everyEntryPoint(
                registry, SkillInvocation(skill: "echo", confirmer: confirmer))
            for outcome in outcomes {
                #expect(outcome.code == .notPermitted)
                #expect(outcome.status == .error)
                #expect(
                    outcome.error
                        == #"not run: calls to echo are denied by the configuration (policy rule "ec*": "deny")"#)
            }
        }
        // The convenience call from text goes the same way.
        #expect(await registry.invoke("echo", arguments: "{}").code == .notPermitted)
    }

    @Test func aDestructiveCallNeedsSomeoneToConfirmIt() async throws {
        let registry = try Self.registry()
        for outcome in try await Self.everyEntryPoint(registry, SkillInvocation(skill: "wipe_all")) {
            #expect(
                outcome.error
                    == "not run: wipe_all is destructive and there is no one to confirm it (allow it with a rule in the configuration)"
            )
        }
        let confirmed = await registry.invoke(SkillInvocation(skill: "wipe_all", confirmer: .confirmed))
        #expect(confirmed.result == ["confirm": false], "the skill got its validated arguments, default filled in")

        // A person is asked once per call, with the validated arguments, and their no is a refusal.
        let asked = Mutex<[JSONValue]>([])
        let declining = Confirmer.person { skill, arguments in
            asked.withLock { $0.append(arguments) }
            return skill.id == "wipe_all" ? .deny : .allowOnce
        }
        let declined = await registry.invoke(SkillInvocation(skill: "wipe_all", confirmer: declining))
        #expect(declined.code == .notPermitted)
        #expect(declined.error == "not run: the user declined this call")
        #expect(asked.withLock { $0 } == [["confirm": false]])
        // A read-only skill is never asked about.
        #expect(await registry.invoke(SkillInvocation(skill: "echo", confirmer: declining)).status == .ok)
        #expect(asked.withLock { $0.count } == 1)
        // On the calling thread nobody can be asked.
        let onThread = try await offPool {
            registry.invokeOnCurrentThread(
                SkillInvocation(skill: "wipe_all", confirmer: .person({ _, _ in .allowOnce })))
        }
        #expect(
            onThread.error
                == "not run: wipe_all needs confirming, and a call on the calling thread cannot ask a person (confirm it beforehand, or allow it with a policy rule)"
        )
    }

    @Test func failuresCarryACodeNotJustASentence() async throws {
        let registry = try Self.registry()
        let unknown = await registry.invoke("ehco", arguments: "{}")
        #expect(unknown.code == .unknownSkill)
        #expect(unknown.error == #"unknown skill "ehco" (did you mean "echo"?)"#)
        let notJSON = await registry.invoke("echo", arguments: "{")
        #expect(notJSON.code == .invalidArguments)
        #expect(notJSON.status == .invalidArgs)
        let wrongType = await registry.invoke(SkillInvocation(skill: "wipe_all", arguments: ["confirm": "perhaps"]))
        #expect(wrongType.code == .invalidArguments)
        #expect(wrongType.error == "$.confirm: expected boolean, got string")
        let failed = await registry.invoke("fail", arguments: "{}")
        #expect(failed.code == .failed)
        let timedOut = await registry.invoke(
            SkillInvocation(skill: "cooperative", arguments: ["ms": 5000], timeout: .milliseconds(20)))
        #expect(timedOut.code == .timeout)
        #expect(await registry.invoke("echo", arguments: "{}").code == nil)
    }

    @Test func aPreparedCallRunsOnceAndHoldsItsPluginUntilThen() async throws {
        let registry = try Self.registry()
        let file = try #require(registry.plugins.first { $0.name == "behaviours" }?.file)
        guard case .success(let call) = await registry.prepare(SkillInvocation(skill: "echo", arguments: ["a": 1]))
        else {
            Issue.record("echo was refused")
            return
        }
        #expect(call.arguments == ["a": 1])
        // The plugin goes away while the call is prepared: its retirement waits for the call.
        registry.unload(file: file)
        #expect(registry.skill("echo") == nil)
        #expect(registry.pendingRetirements == 1)
        #expect(await call.run().result == ["a": 1], "the old version still serves the prepared call")
        let again = await call.run()
        #expect(again.error == "echo: this prepared call already ran")
        #expect(await eventually { registry.pendingRetirements == 0 }, "woken by the call's end, not by polling")

        // Dropping a prepared call without running it gives the plugin back too.
        _ = try registry.load(file: file).get()
        do {
            guard case .success = await registry.prepare(SkillInvocation(skill: "echo")) else {
                Issue.record("echo was refused")
                return
            }
        }
        registry.unload(file: file)
        #expect(await eventually { registry.pendingRetirements == 0 })
    }

    @Test func externalToolsShareTheCatalogWithPluginSkills() async throws {
        let registry = try Self.registry()
        let seen = Mutex<[JSONValue]>([])
        func tool(_ id: String, _ schema: JSONValue) -> ExternalSkill {
            ExternalSkill(
                info: SkillInfo(
                    id: id, title: id, description: "", plugin: "remote", pluginVersion: "1", file: "mcp server remote",
                    risk: .readOnly, flags: [], timeout: nil, inputSchema: schema, schemaIsGenerated: false,
                    kind: .external)
            ) { arguments in
                seen.withLock { $0.append(arguments) }
                return SkillOutcome.success(arguments)
            }
        }
        let number: JSONValue = ["type": "object", "properties": ["n": ["type": "integer"]]]
        let skipped = registry.registerExternal(
            source: "remote", version: "1", description: "", location: "mcp server remote",
            skills: [tool("echo", number), tool("count", number)])
        #expect(skipped == ["echo: the id is already taken by behaviours"])
        #expect(registry.plugins.first { $0.name == "remote" }?.origin == .mcp(server: "remote"))
        #expect(registry.plugins.first { $0.name == "behaviours" }?.origin == .file(placement: .inProcess))
        // Validated once, coerced like a plugin's arguments, on every entry point.
        for outcome in try await Self.everyEntryPoint(
            registry, SkillInvocation(skill: "count", argumentText: #"{"n":"23"}"#))
        {
            #expect(outcome.result == ["n": 23])
        }
        #expect(seen.withLock { $0 } == Array(repeating: ["n": 23], count: 4))
        #expect(await registry.invoke("count", arguments: #"{"n":"x"}"#).code == .invalidArguments)
        #expect(
            await registry.invoke("cuont", arguments: "{}").error == #"unknown skill "cuont" (did you mean "count"?)"#)
        registry.unregisterExternal(source: "remote")
        #expect(registry.skill("count") == nil)
        #expect(registry.skill("echo") != nil)
    }
}

/// Log lines name their plugin and reach their own registry — v1.0's context-free `log` included, from any thread:
/// each plugin's `log` is a C function made for it alone (a libffi closure), so there is no process-wide logger.
struct PluginLogTests {
    final class Lines: Sendable {
        let lines = Mutex<[LogRecord]>([])
        var records: [LogRecord] { lines.withLock { $0 } }
    }

    static func registry(_ lines: Lines) throws -> SkillRegistry {
        let registry = try makeRegistry("data") { configuration in
            configuration.log = { record in lines.lines.withLock { $0.append(record) } }
        }
        _ = try registry.load(file: try Fixture.compileFile("threadlog.c")).get()
        return registry
    }

    @Test func everyLineNamesItsPluginAndReachesItsOwnRegistry() async throws {
        let first = Lines()
        let second = Lines()
        let one = try Self.registry(first)
        // A second registry in the same process (the last one created used to take every v1.0 line).
        let two = try Self.registry(second)
        #expect(await one.invoke("thread_log", arguments: "{}").result == true)
        let fromThread = LogRecord(level: .warning, source: "threadlog", message: "from my own thread")
        #expect(first.records.contains(fromThread))
        #expect(!second.records.contains(fromThread))
        #expect(first.records.contains(LogRecord(level: .info, source: "threadlog", message: "set up")))
        #expect(second.records.contains(LogRecord(level: .info, source: "threadlog", message: "set up")))
        #expect(await two.invoke("thread_log", arguments: "{}").result == true)
        #expect(second.records.contains(fromThread))
        #expect(first.records.filter { $0 == fromThread }.count == 1)
        one.shutdown()
        two.shutdown()
    }
}

/// The caller's context (`skill_call_api.context`) carries the invocation's session.
struct CallerContextTests {
    @Test func theSessionReachesTheSkill() async throws {
        let registry = try makeRegistry()
        _ = try registry.load(file: try Fixture.compileFile("v11.c")).get()
        var invocation = SkillInvocation(skill: "v11_context")
        invocation.session = "20261201-0930-4f2a"
        let inSession = await registry.invoke(invocation)
        #expect(inSession.result?["session"] == "20261201-0930-4f2a")
        #expect(inSession.result?["client"] == "embedder")
        let outside = await registry.invoke(SkillInvocation(skill: "v11_context"))
        #expect(outside.result?["session"] == .null)
        #expect(outside.result?.objectValue?.keys == ["locale", "language", "time_zone", "now", "session", "client"])
        registry.shutdown()
    }
}

/// Issue #65: a call is decided and run on the definition its caller looked up (an agent turn groups read-only
/// calls by it) — not on a version loaded in between.
struct SameDefinitionTests {
    @Test func aCallForADefinitionReplacedSinceItWasLookedUpDoesNotRun() async throws {
        let registry = try makeRegistry()
        defer { registry.shutdown() }
        let folder = Paths.temporaryDirectory("same-definition")
        func build(_ risk: String) throws -> String {
            try Fixture.compile(
                """
                #include "skill_sdk.h"
                static int echo(void *s, const skill_call_api *api, skill_call *call, const char *args) {
                    (void)s; api->set_result(call, args, __builtin_strlen(args)); return SKILL_OK;
                }
                static const skill_descriptor skills[] = {
                    SKILL_JSON("vers_echo", "Echo", "Echoes.", "{\\"type\\":\\"object\\"}", \(risk), 0, echo),
                };
                SKILL_PLUGIN("versioned", "1.0.0", "same definition test", skills)
                """, name: "versioned", into: folder)
        }
        let file = try build("SKILL_RISK_READ_ONLY")
        _ = try registry.load(file: file).get()
        var invocation = SkillInvocation(skill: "vers_echo", argumentText: "{}")
        invocation.definition = try #require(registry.skill("vers_echo"))
        #expect(await registry.invoke(invocation).status == .ok, "the same definition runs")
        registry.unload(file: file)
        _ = try registry.load(file: try build("SKILL_RISK_DESTRUCTIVE")).get()
        let outcome = await registry.invoke(invocation)
        #expect(outcome.status == .error)
        #expect(
            outcome.error
                == "vers_echo did not run: a new version of it was loaded while the call was prepared; ask for it "
                + "again")
    }

    /// A definition made anew that says the same (an MCP server's tools listed again, a skill folder rescanned) is
    /// the same definition: the call runs; one that now says otherwise (its risk) does not.
    @Test func aDefinitionMadeAnewThatSaysTheSameStillRuns() async throws {
        let registry = try makeRegistry()
        defer { registry.shutdown() }
        func tool(risk: SkillRisk) -> ExternalSkill {
            ExternalSkill(
                info: SkillInfo(
                    id: "remote_echo", title: "Echo", description: "Echoes.", plugin: "remote", pluginVersion: "1",
                    file: "mcp server remote", risk: risk, flags: [], timeout: nil, inputSchema: ["type": "object"],
                    schemaIsGenerated: false, kind: .external)
            ) { arguments in .success(arguments) }
        }
        func register(_ risk: SkillRisk) {
            registry.unregisterExternal(source: "remote")
            _ = registry.registerExternal(
                source: "remote", version: "1", description: "", location: "mcp server remote",
                skills: [tool(risk: risk)])
        }
        register(.readOnly)
        var invocation = SkillInvocation(skill: "remote_echo", argumentText: "{}")
        invocation.definition = try #require(registry.skill("remote_echo"))
        register(.readOnly)
        #expect(await registry.invoke(invocation).status == .ok, "listed again, the same definition")
        register(.destructive)
        #expect(await registry.invoke(invocation).status == .error, "now destructive: not what was decided")
    }
}
