import Foundation
import SkillJSON
import TestSupport
import Testing

@testable import SkillHost

/// The host with the C worker (`skillhost-worker`) running its process-mode plugins: the worker reports records and
/// calls as they are and the host judges them with the code it uses in process, so a plugin is accepted, refused,
/// called and snapshotted exactly alike — checked here side by side against an in-process registry.
struct NativeWorkerHostTests {
    /// A registry that runs every plugin in-process, or every plugin in the C worker.
    static func registry(native: Bool, _ name: String) throws -> SkillRegistry {
        try makeRegistry("native-host-\(name)") { configuration in
            configuration.defaultTimeout = .seconds(60)
            if native { configuration.isolation = everyPluginInAWorker(native: true) }
        }
    }

    /// Both registries, loaded with `file` off the cooperative pool.
    static func both(_ name: String, loading file: String) async throws -> (SkillRegistry, SkillRegistry) {
        let inProcess = try registry(native: false, name)
        let native = try registry(native: true, name)
        _ = try await offPool { try inProcess.load(file: file).get() }
        _ = try await offPool { try native.load(file: file).get() }
        #expect(native.plugins.map(\.isolation) == [.process])
        return (inProcess, native)
    }

    /// Calls `skill` in both registries: the same status, result, error, failure code and undo.
    static func expectSameCall(
        _ skill: String, _ arguments: String, in inProcess: SkillRegistry, and native: SkillRegistry
    ) async {
        let expected = await inProcess.invoke(skill, arguments: arguments)
        let got = await native.invoke(skill, arguments: arguments)
        #expect(got.status == expected.status, "\(skill) \(arguments): \(got) vs \(expected)")
        #expect(got.result == expected.result, "\(skill) \(arguments)")
        #expect(got.error == expected.error, "\(skill) \(arguments)")
        #expect(got.code == expected.code, "\(skill) \(arguments)")
        #expect(got.undo == expected.undo, "\(skill) \(arguments)")
    }

    /// A report that lists more descriptors than its `skill_count` (or than the limit) is forged: unreadable.
    @Test func aForgedReportIsUnreadable() throws {
        func report(count: Int, listed: Int) throws -> JSONValue {
            let descriptor =
                #"{"struct_size":80,"id":null,"risk":0,"flags":0,"timeout_ms":0,"invoke":false,"function":false}"#
            let descriptors = Array(repeating: descriptor, count: listed).joined(separator: ",")
            return try JSONValue(
                parsing: #"{"plugin":{"struct_size":72,"abi_major":1,"abi_minor":0,"skill_count":\#(count),"#
                    + #""skills":true},"descriptors":[\#(descriptors)]}"#)
        }
        #expect(RawPlugin(report: try report(count: 2, listed: 2)) != nil)
        #expect(RawPlugin(report: try report(count: 1, listed: 2)) == nil)
        #expect(RawPlugin(report: try report(count: 5000, listed: 4097)) == nil)
        #expect(NativeWorker.read(try report(count: 1, listed: 2), worker: nil).failureValue != nil)
    }

    /// The C worker is started with what it reads and no more: the plugin, its folders and limits, its confinement
    /// (a peek's lists, or the final ones for a known declaration) with the host's compiled filter — without which it
    /// would compile the filter itself, about half a millisecond of every start — and none of the Swift worker's
    /// inputs (the rules, the system paths).
    @Test func theWorkerIsLaunchedWithTheFilterAndWithoutTheSwiftWorkersInputs() throws {
        let folder = Paths.temporaryDirectory("native-launch")
        var launch = WorkerLaunch(
            file: "/plugins/x.so", copy: folder + "/1-x.so", dataDirectory: folder + "/data", limits: WorkerLimits(),
            resultLimit: 1 << 20)
        let prepared = try #require(WorkerPreparation.make())
        launch.prepared = prepared
        for declared in [nil, PluginDeclaration(name: "x", capabilities: 0, readPaths: [])] {
            launch.declared = declared
            let arguments = launch.commonArguments + NativeConfinement(launch: launch) { _ in }.arguments
            let filter = try #require(arguments.firstIndex(of: "--filter"), "\(declared as Any)")
            #expect(arguments.indices.contains(filter + 1) && arguments[filter + 1] == prepared.filterHex)
            #expect(arguments.contains(declared == nil ? "--peek" : "--confinement"))
            #expect(!arguments.contains("--confine") && !arguments.contains("--system-paths"))
        }
    }

    /// The C worker is the one beside the `skillhost` binary; without it, workers are `skillhost worker`.
    @Test func theWorkerIsFoundBesideTheHostsBinary() throws {
        #expect(
            IsolationSettings(executable: Paths.skillhost) { _, _ in .process }.nativeWorker
                == Paths.products + "/skillhost-worker")
        let alone = Paths.temporaryDirectory("native-host-alone") + "/skillhost"
        #expect(symlink(Paths.skillhost, alone) == 0)
        #expect(IsolationSettings(executable: alone) { _, _ in .process }.nativeWorker == nil)
        // The Swift runtime a worker preloads for a plugin built by swiftc, from this process's maps (past their
        // first page).
        #expect(WorkerLaunch.swiftRuntime?.hasSuffix("/libswiftCore.so") == true)
    }

    @Test func aPluginIsRefusedForTheSameProblemsAsInProcess() async throws {
        typealias Plugin = LoaderRejectionTests
        let initFails = """
            #include <stdio.h>
            static int init(const skill_host *h, void **s, char *error, size_t cap) {
                (void)h; (void)s; snprintf(error, cap, "cannot open %s", "notes.db"); return 7;
            }

            """
        let sources = [
            Plugin.prelude + "int unrelated(void) { return 1; }",
            Plugin.prelude + "SKILL_EXPORT const skill_plugin *skill_plugin_entry(void) { return NULL; }",
            Plugin.prelude + "void unresolved(void); SKILL_EXPORT int x(void) { unresolved(); return 0; }",
            Plugin.plugin(header: "sizeof(skill_plugin), 2, 0"), Plugin.plugin(header: "16, 1, 0"),
            Plugin.plugin(skills: "{ 8, \"x\", 0, 0, 0, 0, 0, 0, 0, 0, 0 }"), Plugin.plugin(name: "NULL"),
            Plugin.plugin(version: "\"\""), Plugin.plugin(count: "0"),
            Plugin.plugin(
                header: "sizeof(skill_plugin), 1, 9", name: "\"Bad Name\"",
                skills: "SKILL_JSON(\"x\", \"T\", \"\", OBJ, 5, 0, invoke), "
                    + "SKILL_TYPED(\"y\", \"T\", \"D.\", \"int8 f()\", add)"),
            Plugin.plugin(skills: "SKILL_JSON(\"s\", \"T\", \"D.\", \"{nope\", 0, 0, invoke)"),
            Plugin.plugin(skills: "SKILL_JSON(\"s\", \"T\", \"D.\", OBJ, 0, 0, NULL)"),
            Plugin.plugin(skills: "SKILL_JSON(\"s\", \"T\", \"D.\", NULL, 0, 0, invoke)"),
            Plugin.plugin(skills: "SKILL_TYPED(\"s\", \"T\", \"D.\", \"double add(double a, double\", add)"),
            Plugin.plugin(
                skills: "SKILL_JSON(\"dup\", \"T\", \"D.\", OBJ, 0, 0, invoke), "
                    + "SKILL_JSON(\"dup\", \"T\", \"D.\", OBJ, 0, 0, invoke)"),
            Plugin.plugin(lifecycle: "init, NULL, NULL", extra: initFails),
        ]
        let folder = Paths.temporaryDirectory("native-host-refusals")
        let inProcess = try Self.registry(native: false, "refusals-a")
        let native = try Self.registry(native: true, "refusals-b")
        for (index, source) in sources.enumerated() {
            let file = try Fixture.compile(source, name: "bad\(index)", into: folder)
            let expected = try await offPool { inProcess.load(file: file) }
            let got = try await offPool { native.load(file: file) }
            guard case .failure(let expectedError) = expected, case .failure(let error) = got else {
                Issue.record("source \(index) was loaded: in process \(expected), in the C worker \(got)")
                continue
            }
            #expect(error.problems.map(\.description) == expectedError.problems.map(\.description), "source \(index)")
            #expect(error.description == expectedError.description)
        }
        #expect(native.skills.isEmpty)
    }

    @Test func typedSkillsGiveTheSameOutcomesAsInProcess() async throws {
        let (inProcess, native) = try await Self.both("typed", loading: try Fixture.compileFile("typed.c"))
        let calls: [(String, String)] = [
            ("add", #"{"a": 2, "b": 0.25}"#), ("add", #"{"a": "2", "b": 3}"#), ("add", #"{"a": 1e308, "b": 1e308}"#),
            ("negate32", #"{"x": -2147483648}"#), ("negate32", #"{"x": 2147483648}"#), ("negate32", #"{"x": 7}"#),
            ("twice64", #"{"x": 4611686018427387903}"#), ("twice64", #"{"x": 1.5}"#), ("invert", #"{"b": true}"#),
            ("not_a_number", "{}"), ("nothing", "{}"), ("upper", #"{"s": "héllo, world"}"#),
            ("upper", #"{"s": "a\u0000b"}"#),
            ("mixed", #"{"a": -3, "b": 0.5, "c": 9007199254740993, "d": false, "e": "x"}"#),
        ]
        for (skill, arguments) in calls {
            await Self.expectSameCall(skill, arguments, in: inProcess, and: native)
        }
        // Every string the plugin returned was given back to it (its free_string ran once per upper call).
        #expect(await native.invoke("free_count", arguments: "{}").result == .int(1))
        inProcess.shutdown()
        native.shutdown()
    }

    @Test func jsonSkillsUndoOutputSchemasAndSnapshotsAreJudgedAsInProcess() async throws {
        let (inProcess, native) = try await Self.both("json", loading: try Fixture.compileFile("behaviours.c"))
        let (inProcess11, native11) = try await Self.both("v11", loading: try Fixture.compileFile("v11.c"))
        let calls: [(SkillRegistry, SkillRegistry, String, String)] = [
            (inProcess, native, "undoable", #"{"n": 3}"#), (inProcess, native, "plain_text", "{}"),
            (inProcess, native, "fail", "{}"), (inProcess, native, "fail_silently", "{}"),
            (inProcess, native, "reject", "{}"), (inProcess, native, "bad_utf8", "{}"),
            (inProcess, native, "echo", #"{"deep": [1, {"x": "y"}]}"#),
            (inProcess11, native11, "v11_count", #"{"n": 2}"#), (inProcess11, native11, "v11_count", #"{"n": "x"}"#),
        ]
        for (expectedIn, gotIn, skill, arguments) in calls {
            await Self.expectSameCall(skill, arguments, in: expectedIn, and: gotIn)
        }
        // The call ran in the C worker: a thread of a process named after its executable.
        let thread = await native.invoke("thread_name", arguments: "{}").result?.stringValue
        #expect(thread == "skillhost-worke" || thread == "skillhost.lane", "\(String(describing: thread))")
        let snapshot = try await offPool { native11.snapshotOnCurrentThread(plugin: "v11") }
        let expected = try await offPool { inProcess11.snapshotOnCurrentThread(plugin: "v11") }
        #expect(snapshot != nil && snapshot == expected, "\(String(describing: snapshot))")
        #expect(native11.plugins.first?.readPaths == ["~/models", "/opt/skill-data"])
        #expect(native11.plugins.first?.capabilities == inProcess11.plugins.first?.capabilities)
        for registry in [inProcess, native, inProcess11, native11] { registry.shutdown() }
    }
}

extension NativeWorkerHostTests {
    /// The host waits for a worker's end through its pidfd (no thread of its own sits in `waitid`): the host holds
    /// one for the worker, and a worker killed from outside is noticed through it — the next call restarts it.
    @Test func aWorkerKilledFromOutsideIsNoticedThroughItsProcessDescriptor() async throws {
        let host = try IsolationTests.Host(worker: .native) { $0.maximumCrashes = 10 }
        try await host.load("faults.c")
        let pid = try #require(await host.workerPID())
        #expect(Self.processDescriptors().contains(pid), "the host holds a pidfd for worker \(pid)")
        #expect(kill(pid_t(pid), SIGKILL) == 0)
        let next = try #require(await host.answeringWorkerPID())
        #expect(next != pid)
        #expect(Self.processDescriptors().contains(next))
        await IsolationTests.eventually("the pidfd of the killed worker is closed") {
            !Self.processDescriptors().contains(pid)
        }
    }

    /// The pids of the processes this process holds a pidfd for (`Pid:` in each descriptor's fdinfo).
    static func processDescriptors() -> Set<Int64> {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fdinfo")) ?? []
        return Set(
            names.compactMap { name -> Int64? in
                let link = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(name)")) ?? ""
                guard link.contains("pidfd"),
                    let info = try? String(contentsOfFile: "/proc/self/fdinfo/\(name)", encoding: .utf8),
                    let line = info.split(separator: "\n").first(where: { $0.hasPrefix("Pid:") })
                else { return nil }
                return Int64(line.dropFirst(4).trimmingCharacters(in: .whitespaces))
            })
    }
}

extension NativeWorkerHostTests {
    /// The thread that loads a plugin reads the C worker's answers itself during the start: a worker that stops
    /// answering there (a hanging init) is still killed at the start's deadline and named as before, and one that
    /// crashes (a constructor) is told as a crash; the host goes on.
    @Test func aHangingInitOrACrashingConstructorEndsTheStartAsBefore() async throws {
        let host = try IsolationTests.Host(isolated: ["ctor_crash", "init_hang", "faults"], worker: .native) {
            $0.startTimeout = .seconds(2)
        }
        func failure(_ result: Result<PluginSummary, PluginLoadError>) -> String? {
            guard case .failure(let error) = result else { return nil }
            return error.description
        }
        let hang = host.registry.load(file: try Fixture.compileFile("init_hang.c"))
        #expect(
            failure(hang)
                == "init_hang.so: did not finish loading within 2 s (it was still in its init); it was stopped "
                + "and not loaded")
        let crash = host.registry.load(file: try Fixture.compileFile("ctor_crash.c"))
        #expect(
            failure(crash)
                == "ctor_crash.so: crashed while loading (killed by SIGSEGV); a constructor or init is broken, so it "
                + "was not loaded")
        try await host.load("faults.c")
        #expect(await host.workerPID() != nil)
    }
}
