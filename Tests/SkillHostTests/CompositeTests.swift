import Foundation
import Synchronization
import TestSupport
import Testing

@testable import SkillHost
@testable import SkillJSON

/// Composite skills (`NAME.skill.json`): parsed and checked at load, resolved against what is registered, run step
/// by step under one deadline with failures reported — and undone — by step.
struct CompositeTests {
    /// A mutating skill that registers no undo, and a destructive one.
    static let fixtures = """
        #include <string.h>
        #include "skill_sdk.h"
        static int touch(void *s, const skill_call_api *api, skill_call *call, const char *args) {
            (void)s; (void)args; api->set_result(call, "{\\"touched\\":true}", 16); return SKILL_OK;
        }
        static int wipe(void *s, const skill_call_api *api, skill_call *call, const char *args) {
            (void)s; api->set_result(call, args, strlen(args)); return SKILL_OK;
        }
        static const skill_descriptor skills[] = {
            SKILL_JSON("touch", "Touch", "Changes something, no undo.", "{\\"type\\":\\"object\\"}",
                SKILL_RISK_MUTATING, 0, touch),
            SKILL_JSON("wipe_all", "Wipe", "Deletes everything.", "{\\"type\\":\\"object\\"}",
                SKILL_RISK_DESTRUCTIVE, 0, wipe),
        };
        SKILL_PLUGIN("composite-fixtures", "1.0.0", "composite fixtures", skills)
        """

    let folder = Paths.temporaryDirectory("composites")

    func registry(
        policy: Policy = Policy(), timeout: Duration = .seconds(120), clock: any HostClock = SystemClock()
    ) throws -> SkillRegistry {
        let registry = try makeRegistry(timeout: timeout, clock: clock, policy: policy)
        _ = try registry.load(file: try Fixture.compileFile("behaviours.c", into: folder)).get()
        _ = try registry.load(file: try Fixture.compile(Self.fixtures, name: "fixtures", into: folder)).get()
        _ = try registry.load(file: Paths.products + "/libskill-notes.so").get()
        _ = try registry.load(file: Paths.products + "/libskill-calculator.so").get()
        return registry
    }

    /// Writes `NAME.skill.json` into the test's folder.
    @discardableResult
    func write(_ name: String, _ json: String) throws -> String {
        let file = folder + "/\(name).skill.json"
        try json.write(toFile: file, atomically: true, encoding: .utf8)
        return file
    }

    func load(_ registry: SkillRegistry, _ name: String, _ json: String) throws -> Result<
        PluginSummary, PluginLoadError
    > {
        registry.load(file: try write(name, json))
    }

    static let markDone = """
        {"id": "mark_done", "title": "Mark notes done", "description": "Marks every note matching a query done.",
         "input_schema": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
         "steps": [
           {"call": "notes_search", "with": {"query": "${input.query}"}, "as": "found"},
           {"for_each": "${found}", "call": "notes_update", "with": {"id": "${item.id}", "title": "[done] ${item.title}"}},
           {"result": {"updated": "${found.length}", "first": "${found/0/title}", "note": "$${not a reference}"}}]}
        """

    // MARK: Running

    @Test func stepsRunInOrderAndTheirUndosReverseThemLastFirst() async throws {
        let registry = try registry()
        for title in ["milk", "oat milk", "eggs"] {
            _ = await registry.invoke(SkillInvocation(skill: "notes_add", arguments: ["title": .string(title)]))
        }
        _ = try load(registry, "mark_done", Self.markDone).get()
        let progress = Mutex<[String]>([])
        let outcome = await registry.invoke(
            SkillInvocation(
                skill: "mark_done", arguments: ["query": "milk"],
                onProgress: { report in progress.withLock { $0.append(report.message ?? "") } }))
        #expect(outcome.status == .ok, "\(outcome)")
        #expect(outcome.result == ["updated": 2, "first": "milk", "note": "${not a reference}"])
        #expect(
            progress.withLock { $0 } == [
                "step 1 of 3: notes_search", "step 2 of 3: notes_update", "step 2 of 3: notes_update (1 of 2)",
                "step 2 of 3: notes_update (2 of 2)", "step 3 of 3: result",
            ])
        let titles = await registry.invoke(SkillInvocation(skill: "notes_list")).result?.arrayValue?.compactMap {
            $0["title"]?.stringValue
        }
        #expect(titles == ["[done] milk", "[done] oat milk", "eggs"])

        // The undo: notes_update's undos, the last update's first.
        let undo = try #require(outcome.undo)
        #expect(undo.calls.map(\.skillID) == ["notes_restore", "notes_restore"])
        #expect(undo.calls.map { $0.arguments["id"] } == [2, 1])
        for call in undo.calls {
            let reversed = await registry.invoke(
                SkillInvocation(skill: call.skillID, arguments: call.arguments, confirmer: .confirmed))
            #expect(reversed.status == .ok)
        }
        let restored = await registry.invoke(SkillInvocation(skill: "notes_list")).result?.arrayValue?.compactMap {
            $0["title"]?.stringValue
        }
        #expect(restored == ["milk", "oat milk", "eggs"])
    }

    @Test func aFailingStepStopsItAndWhatRanBeforeIsUndone() async throws {
        let registry = try registry()
        _ = try load(
            registry, "add_then_fail",
            """
            {"id": "add_then_fail", "description": "Adds a note, then computes.",
             "input_schema": {"type": "object", "properties": {"expr": {"type": "string"}}},
             "steps": [
               {"call": "notes_add", "with": {"title": "draft"}, "as": "note"},
               {"call": "calculator", "with": {"expression": "${input.expr}"}},
               {"call": "fail"}]}
            """
        ).get()
        let outcome = await registry.invoke(SkillInvocation(skill: "add_then_fail", arguments: ["expr": "1+"]))
        #expect(outcome.status == .error)
        #expect(
            outcome.error?.hasPrefix(
                "add_then_fail stopped at step 2 of 3 (calculator): ") == true, "\(outcome.error ?? "")")
        #expect(
            outcome.error?.hasSuffix("; the change (notes_add) made before it was undone") == true,
            "\(outcome.error ?? "")")
        let notes = await registry.invoke(SkillInvocation(skill: "notes_list")).result
        #expect(notes == [])

        let failing = await registry.invoke(SkillInvocation(skill: "add_then_fail", arguments: ["expr": "1+2"]))
        #expect(
            failing.error
                == "add_then_fail stopped at step 3 of 3 (fail): the disk is full; the change (notes_add) made before "
                + "it was undone")
    }

    @Test func changesWithoutAnUndoAreReportedNotUndone() async throws {
        let registry = try registry()
        _ = try load(
            registry, "touch_then_fail",
            """
            {"id": "touch_then_fail", "description": "Touches twice and fails.",
             "steps": [{"call": "undoable"}, {"call": "touch"}, {"call": "touch"}, {"call": "fail"}]}
            """
        ).get()
        let outcome = await registry.invoke(SkillInvocation(skill: "touch_then_fail"))
        #expect(
            outcome.error
                == "touch_then_fail stopped at step 4 of 4 (fail): the disk is full; 3 changes (undoable, touch ×2) had "
                + "been made and were not undone: touch ×2 registered no undo")
        #expect(outcome.undo == nil)

        let readOnly = try load(
            registry, "read_then_fail",
            #"{"id": "read_then_fail", "description": "x", "steps": [{"call": "echo"}, {"call": "fail"}]}"#)
        #expect(throws: Never.self) { try readOnly.get() }
        let nothing = await registry.invoke(SkillInvocation(skill: "read_then_fail"))
        #expect(
            nothing.error == "read_then_fail stopped at step 2 of 2 (fail): the disk is full; nothing had been changed")
    }

    @Test func argumentsThatNeedOnlyTheInputAreCheckedBeforeAnythingRuns() async throws {
        let registry = try registry()
        _ = try load(
            registry, "add_two",
            """
            {"id": "add_two", "description": "Adds two notes.",
             "input_schema": {"type": "object", "properties": {"a": {}, "b": {}}},
             "steps": [{"call": "notes_add", "with": {"title": "${input.a}"}},
                       {"call": "notes_add", "with": {"title": "${input.b}"}}]}
            """
        ).get()
        let outcome = await registry.invoke(SkillInvocation(skill: "add_two", arguments: ["a": "x", "b": 7]))
        #expect(outcome.status == .invalidArgs)
        #expect(
            outcome.error
                == "add_two did not run: step 2 (notes_add) would get invalid arguments: $.title: expected string, got "
                + "integer")
        #expect(await registry.invoke(SkillInvocation(skill: "notes_list")).result == [])
    }

    @Test func referencesThatFindNothingNameWhatIsMissing() async throws {
        let registry = try registry()
        _ = try load(
            registry, "first_title",
            """
            {"id": "first_title", "description": "The first match's title.",
             "input_schema": {"type": "object", "properties": {"q": {"type": "string"}}},
             "steps": [{"call": "notes_search", "with": {"query": "${input.q}"}, "as": "found"},
                       {"result": "${found.0.title}"}]}
            """
        ).get()
        let outcome = await registry.invoke(SkillInvocation(skill: "first_title", arguments: ["q": "nothing"]))
        #expect(
            outcome.error
                == "first_title stopped at step 2 of 2 (result): ${found.0.title}: found has 0 elements, none at 0; "
                + "nothing had been changed")
    }

    /// Time is the test's (an injected clock): the deadline falls while step 2 runs, however busy the machine is.
    @Test func theDeadlineCoversTheWholeCompositeAndCancellationStopsTheStep() async throws {
        let clock = ManualClock()
        let registry = try registry(clock: clock)
        _ = try load(
            registry, "slow",
            """
            {"id": "slow", "description": "Waits too long.", "timeout_ms": 2000,
             "steps": [{"call": "undoable"}, {"call": "cooperative", "with": {"ms": 600000}}, {"call": "echo"}]}
            """
        ).get()
        let busy = {
            let s = registry.poolStatistics
            return s.liveThreads - s.idleThreads
        }
        let finished = Mutex<SkillOutcome?>(nil)
        let reached = Mutex<[String]>([])
        _ = registry.start(
            SkillInvocation(
                skill: "slow", onProgress: { report in reached.withLock { $0.append(report.message ?? "") } })
        ) { outcome in finished.withLock { $0 = outcome } }
        // Step 1 is over once step 2 is announced; step 2's call then runs under its own deadline timer.
        #expect(await eventually { reached.withLock { $0.contains("step 2 of 3: cooperative") } })
        #expect(await eventually { busy() == 1 && clock.pendingTimers > 0 }, "step 2 runs under its deadline")
        clock.advance(by: .seconds(2))
        #expect(await eventually { finished.withLock { $0 } != nil })
        let outcome = try #require(finished.withLock { $0 })
        #expect(outcome.status == .timeout)
        #expect(
            outcome.error
                == "slow timed out after 2 s at step 2 of 3 (cooperative); the change (undoable) made before it was "
                + "not undone (the deadline had passed); /undo reverses it")
        #expect(outcome.undo?.skillID == "echo")

        _ = try load(
            registry, "long",
            #"{"id": "long", "description": "Waits.", "steps": [{"call": "cooperative", "with": {"ms": 600000}}]}"#)
        let ended = Mutex<SkillOutcome?>(nil)
        #expect(await eventually { busy() == 0 }, "step 2 of the first composite returned")
        let handle = registry.start(SkillInvocation(skill: "long")) { outcome in ended.withLock { $0 = outcome } }
        #expect(await eventually { busy() == 1 })
        handle.cancel()
        #expect(await eventually { ended.withLock { $0 } != nil })
        #expect(ended.withLock { $0?.status } == .cancelled)
        #expect(await eventually { busy() == 0 })
    }

    /// A step may call a tool of an MCP server like any skill (here an external skill registered in-process).
    @Test func aStepCallsAnExternalTool() async throws {
        let registry = try registry()
        let info = SkillInfo(
            id: "remote_upper", title: "Upper", description: "Upper-cases text.", plugin: "remote", pluginVersion: "1",
            file: "mcp", risk: .readOnly, flags: [], timeout: nil,
            inputSchema: ["type": "object", "properties": ["text": ["type": "string"]], "required": ["text"]],
            schemaIsGenerated: false, kind: .external)
        registry.registerExternal(
            source: "remote", version: "1", description: "a server", location: "mcp",
            skills: [
                ExternalSkill(info: info) { arguments in
                    SkillOutcome.success(.string(arguments["text"]?.stringValue?.uppercased() ?? ""))
                }
            ])
        _ = try load(
            registry, "shout",
            #"{"id": "shout", "description": "Shouts.", "input_schema": {"type": "object", "properties": {"text": {"type": "string"}}}, "steps": [{"call": "remote_upper", "with": {"text": "${input.text}"}, "as": "loud"}, {"result": "${loud}!"}]}"#
        ).get()
        let outcome = await registry.invoke(SkillInvocation(skill: "shout", arguments: ["text": "hi there"]))
        #expect(outcome.result == "HI THERE!")
        #expect(registry.skill("shout")?.risk == .readOnly)
    }

    /// What a run keeps is bounded like a result: a for_each's results, and a result a template builds.
    @Test func whatARunKeepsIsBounded() async throws {
        let registry = try makeRegistry("bounded-data") { configuration in
            configuration.resultLimit = 2_000
            configuration.defaultTimeout = .seconds(600)  // a loaded machine is slow, never wrong
        }
        _ = try registry.load(file: try Fixture.compileFile("behaviours.c", into: folder)).get()
        _ = try load(
            registry, "echo_all",
            #"{"id": "echo_all", "description": "x", "input_schema": {"type": "object", "properties": {"items": {"type": "array"}}}, "steps": [{"for_each": "${input.items}", "call": "echo", "with": {"text": "${item}"}}]}"#
        ).get()
        let items = JSONValue.array((0..<40).map { _ in .string(String(repeating: "x", count: 500)) })
        let outcome = await registry.invoke(SkillInvocation(skill: "echo_all", arguments: ["items": items]))
        #expect(
            outcome.error?.hasPrefix("echo_all stopped at step 1 of 1 (echo): the results of its ") == true,
            "\(outcome.error ?? "")")
        #expect(outcome.error?.contains("calls so far are over 2.0 KB (max_result_mb in config.json)") == true)
        _ = try load(
            registry, "repeat",
            #"{"id": "repeat", "description": "x", "input_schema": {"type": "object", "properties": {"t": {"type": "string"}}}, "steps": [{"result": ["${input.t}", "${input.t}", "${input.t}"]}]}"#
        ).get()
        let repeated = await registry.invoke(
            SkillInvocation(skill: "repeat", arguments: ["t": .string(String(repeating: "y", count: 900))]))
        #expect(repeated.error?.hasSuffix("(result): its result is over 2.0 KB (max_result_mb in config.json)") == true)
        #expect(CompositeRun.size(of: ["a": [1, "bc"]], upTo: 100) == 2 + 5 + 2 + 2 + 8 + 4)
        registry.shutdown()
    }

    // MARK: Risk and policy

    @Test func riskIsTheHighestOfItsStepsAndFollowsThemWhenTheyChange() async throws {
        let registry = try registry()
        _ = try load(
            registry, "clean_up",
            #"{"id": "clean_up", "description": "x", "steps": [{"call": "echo"}, {"call": "later_skill"}]}"#)
        // A step whose skill is not registered counts as destructive, and the call says what is missing.
        #expect(registry.skill("clean_up")?.risk == .destructive)
        let missing = await registry.invoke(SkillInvocation(skill: "clean_up", confirmer: .confirmed))
        #expect(missing.error?.hasPrefix("clean_up did not run: it calls later_skill, which is not registered") == true)

        _ = try load(registry, "later", #"{"id": "later_skill", "description": "x", "steps": [{"call": "touch"}]}"#)
        #expect(registry.skill("clean_up")?.risk == .mutating)
        guard let plan = registry.skill("clean_up")?.kind.compositePlan else {
            Issue.record("not a composite")
            return
        }
        #expect(plan.calls == ["echo", "later_skill", "touch"])
        #expect(plan.lines == ["1. echo()", "2. later_skill()"])

        _ = try load(
            registry, "wipe_then_echo",
            #"{"id": "wipe_then_echo", "description": "x", "steps": [{"call": "wipe_all"}, {"call": "echo"}]}"#)
        #expect(registry.skill("wipe_then_echo")?.risk == .destructive)
        let refused = await registry.invoke(SkillInvocation(skill: "wipe_then_echo"))
        #expect(refused.code == .notPermitted)
        #expect(
            refused.error
                == "not run: wipe_then_echo is destructive and there is no one to confirm it (allow it with a rule in "
                + "the configuration)")
        // Asked once, with the whole plan; its steps then run without asking again.
        let asked = Mutex<[String]>([])
        let confirmer = Confirmer.person { skill, _ in
            asked.withLock { $0.append(skill.id) }
            return .allowOnce
        }
        let confirmed = await registry.invoke(SkillInvocation(skill: "wipe_then_echo", confirmer: confirmer))
        #expect(confirmed.status == .ok)
        #expect(asked.withLock { $0 } == ["wipe_then_echo"])
    }

    @Test func theStepsRulesApplyToTheComposite() async throws {
        let registry = try registry(policy: Policy(rules: [PolicyRule("wipe_*", .deny), PolicyRule("echo", .ask)]))
        _ = try load(
            registry, "echo_twice",
            #"{"id": "echo_twice", "description": "x", "steps": [{"call": "echo"}, {"call": "echo"}]}"#)
        _ = try load(
            registry, "outer", #"{"id": "outer", "description": "x", "steps": [{"call": "inner"}]}"#)
        _ = try load(registry, "inner", #"{"id": "inner", "description": "x", "steps": [{"call": "wipe_all"}]}"#)
        let denied = await registry.invoke(SkillInvocation(skill: "outer", confirmer: .confirmed))
        #expect(
            denied.error
                == "not run: outer calls wipe_all, and calls to wipe_all are denied by the configuration (policy rule "
                + "\"wipe_*\": \"deny\")")
        // An ask rule for a step makes the read-only composite ask.
        let unasked = await registry.invoke(SkillInvocation(skill: "echo_twice"))
        #expect(unasked.code == .notPermitted)
        let yes = await registry.invoke(
            SkillInvocation(skill: "echo_twice", confirmer: .person { _, _ in .allowOnce }))
        #expect(yes.status == .ok)
    }

    // MARK: Loading

    @Test func cyclesAreRefusedWithTheCycleNamed() throws {
        let registry = try registry()
        _ = try load(registry, "a", #"{"id": "cycle_a", "description": "x", "steps": [{"call": "cycle_b"}]}"#).get()
        _ = try load(registry, "b", #"{"id": "cycle_b", "description": "x", "steps": [{"call": "cycle_c"}]}"#).get()
        let closing = try load(
            registry, "c", #"{"id": "cycle_c", "description": "x", "steps": [{"call": "cycle_a"}]}"#)
        #expect(throws: PluginLoadError.self) { try closing.get() }
        if case .failure(let error) = closing {
            #expect(
                error.description
                    == "c.skill.json: its steps make a cycle of composite skills calling each other: cycle_c → cycle_a "
                    + "→ cycle_b → cycle_c; remove one of the calls")
        }
        #expect(registry.skill("cycle_c") == nil)
    }

    @Test func everyProblemInAFileIsOneSentence() throws {
        let registry = try registry()
        let result = try load(
            registry, "broken",
            """
            {"id": "Broken", "descripton": "x", "risk": "high", "timeout_ms": 0,
             "input_schema": {"type": "array"},
             "steps": [{"call": "echo", "with": {"x": "${found}"}, "as": "input"},
                       {"for_each": "a ${input}", "call": "echo", "with": "x"},
                       {"result": 1}, {"call": "echo", "with": {"y": "${item"}, "stepp": 1}]}
            """)
        guard case .failure(let error) = result else {
            Issue.record("loaded")
            return
        }
        #expect(
            error.problems.map(\.description) == [
                "has an unknown key \"descripton\" (did you mean \"description\"?)",
                "\"id\" \"Broken\" is invalid; use a-z, 0-9 and _, starting with a letter (at most 64)",
                "has no \"description\"; say what the skill does, for the model",
                "\"input_schema\" must be an object schema (\"type\": \"object\")",
                "\"risk\" must be \"read-only\", \"mutating\" or \"destructive\", not \"high\"",
                "\"timeout_ms\" must be a whole number of milliseconds from 1 to 3600000",
                "step 1: \"as\" must be a name of a-z, 0-9 and _ other than input, item and index, not \"input\"",
                "step 1 \"with\": ${found} names \"found\", which no earlier step defines with \"as\"",
                "step 2: \"for_each\" must be one reference to an array, like \"${found}\", not \"a ${input}\"",
                "step 2: \"with\" must be an object of the arguments, not \"x\"",
                "step 3: \"result\" must be the last step",
                "step 4 has an unknown key \"stepp\"",
                "step 4 \"with\": \"${item\" has \"${\" without a closing \"}\"",
            ])
    }

    @Test func aBrokenReplacementKeepsTheOldVersion() async throws {
        let registry = try registry()
        let changes = registry.changes()
        let file = try write("swap", #"{"id": "swap", "description": "v1", "steps": [{"call": "echo"}]}"#)
        _ = try registry.load(file: file).get()
        try #"{"id": "swap", "description": "v2", "steps": [{"call": 7}]}"#.write(
            toFile: file, atomically: true, encoding: .utf8)
        #expect(throws: PluginLoadError.self) { try registry.load(file: file).get() }
        #expect(registry.skill("swap")?.description == "v1")
        try #"{"id": "swap", "version": "2.0.0", "description": "v2", "steps": [{"call": "echo"}]}"#.write(
            toFile: file, atomically: true, encoding: .utf8)
        _ = try registry.load(file: file).get()
        #expect(registry.skill("swap")?.description == "v2")
        registry.unload(file: file)
        #expect(registry.skill("swap") == nil)
        var lines: [String] = []
        for await change in changes {
            lines.append(change.line)
            if lines.count == 4 { break }
        }
        #expect(
            lines == [
                "+ swap 1.0.0: 1 skill added (swap)", "! swap.skill.json: step 1: \"call\" 7 is not a skill id",
                "~ swap 1.0.0 → 2.0.0: 1 updated", "- swap 2.0.0: 1 skill removed (swap)",
            ])
    }

    @Test func anIDTakenByAPluginIsRefused() throws {
        let registry = try registry()
        let result = try load(registry, "echo", #"{"id": "echo", "description": "x", "steps": [{"call": "fail"}]}"#)
        guard case .failure(let error) = result else {
            Issue.record("loaded")
            return
        }
        #expect(
            error.description
                == "echo.skill.json: skill id \"echo\" is already provided by plugin \"behaviours\"; rename one of them"
        )
    }

    // MARK: Substitution

    @Test func referencesKeepTheirTypeAloneAndBecomeTextInsideText() throws {
        let scope = CompositeScope(
            input: ["n": 3, "tags": ["a", "b"], "o": ["k/1": "slash", "length": 9]],
            bound: ["found": [["id": 1, "title": "milk"]]])
        func evaluate(_ value: JSONValue) throws -> JSONValue {
            try CompositeTemplate(value, where: "test").evaluate(in: scope)
        }
        #expect(try evaluate("${input.n}") == 3)
        #expect(try evaluate("${input.tags}") == ["a", "b"])
        #expect(try evaluate("${input.tags.length}") == 2)
        #expect(try evaluate("${input.o.length}") == 9)
        #expect(try evaluate("${input/o/k~11}") == "slash")
        #expect(try evaluate("${found/0/title}") == "milk")
        #expect(
            try evaluate("n=${input.n}, tags=${input.tags}, t=${found.0.title}") == "n=3, tags=[\"a\",\"b\"], t=milk")
        #expect(try evaluate(["deep": ["${input.n}", "$${x}", "$5"]]) == ["deep": [3, "${x}", "$5"]])
        #expect(throws: CompositeError.self) { try evaluate("${input.missing}") }
    }
}
