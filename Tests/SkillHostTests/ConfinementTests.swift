import CProcess
import Foundation
import Synchronization
import TestSupport
import Testing

@testable import SkillHost
@testable import SkillJSON

/// The escape suite: a plugin compiled here (Fixtures/escape.c) tries, from a real confined worker, what a
/// stranger's plugin must not do. Each attempt fails with a sentence, and the host, other plugins and the same
/// plugin's next call carry on. Then the positive side: what it declares or is granted, it may.
@Suite(.serialized)
struct ConfinementTests {
    /// A registry whose plugins all run in confined worker processes, with `rules`.
    final class Host: Sendable {
        let registry: SkillRegistry

        init(rules: ConfinementRules = ConfinementRules()) throws {
            var configuration = SkillRegistry.Configuration(
                dataDirectory: URL(fileURLWithPath: Paths.temporaryDirectory("confinement-data")))
            configuration.defaultTimeout = .seconds(60)
            var isolation = IsolationSettings(executable: Paths.skillhost) { _, _ in .process }
            isolation.rules = rules
            isolation.startTimeout = .seconds(120)  // a busy machine's start; no test here is about its deadline
            configuration.isolation = isolation
            registry = try SkillRegistry(configuration: configuration)
        }

        func call(_ skill: String, _ arguments: JSONValue = .object(JSONObject())) async -> SkillOutcome {
            await registry.invoke(SkillInvocation(skill: skill, arguments: arguments))
        }

        func plugin(_ name: String) -> PluginSummary? { registry.plugins.first { $0.name == name } }

        /// Compiles (with `make`) and loads a plugin off the cooperative pool: `cc` and a worker's start block for
        /// a while on a busy machine, and the pool's few threads are other tests' timers and readers.
        @discardableResult
        func load(_ make: @escaping @Sendable () throws -> String) async throws -> PluginSummary {
            try await Self.load(registry, make).get()
        }

        static func load(_ registry: SkillRegistry, _ make: @escaping @Sendable () throws -> String) async throws
            -> Result<PluginSummary, PluginLoadError>
        {
            try await offPool { registry.load(file: try make()) }
        }

        deinit { registry.shutdown() }
    }

    /// escape.c as plugin `name` with `capabilities` (a C expression) and, if given, one declared read path.
    static func escape(
        _ name: String = "escape", capabilities: String = "0", readPath: String? = nil
    ) throws -> String {
        let source = try String(contentsOfFile: Paths.fixtures + "/escape.c", encoding: .utf8)
            .replacingOccurrences(of: "@NAME@", with: name)
            .replacingOccurrences(of: "@CAPS@", with: capabilities)
            .replacingOccurrences(of: "@READ_PATHS@", with: readPath.map { "\"\($0)\"," } ?? "")
        return try Fixture.compile(source, name: name, into: Paths.temporaryDirectory("confinement-\(name)"))
    }

    /// The sentence for a call the filter blocked, as the host gives it.
    static func blocked(_ what: String, needs capability: String, reported: String) -> String {
        "escape: \(what) was blocked (the plugin does not declare \(capability); grant it with "
            + "\"isolation.grant.escape\": [\"\(capability)\"]); it reported: \(reported)"
    }

    static let fileHint =
        "(the plugin is confined: it may read system files, write only its data dir and signal only its own "
        + "processes; grant a folder with \"isolation.grant.escape\": [\"read:<folder>\"])"

    @Test func filesOutsideItsDataDirAreOutOfReach() async throws {
        let home = Paths.temporaryDirectory("confinement-home")
        try FileManager.default.createDirectory(atPath: home + "/.ssh", withIntermediateDirectories: true)
        try "-----BEGIN OPENSSH PRIVATE KEY-----".write(
            toFile: home + "/.ssh/id_rsa", atomically: true, encoding: .utf8)
        try "# bashrc\n".write(toFile: home + "/.bashrc", atomically: true, encoding: .utf8)
        let host = try Host()
        try await host.load { try Self.escape() }

        let key = await host.call("escape_read", ["path": .string(home + "/.ssh/id_rsa")])
        #expect(key.status == .error)
        #expect(key.error == "open \(home)/.ssh/id_rsa: Permission denied \(Self.fileHint)")
        let bashrc = await host.call("escape_write", ["path": .string(home + "/.bashrc")])
        #expect(bashrc.error == "open \(home)/.bashrc for writing: Permission denied \(Self.fileHint)")
        #expect(try String(contentsOfFile: home + "/.bashrc", encoding: .utf8) == "# bashrc\n")
        let loose = "/tmp/skillhost-escape-\(UUID().uuidString.prefix(8))"
        let temporary = await host.call("escape_write", ["path": .string(loose)])
        #expect(temporary.error == "open \(loose) for writing: Permission denied \(Self.fileHint)")
        #expect(!FileManager.default.fileExists(atPath: loose))
        let memory = await host.call("escape_proc_mem", ["pid": .int(Int64(getpid()))])
        #expect(memory.error == "open /proc/\(getpid())/mem: Permission denied \(Self.fileHint)")

        // What it may touch: system files, and its data dir (which a skill finds as data_dir).
        let system = await host.call("escape_read", ["path": "/etc/passwd"])
        #expect(system.status == .ok, "\(system.error ?? "")")
        let data = host.registry.configuration.dataDirectory.appendingPathComponent("escape/state").path
        #expect(await host.call("escape_write", ["path": .string(data)]).status == .ok)
        #expect(FileManager.default.fileExists(atPath: data))
        #expect(await host.call("escape_read", ["path": .string(data)]).result?["content"] == "escaped_")
    }

    @Test func noNetworkWithoutTheCapability() async throws {
        let listener = try LoopbackListener()
        let host = try Host()
        try await host.load { try Self.escape() }
        let connect = await host.call("escape_connect", ["port": .int(Int64(listener.port))])
        #expect(
            connect.error
                == Self.blocked(
                    "socket() of an IPv4 socket", needs: "network", reported: "socket: Operation not permitted"))
        let bind = await host.call("escape_bind")
        #expect(
            bind.error
                == Self.blocked(
                    "socket() of an IPv4 socket", needs: "network", reported: "socket: Operation not permitted"))
        #expect(listener.connections == 0)
        // The same plugin's next call works.
        #expect(await host.call("escape_env", ["name": "PATH"]).result?["set"] == true)
    }

    @Test func noProgramsNoProcessesAndNoTracing() async throws {
        let host = try Host()
        try await host.load { try Self.escape() }
        let shell = await host.call("escape_exec")
        #expect(
            shell.error
                == Self.blocked(
                    "execve() of /bin/sh", needs: "exec", reported: "execve /bin/sh: Operation not permitted"))
        let bomb = await host.call("escape_fork_bomb")
        #expect(
            bomb.error
                == Self.blocked("clone() to start a process", needs: "exec", reported: "fork: Operation not permitted"))
        let daemon = await host.call("escape_daemon")
        #expect(daemon.error?.hasPrefix("escape: clone() to start a process was blocked") == true)
        let trace = await host.call("escape_ptrace")
        #expect(
            trace.error
                == "escape: ptrace() was blocked (no plugin may do that); it reported: ptrace(PTRACE_ATTACH) of the "
                + "host: Operation not permitted")
        #expect(await host.call("escape_env", ["name": "PATH"]).status == .ok)
    }

    /// Holes found by reading the filter (issue #28), each from a plugin that declares nothing: System V IPC of
    /// other processes, UNIX datagrams to any socket file (a SOCK_RAW socket or a datagram socketpair, then
    /// sendmsg), and a process started through posix_spawn — which used to kill the worker with no last words.
    @Test func holesFoundByReadingTheFilterAreClosed() async throws {
        let host = try Host()
        try await host.load { try Self.escape() }
        let shm = await host.call("escape_shm")
        #expect(
            shm.error
                == "escape: shmget() was blocked (no plugin may do that); it reported: shmget: Operation not permitted")

        // A socket file outside the jail, owned by the test: nothing may reach it.
        let receiver = try UnixDatagramReceiver()
        let path = receiver.path
        let raw = await host.call("escape_unix_datagram", ["path": .string(path)])
        #expect(
            raw.error
                == Self.blocked(
                    "socket() of an UNIX datagram socket", needs: "network", reported: "socket: Operation not permitted"
                ))
        let pair = await host.call("escape_unix_datagram", ["path": .string(path), "pair": true])
        #expect(
            pair.error
                == Self.blocked(
                    "socketpair() of UNIX datagram sockets", needs: "network",
                    reported: "socketpair: Operation not permitted"))
        #expect(!receiver.received, "no datagram arrived")

        let spawn = await host.call("escape_spawn")
        #expect(
            spawn.error
                == "posix_spawn /bin/true: Operation not permitted (the plugin is confined and does not declare "
                + "exec: it may start no program or process; grant it with \"isolation.grant.escape\": [\"exec\"])")
        #expect(await host.call("escape_env", ["name": "PATH"]).status == .ok, "the worker lives on")
    }

    /// No grant gives a plugin new namespaces: a plugin that may run programs still cannot clone into them.
    @Test func evenWithExecNoNewNamespaces() async throws {
        let host = try Host()
        try await host.load { try Self.escape("escape", capabilities: "SKILL_CAP_EXEC") }
        let namespace = await host.call("escape_clone_namespace")
        #expect(
            namespace.error
                == "escape: clone() into new namespaces was blocked (no plugin may do that); it reported: "
                + "clone(CLONE_NEWUSER): Operation not permitted")
    }

    @Test func noSignalsToTheHostOrAnyOtherProcess() async throws {
        let sibling = Process()
        sibling.executableURL = URL(fileURLWithPath: "/bin/sleep")
        sibling.arguments = ["60"]
        try launch(sibling)
        defer { sibling.terminate() }
        let host = try Host()
        try await host.load { try Self.escape() }
        let parent = await host.call("escape_kill")
        #expect(parent.error == "kill(\(getpid())): Operation not permitted \(Self.fileHint)")
        let other = await host.call("escape_kill", ["pid": .int(Int64(sibling.processIdentifier))])
        #expect(other.error == "kill(\(sibling.processIdentifier)): Operation not permitted \(Self.fileHint)")
        #expect(sibling.isRunning)
    }

    /// Started by root (as CI runs), a worker still has no capability at all.
    @Test func noCapabilitiesEvenForRoot() async throws {
        let host = try Host()
        try await host.load { try Self.escape() }
        let capabilities = await host.call("escape_capabilities")
        #expect(capabilities.result?["effective"] == "0000000000000000", "\(String(describing: capabilities.result))")
    }

    @Test func noSecretsInItsEnvironment() async throws {
        setenv("SKILLHOST_CONFINEMENT_SECRET", "sk-planted", 1)
        defer { unsetenv("SKILLHOST_CONFINEMENT_SECRET") }
        let host = try Host()
        try await host.load { try Self.escape() }
        #expect(await host.call("escape_env", ["name": "SKILLHOST_CONFINEMENT_SECRET"]).result?["set"] == false)
    }

    @Test func whatItDeclaresItMay() async throws {
        let listener = try LoopbackListener()
        let folder = Paths.temporaryDirectory("confinement-models")
        try "weights".write(toFile: folder + "/model.bin", atomically: true, encoding: .utf8)
        let host = try Host()
        try await host.load { try Self.escape("reach", capabilities: "SKILL_CAP_NETWORK", readPath: folder) }
        let connect = await host.call("reach_connect", ["port": .int(Int64(listener.port))])
        #expect(connect.result?["read"] == "hello", "\(connect.error ?? "")")
        #expect(await host.call("reach_bind").status == .ok)
        #expect(await host.call("reach_read", ["path": .string(folder + "/model.bin")]).result?["content"] == "weights")
        // Reading is not writing, and the folder's neighbours stay out of reach.
        #expect(await host.call("reach_write", ["path": .string(folder + "/model.bin")]).status == .error)
        let summary = try #require(host.plugin("reach"))
        #expect(
            summary.placementText
                == "process · confined: network, no programs, reads system files + 1 folder, writes its data dir")
    }

    /// A worker restarted for the same copy is given the declaration the first one learnt, instead of a peek's
    /// process, and is confined exactly as the first: what the plugin declares it may, the rest it still may not.
    @Test func aRestartedWorkerIsConfinedAsTheFirstWithoutAPeek() async throws {
        let listener = try LoopbackListener()
        let folder = Paths.temporaryDirectory("confinement-restart")
        try "weights".write(toFile: folder + "/model.bin", atomically: true, encoding: .utf8)
        let host = try Host()
        try await host.load { try Self.escape("reach", capabilities: "SKILL_CAP_NETWORK", readPath: folder) }
        guard case .isolated(let plugin)? = host.registry.catalog.plugin(named: "reach")?.image else {
            Issue.record("reach does not run in a worker")
            return
        }
        #expect(plugin.lastStartPeeked, "the first worker learns the declaration from a peek")
        let placement = host.plugin("reach")?.placementText
        let first = try #require(plugin.workerPID)
        #expect(kill(first, SIGKILL) == 0)
        var restarted = false
        for _ in 0..<200 where !restarted {
            _ = await host.call("reach_env", ["name": "PATH"])
            restarted = plugin.workerPID.map { $0 != first } ?? false
        }
        #expect(restarted, "a new worker answers")
        #expect(!plugin.lastStartPeeked, "the restarted worker was given the declaration")
        let connect = await host.call("reach_connect", ["port": .int(Int64(listener.port))])
        #expect(connect.result?["read"] == "hello", "\(connect.error ?? "")")
        #expect(await host.call("reach_read", ["path": .string(folder + "/model.bin")]).result?["content"] == "weights")
        #expect(await host.call("reach_write", ["path": .string(folder + "/model.bin")]).status == .error)
        let outside = Paths.temporaryDirectory("confinement-restart-outside") + "/secret"
        try "secret".write(toFile: outside, atomically: true, encoding: .utf8)
        #expect(await host.call("reach_read", ["path": .string(outside)]).status == .error)
        let data = host.registry.configuration.dataDirectory.appendingPathComponent("reach/state").path
        #expect(await host.call("reach_write", ["path": .string(data)]).status == .ok)
        #expect(host.plugin("reach")?.placementText == placement)
    }

    /// The declaration travels on the worker's command line as the worker reads it back; one it cannot read
    /// makes the whole command line unreadable, and a name that is not a plugin's is no declaration.
    @Test func aDeclarationRoundTripsOnTheWorkersCommandLine() throws {
        var launch = WorkerLaunch(
            file: "/p/reach.so", copy: "/t/1-reach.so", dataDirectory: "/d", limits: WorkerLimits(), resultLimit: 1024)
        launch.declared = PluginDeclaration(name: "reach", capabilities: 0x1 | 0x8000_0000, readPaths: ["/m", "rel"])
        #expect(launch.declared?.readPaths == ["/m"], "a relative read path is dropped")
        #expect(launch.declared?.capabilities == PluginCapabilities(rawValue: 0x1), "unknown bits are dropped")
        launch.takenNames = ["notes": "/b/libskill-notes.so", "clock": "/b/libskill-clock.so"]
        #expect(WorkerLaunch(arguments: launch.arguments) == launch)
        var broken = launch.arguments
        if let index = broken.firstIndex(of: "--declared") {
            broken[index + 1] = #"{"name":"../x","capabilities":0,"read_paths":[]}"#
        }
        #expect(WorkerLaunch(arguments: broken) == nil)
        #expect(PluginDeclaration(name: "../x", capabilities: 0, readPaths: []) == nil)
    }

    /// The host's preparation (system paths, compiled filter) reads back from the arguments it makes, byte for
    /// byte; a filter of an odd or non-hex length is no preparation.
    @Test func thePreparationRoundTripsOnTheCommandLine() throws {
        let prepared = WorkerPreparation(
            paths: WorkerConfinement.Paths(execute: ["/usr", "/opt/x y"], read: ["/etc/\"q\""]),
            filter: [0x00, 0x0F, 0xA5, 0xFF, 0x10])
        #expect(prepared.arguments[3] == "000fa5ff10")
        #expect(WorkerPreparation(paths: prepared.arguments[1], filter: prepared.arguments[3]) == prepared)
        #expect(WorkerPreparation(paths: prepared.arguments[1], filter: "0fa") == nil)
        #expect(WorkerPreparation(paths: prepared.arguments[1], filter: "0g") == nil)
    }

    /// A declared read path that holds the home folder is shown for what it is, not as "+ 1 folder".
    @Test func aReadPathOverTheHomeFolderIsShownAsAllYourFiles() async throws {
        let host = try Host()
        try await host.load { try Self.escape(readPath: "~") }
        #expect(
            host.plugin("escape")?.placementText
                == "process · confined: no network, no programs, reads all your files, writes its data dir")
    }

    @Test func grantsWidenAndDenialsNarrowWhatItDeclares() async throws {
        let listener = try LoopbackListener()
        let folder = Paths.temporaryDirectory("confinement-granted")
        try "granted".write(toFile: folder + "/note.txt", atomically: true, encoding: .utf8)
        var rules = ConfinementRules()
        rules.grants["escape"] = [.read(folder), .capability(.runPrograms)]
        rules.denials["reach"] = [.capability(.network)]
        let host = try Host(rules: rules)
        try await host.load { try Self.escape() }
        try await host.load { try Self.escape("reach", capabilities: "SKILL_CAP_NETWORK") }
        #expect(await host.call("escape_read", ["path": .string(folder + "/note.txt")]).result?["content"] == "granted")
        #expect(await host.call("escape_fork_bomb", ["limit": 3]).status == .ok)
        let denied = await host.call("reach_connect", ["port": .int(Int64(listener.port))])
        #expect(denied.error?.hasPrefix("reach: socket() of an IPv4 socket was blocked") == true)
        #expect(
            host.plugin("escape")?.placementText
                == "process · confined: no network, runs programs, reads system files + 1 folder, writes its data dir; "
                + "granted beyond its declaration: run-programs")
        #expect(
            host.plugin("reach")?.placementText
                == "process · confined: no network, no programs, reads system files, writes its data dir; declared but "
                + "denied: network")
    }

    /// With programs granted, a grandchild in a session of its own still ends with the plugin's worker.
    @Test func aDaemonDoesNotOutliveTheHost() async throws {
        var rules = ConfinementRules()
        rules.grants["escape"] = [.capability(.runPrograms)]
        var host: Host? = try Host(rules: rules)
        try await host?.load { try Self.escape() }
        let started = await host?.call("escape_daemon")
        let pid = try #require(started?.result?["pid"]?.doubleValue.map { pid_t($0) }, "\(started?.error ?? "")")
        #expect(kill(pid, 0) == 0)
        host = nil
        let gone = await eventually { kill(pid, 0) != 0 }
        if !gone { kill(pid, SIGKILL) }
        #expect(gone, "the daemon was stopped with its worker")
    }

    /// C source of one skill, `<prefix>_ok`, that answers 1: the array `skills`, for a plugin written in a test.
    static func okSkill(_ prefix: String) -> String {
        """
        static int ok(void *s, const skill_call_api *api, skill_call *call, const char *args) {
            (void)s, (void)args;
            api->set_result(call, "1", 1);
            return SKILL_OK;
        }
        static const skill_descriptor skills[] = {
            SKILL_JSON("\(prefix)_ok", "OK", "OK.", "{\\"type\\":\\"object\\"}", SKILL_RISK_READ_ONLY, 0, ok),
        };
        """
    }

    /// The peek's plugin name names the data directory the worker creates: "../x" must not make a folder outside.
    @Test func aHostileNameMakesNoFolderOutsideTheDataDirectory() async throws {
        let marker = "pwned-\(UUID().uuidString.prefix(8).lowercased())"
        let source = """
            #include "skill_sdk.h"
            \(Self.okSkill("hostile"))
            SKILL_PLUGIN("../\(marker)", "1.0.0", "Hostile name", skills)
            """
        let host = try Host()
        let loaded = try await Host.load(host.registry) {
            try Fixture.compile(source, name: "hostile", into: Paths.temporaryDirectory("confinement-hostile"))
        }
        guard case .failure(let error) = loaded else {
            Issue.record("a plugin named ../\(marker) loaded")
            return
        }
        #expect(error.problems.map(\.description).joined().contains("name"), "\(error.problems)")
        let outside = host.registry.configuration.dataDirectory.deletingLastPathComponent().appendingPathComponent(
            marker)
        #expect(!FileManager.default.fileExists(atPath: outside.path))
    }

    /// The peek's child reads its own /proc/self files (opened beneath its own /proc directory, not its parent's):
    /// this plugin declares the network when its entry cannot read its own pid there — which the peek would report.
    @Test func thePeekReadsItsOwnProcessFiles() async throws {
        let source = """
            #include "skill_sdk.h"
            #include <stdio.h>
            #include <stdlib.h>
            #include <string.h>
            #include <unistd.h>
            \(Self.okSkill("ownproc"))
            static uint32_t needs(void) {
                char line[256];
                int own = 0;
                FILE *status = fopen("/proc/self/status", "r");
                while (status && fgets(line, sizeof line, status))
                    if (strncmp(line, "Pid:", 4) == 0) own = atoi(line + 4) == (int)getpid();
                if (status) fclose(status);
                return own ? 0u : SKILL_CAP_NETWORK;
            }
            SKILL_EXPORT const skill_plugin *skill_plugin_entry(void) {
                static skill_plugin plugin = {(uint32_t)sizeof(skill_plugin), SKILL_ABI_MAJOR, SKILL_ABI_MINOR,
                    "ownproc", "1.0.0", "Reads its own status", SKILL_COUNT(skills), skills, NULL, NULL, NULL, 0u,
                    NULL, NULL};
                plugin.capabilities = needs();
                return &plugin;
            }
            """
        let host = try Host()
        try await host.load {
            try Fixture.compile(source, name: "ownproc", into: Paths.temporaryDirectory("confinement-ownproc"))
        }
        #expect(await host.call("ownproc_ok").status == .ok)
        let report = try #require(host.plugin("ownproc")?.confinement)
        #expect(report.confinement == Confinement(), "the peek could not read its own /proc/self/status")
    }

    /// A plugin built against the frozen v1.0 header (no capabilities field) is confined as declaring nothing.
    @Test func aV1_0PluginIsConfinedAsDeclaringNothing() async throws {
        let folder = Paths.temporaryDirectory("confinement-v1.0")
        let host = try Host()
        try await host.load {
            try Fixture.compile(
                HeaderTests.source, name: "legacy", into: folder,
                flags: ["-shared", "-fPIC", "-I", HeaderTests.frozenV1_0])
        }
        #expect(await host.call("add", ["a": 1, "b": 2]).result == .double(3))
        let report = try #require(host.plugin("header-test")?.confinement)
        #expect(report.confinement == Confinement())
        #expect(report.layers == [.files, .tcp, .scope, .syscalls] || skillhost_landlock_abi() < 6)
    }

    /// The bundled clock, moved into a confined worker, still finds its zones.
    @Test func theClockFindsItsZonesWhenConfined() async throws {
        let host = try Host()
        try await host.load { Paths.products + "/libskill-clock.so" }
        let converted = await host.call(
            "clock_convert", ["time": "2026-07-01 12:00", "from": "Europe/Zurich", "to": "Asia/Tokyo"])
        #expect(converted.status == .ok, "\(converted.error ?? "")")
        #expect(converted.result?["time"] == "19:00:00", "\(String(describing: converted.result))")
    }

    @Test func rulesParseAndCombine() throws {
        #expect(ConfinementGrant("network") == .capability(.network))
        #expect(ConfinementGrant("read:~/Documents") == .read("~/Documents"))
        #expect(ConfinementGrant("write:/srv/out") == .write("/srv/out"))
        #expect(ConfinementGrant("read:Documents") == nil)
        #expect(ConfinementGrant("everything") == nil)
        var rules = ConfinementRules()
        rules.grants["x"] = [.read("~/Documents"), .write("~/out/"), .capability(.network)]
        rules.denials["x"] = [.capability(.network), .read("~/models")]
        let confinement = rules.confinement(
            for: "x", declared: [.network, .runPrograms], readPaths: ["~/models"], home: "/home/u")
        #expect(confinement.capabilities == [.runPrograms])
        #expect(confinement.readPaths == ["/home/u/Documents"])
        #expect(confinement.writePaths == ["/home/u/out"])
        #expect(ConfinementRules(json: rules.json) == rules)
        #expect(
            rules.confinement(for: "y", declared: [.writeFiles], readPaths: [], home: "/h").capabilities
                == [.writeFiles, .readFiles])
    }
}

/// Kernels without Landlock (or with an older ABI), seen by capping the ABI the worker uses.
@Suite(.serialized)
struct OlderKernelTests {
    static func host(abi: Int, require: Bool = false) throws -> SkillRegistry {
        var isolation = everyPluginInAWorker()
        isolation.maximumLandlockABI = abi
        isolation.rules.requireConfinement = require
        return try makeRegistry("confinement-abi-data") { $0.isolation = isolation }
    }

    static var kernel: String {
        var name = utsname()
        uname(&name)
        return withUnsafeBytes(of: &name.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }

    @Test func withoutLandlockTheFilterStillHoldsAndListSaysSo() async throws {
        let registry = try Self.host(abi: 0)
        defer { registry.shutdown() }
        _ = try await ConfinementTests.Host.load(registry) { try ConfinementTests.escape() }.get()
        #expect(
            registry.plugins.first?.placementText
                == "process · partly confined (Landlock unavailable (kernel \(Self.kernel))): no network, no programs, "
                + "files not confined")
        let shell = await registry.invoke(SkillInvocation(skill: "escape_exec"))
        #expect(shell.error?.hasPrefix("escape: execve() of /bin/sh was blocked") == true)
    }

    @Test func anOlderABIIsNamed() async throws {
        let registry = try Self.host(abi: 3)
        defer { registry.shutdown() }
        _ = try await ConfinementTests.Host.load(registry) { try ConfinementTests.escape() }.get()
        #expect(
            registry.plugins.first?.placementText
                == "process · partly confined (Landlock ABI 3 lacks TCP rules and signal scoping (kernel \(Self.kernel))): "
                + "no network, no programs, reads system files, writes its data dir")
    }

    @Test func requireConfinementRefusesToLoadInstead() async throws {
        let registry = try Self.host(abi: 0, require: true)
        defer { registry.shutdown() }
        let loaded = try await ConfinementTests.Host.load(registry) { try ConfinementTests.escape() }
        guard case .failure(let error) = loaded else {
            Issue.record("loaded although confinement was required")
            return
        }
        #expect(
            error.problems.map(\.description)
                == [
                    "refused to load: the plugin would be only partly confined (Landlock unavailable (kernel "
                        + "\(Self.kernel))) and isolation.require_confinement is true"
                ])
        #expect(registry.skills.isEmpty)
    }
}
