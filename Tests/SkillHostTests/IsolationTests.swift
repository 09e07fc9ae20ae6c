import CProcess
import CTestSandbox
import Foundation
import Synchronization
import TestSupport
import Testing

@testable import SkillHost
@testable import SkillJSON

/// Process isolation with real worker processes (the built `skillhost` binary) and fixtures compiled here: every
/// fault leaves the host running, gives the caller a clear error (a crash as a crash, a hang as a timeout at the
/// deadline), and leaves the plugin (after a restart) and every other plugin working. Deadlines and kill graces
/// are driven by a manual clock where the test is about them; precise timings come from the benchmark.
@Suite(.serialized)
struct IsolationTests {
    /// A registry whose plugins named in `isolated` run in process mode, the others in-process; every file is
    /// probed. Log lines are collected in `logs`.
    /// Which worker runs process-mode plugins: `skillhost worker`, or the C worker (`skillhost-worker`, which
    /// does not confine yet).
    enum Worker: CaseIterable, Sendable, CustomStringConvertible {
        case swift, native
        var description: String { self == .swift ? "swift" : "native" }
    }

    final class Host: Sendable {
        final class Lines: Sendable {
            let lines = Mutex<[String]>([])
        }

        let registry: SkillRegistry
        let logs = Lines()

        init(
            isolated: Set<String> = ["faults", "behaviours", "hot"], timeout: Duration = .seconds(60),
            clock: any HostClock = SystemClock(), worker: Worker = .swift,
            configure: (inout IsolationSettings) -> Void = { _ in }
        ) throws {
            var configuration = SkillRegistry.Configuration(
                dataDirectory: URL(fileURLWithPath: Paths.temporaryDirectory("isolation-data")))
            configuration.defaultTimeout = timeout
            configuration.clock = clock
            var isolation = IsolationSettings(executable: Paths.skillhost) { name, _ in
                isolated.contains(name) ? .process : .inProcess
            }
            isolation.killGrace = .milliseconds(100)
            // A generous start: a worker describing a huge schema in a debug build beside other suites took more
            // than the default 5 s (tests about start deadlines set their own).
            isolation.startTimeout = .seconds(120)
            isolation.nativeWorker = worker == .native ? Paths.products + "/skillhost-worker" : nil
            configure(&isolation)
            configuration.isolation = isolation
            let logs = self.logs
            configuration.log = { record in logs.lines.withLock { $0.append(record.message) } }
            registry = try SkillRegistry(configuration: configuration)
        }

        /// Compiles and loads a fixture off the cooperative pool (cc and a worker's start block for a while on a
        /// busy machine; the pool's few threads are other tests' timers and readers).
        func load(_ fixture: String) async throws {
            let registry = registry
            _ = try await offPool { try registry.load(file: try Fixture.compileFile(fixture)).get() }
        }

        /// The worker's pid as `fault_ok` reports it.
        func workerPID() async -> Int64? {
            let outcome = await registry.invoke("fault_ok", arguments: "{}")
            guard case .int(let pid)? = outcome.result?["pid"] else { return nil }
            return pid
        }

        /// The pid of the worker once a call is answered again (a call may meet a worker that is stopping and fail
        /// saying so; the next one starts a new worker); nil when none answers within a generous cap.
        func answeringWorkerPID() async -> Int64? {
            var pid: Int64?
            _ = await TestSupport.eventually {
                pid = await workerPID()
                return pid != nil
            }
            return pid
        }

        func logged(_ text: String) -> Bool { logs.lines.withLock { $0.contains { $0.contains(text) } } }

        /// Calls the worker of `plugin` has not answered yet.
        func callsInWorker(_ plugin: String) -> Int {
            guard case .isolated(let isolated)? = registry.catalog.plugin(named: plugin)?.image else {
                return -1
            }
            return isolated.callsInWorker
        }

        deinit { registry.shutdown() }
    }

    /// Calls `skill` and returns the outcome and when the host delivered it, measured in the completion itself
    /// (on the thread that ends the call), so a busy cooperative pool in the test process does not count.
    static func timed(_ registry: SkillRegistry, _ skill: String, timeout: Duration? = nil) async -> (
        SkillOutcome, Duration
    ) {
        let start = ContinuousClock.now
        return await withCheckedContinuation { continuation in
            registry.start(SkillInvocation(skill: skill, timeout: timeout)) { outcome in
                continuation.resume(returning: (outcome, ContinuousClock.now - start))
            }
        }
    }

    /// Expects worker `pid` of faults, made otherwise than by spawning (forked from a template, or a spare), to run as
    /// one started for the plugin: `ps` tells which plugin it runs, no secret of the host's environment reached it,
    /// and it has a private folder of its own inside the host's, beside the one `first` (an earlier `fault_env`)
    /// reported. Returns its `fault_env` result.
    static func expectStartedForThePlugin(_ host: Host, pid: pid_t, first: JSONValue) async throws -> JSONValue {
        let title = try String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8)
        #expect(title.hasPrefix("skillhost worker faults"), "\(title)")
        let seen = try #require(await host.registry.invoke("fault_env", arguments: "{}").result)
        #expect(seen["secret"] == false)
        let (before, after) = (first["tmpdir"]?.stringValue ?? "", seen["tmpdir"]?.stringValue ?? "")
        #expect(after != before)
        #expect((after as NSString).deletingLastPathComponent == (before as NSString).deletingLastPathComponent)
        #expect((after as NSString).lastPathComponent.hasPrefix("worker-"), "\(after)")
        return seen
    }

    /// Whether child `pid` has ended (it is not reaped: its owner still waits for it).
    static func hasEnded(_ pid: pid_t) -> Bool {
        var info = siginfo_t()
        return waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0
            && info._sifields._sigchld.si_pid == pid
    }

    static func eventually(_ what: String, _ check: () -> Bool) async {
        #expect(await TestSupport.eventually { check() }, "\(what) did not happen")
    }

    @Test(arguments: Worker.allCases) func callsRunInTheWorkerProcess(worker: Worker) async throws {
        let host = try Host(worker: worker)
        try await host.load("faults.c")
        try await host.load("typed.c")  // in-process
        let pid = try #require(await host.workerPID())
        #expect(pid != Int64(getpid()))
        #expect(host.registry.plugins.first { $0.name == "faults" }?.isolation == .process)
        #expect(host.registry.plugins.first { $0.name == "typed" }?.isolation == .inProcess)
        #expect(await host.registry.invoke("add", arguments: #"{"a": 2, "b": 3}"#).result == .double(5))
    }

    @Test(arguments: [
        ("fault_segv", "crashed (killed by SIGSEGV)"), ("fault_abort", "crashed (killed by SIGABRT)"),
        ("fault_exit", "exited with status 3 (it ended its worker process)"),
        // A worker that killed itself has not run over its CPU time: nothing is said of that limit.
        ("fault_sigkill", "crashed (killed by SIGKILL)\u{0}"),
    ])
    func crashesFailTheCallAndTheWorkerRestarts(skill: String, expected: String) async throws {
        for worker in Worker.allCases { try await crashesFailTheCallAndTheWorkerRestarts(worker, skill, expected) }
    }

    private func crashesFailTheCallAndTheWorkerRestarts(_ worker: Worker, _ skill: String, _ expected: String)
        async throws
    {
        let host = try Host(worker: worker)
        try await host.load("faults.c")
        try await host.load("typed.c")
        let before = try #require(await host.workerPID())
        let outcome = await host.registry.invoke(skill, arguments: "{}")
        #expect(outcome.status == .error, "a crash is reported as a crash, not as the deadline")
        if expected.hasSuffix("\u{0}") {  // the whole sentence
            #expect(outcome.error == "plugin \"faults\" \(expected.dropLast())", "\(outcome)")
        } else {
            #expect(outcome.error?.hasPrefix("plugin \"faults\" \(expected)") == true, "\(outcome)")
        }
        #expect(await host.registry.invoke("add", arguments: #"{"a": 1, "b": 1}"#).status == .ok)
        let after = try #require(await host.workerPID())
        #expect(after != before)
    }

    @Test(arguments: ["fault_spin", "fault_block"])
    func hungCallsTimeOutAndTheWorkerIsKilled(skill: String) async throws {
        for worker in Worker.allCases { try await hungCallsTimeOutAndTheWorkerIsKilled(worker, skill) }
    }

    private func hungCallsTimeOutAndTheWorkerIsKilled(_ worker: Worker, _ skill: String) async throws {
        let clock = ManualClock()
        let host = try Host(clock: clock, worker: worker)
        try await host.load("faults.c")
        let before = try #require(await host.workerPID())
        let call = StartedCall(host.registry, skill, timeout: .milliseconds(300))
        await Self.eventually("the call reached the worker") { host.callsInWorker("faults") == 1 }
        clock.advance(by: .milliseconds(300))
        #expect(call.outcome?.status == .timeout, "the caller has its answer at the deadline")
        #expect(call.outcome?.error == "\(skill) timed out after 300 ms")
        // The cancel goes to the worker and the kill is scheduled from the call's own thread.
        await Self.eventually("the kill is scheduled") { clock.pendingTimers == 1 }
        clock.advance(by: .milliseconds(99))
        #expect(kill(pid_t(before), 0) == 0, "the worker lives until the grace period is over")
        clock.advance(by: .milliseconds(1))
        // After the grace period the worker (and the stuck call) is gone; the next call gets a new one.
        await Self.eventually("the worker was killed") { kill(pid_t(before), 0) != 0 }
        let after = try #require(await host.workerPID())
        #expect(after != before)
        await Self.eventually("the kill was logged") { host.logged("\(skill) did not stop within 100 ms") }
    }

    /// Workers get what a program needs (PATH, HOME, locale…), never the host's secrets.
    /// A plugin in a worker cannot signal the host (Landlock's signal scoping, ABI 6 and later): `kill(getppid(),
    /// 0)` — which sends nothing — is refused with EPERM; the same plugin in-process may.
    @Test func aWorkerCannotSignalTheHost() async throws {
        let host = try Host()
        try await host.load("faults.c")
        let inWorker = await host.registry.invoke("fault_signal_parent", arguments: "{}").result
        if skillhost_landlock_abi() >= 6 {
            #expect(inWorker?["errno"] == .int(Int64(EPERM)), "\(String(describing: inWorker))")
        } else {
            #expect(inWorker?["errno"] == 0, "without Landlock scoping the kernel allows it")
        }
        let inProcess = try Host(isolated: [])
        try await inProcess.load("faults.c")
        #expect(await inProcess.registry.invoke("fault_signal_parent", arguments: "{}").result?["errno"] == 0)
        // The worker still works, and still signals what it starts itself (its own children are in its domain).
        #expect(await host.workerPID() != nil)
    }

    /// Nor can it reach an abstract UNIX socket outside the worker (the host's, or this test's listener here);
    /// in-process it can.
    @Test func aWorkerCannotReachAnAbstractSocketOutsideIt() async throws {
        let name = "skillhost-test-\(UUID().uuidString.prefix(8))"
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        #expect(listener >= 0)
        defer { close(listener) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(name.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { path in
            for (offset, byte) in bytes.enumerated() { path[offset + 1] = byte }  // path[0] = 0: abstract
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + 1 + bytes.count)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) }
        }
        #expect(bound == 0)
        #expect(listen(listener, 8) == 0)
        let arguments = #"{"name":"\#(name)"}"#
        let host = try Host()
        try await host.load("faults.c")
        let inWorker = await host.registry.invoke("fault_connect_abstract", arguments: arguments).result
        if skillhost_landlock_abi() >= 6 {
            #expect(inWorker?["errno"] == .int(Int64(EPERM)), "\(String(describing: inWorker))")
        } else {
            #expect(inWorker?["errno"] == 0)
        }
        let inProcess = try Host(isolated: [])
        try await inProcess.load("faults.c")
        #expect(await inProcess.registry.invoke("fault_connect_abstract", arguments: arguments).result?["errno"] == 0)
    }

    @Test func workersDoNotInheritTheHostsSecrets() async throws {
        setenv("SKILLHOST_TEST_SECRET", "sk-planted-secret", 1)
        defer { unsetenv("SKILLHOST_TEST_SECRET") }
        let host = try Host()
        try await host.load("faults.c")
        let seen = await host.registry.invoke("fault_env", arguments: "{}").result
        #expect(seen?["secret"] == false)
        #expect(seen?["path"] == true)
        #expect((seen?["count"]?.doubleValue ?? 99) <= 12, "\(String(describing: seen))")
        let minimal = ChildEnvironment.minimal(from: ["PATH": "/bin", "OPENAI_API_KEY": "sk-x", "LC_ALL": "C"])
        #expect(minimal == ["PATH": "/bin", "LC_ALL": "C"])
    }

    /// After a worker starts, a template process waits: a restart forks the new worker from it — the host's own
    /// child (so the host waits for it and kills it as one it started), leader of its own process group, never the
    /// template itself — and it runs as a freshly started worker would: its own private TMPDIR, no secret. The
    /// template stays for the next one.
    @Test func aRestartForksTheWorkerFromTheTemplate() async throws {
        setenv("SKILLHOST_TEST_SECRET", "x", 1)
        defer { unsetenv("SKILLHOST_TEST_SECRET") }
        // Templates are kept per executable: a path of this test's own, so no test running beside it shares one.
        let executable = Paths.temporaryDirectory("template") + "/skillhost"
        #expect(symlink(Paths.skillhost, executable) == 0)
        let host = try Host { $0.executable = executable }
        try await host.load("faults.c")
        let first = try #require(await host.registry.invoke("fault_env", arguments: "{}").result)
        await Self.eventually("a template runs") { WorkerTemplates.shared.running(executable) != nil }
        let template = try #require(WorkerTemplates.shared.running(executable))
        #expect(await host.registry.invoke("fault_sigkill", arguments: "{}").status == .error)
        let pid = try #require(await host.answeringWorkerPID())
        #expect(pid != Int64(template), "the template itself never becomes a worker")
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        let fields = stat[(stat.lastIndex(of: ")") ?? stat.startIndex)...].split(separator: " ")
        #expect(fields.count > 3 && fields[2] == "\(getpid())", "the worker is the host's child: \(stat)")
        #expect(fields.count > 3 && fields[3] == "\(pid)", "the worker leads its own process group: \(stat)")
        let seen = try await Self.expectStartedForThePlugin(host, pid: pid_t(pid), first: first)
        #expect(seen["count"] == first["count"])
        #expect(WorkerTemplates.shared.running(executable) == template, "the template stays for the next worker")
    }

    /// A template that died (killed by someone) is not used: the restart starts a fresh worker, and a new template
    /// takes its place.
    @Test func aDeadTemplateIsReplaced() async throws {
        let executable = Paths.temporaryDirectory("template-dead") + "/skillhost"
        #expect(symlink(Paths.skillhost, executable) == 0)
        let host = try Host { $0.executable = executable }
        try await host.load("faults.c")
        await Self.eventually("a template runs") { WorkerTemplates.shared.running(executable) != nil }
        let template = try #require(WorkerTemplates.shared.running(executable))
        #expect(kill(template, SIGKILL) == 0)
        await Self.eventually("the template is dead") { Self.hasEnded(template) }
        #expect(await host.registry.invoke("fault_sigkill", arguments: "{}").status == .error)
        #expect(await host.answeringWorkerPID() != nil, "a fresh worker answers")
        await Self.eventually("a new template runs") {
            let running = WorkerTemplates.shared.running(executable)
            return running != nil && running != template
        }
        #expect(await host.registry.invoke("fault_sigkill", arguments: "{}").status == .error)
        #expect(await host.answeringWorkerPID() != nil, "the next worker is forked from the new template")
    }

    /// Templates that keep failing are given up: after three in a row, workers are started directly (each restart
    /// still answers), no template is started again, and the log says so once.
    @Test func templatesThatKeepFailingAreGivenUp() async throws {
        let folder = Paths.temporaryDirectory("template-failing")
        let executable = folder + "/skillhost"
        try writeExecutable(
            "#!/bin/sh\n[ \"$2\" = --template ] && exit 3\nexec \(Paths.skillhost) \"$@\"\n", to: executable)
        let host = try Host {
            $0.executable = executable
            $0.maximumCrashes = 100  // the kills below are crashes on purpose
        }
        try await host.load("faults.c")
        // Each restart meets at most one template (a template still starting is not waited for): rounds until
        // three failed, with a generous cap.
        for round in 1...30 where !WorkerTemplates.shared.gaveUp(executable) {
            #expect(await host.registry.invoke("fault_sigkill", arguments: "{}").status == .error)
            #expect(await host.answeringWorkerPID() != nil, "round \(round): a worker answers")
        }
        #expect(WorkerTemplates.shared.gaveUp(executable))
        #expect(await host.registry.invoke("fault_sigkill", arguments: "{}").status == .error)
        #expect(await host.answeringWorkerPID() != nil, "a worker started directly answers")
        #expect(WorkerTemplates.shared.running(executable) == nil)
        let warnings = host.logs.lines.withLock { $0.filter { $0.hasPrefix("worker templates of") } }
        #expect(
            warnings == [
                "worker templates of \(executable) failed 3 times in a row; workers are started directly from now on "
                    + "(each start takes longer)"
            ])
    }

    /// A calling thread that finds the worker's lane thread on its own CPU moves to another CPU it may run on, and
    /// its affinity is as it was afterwards. Here every thread of the worker is held on CPU 0 and the caller starts
    /// there (the two would otherwise take turns on one core for every call).
    @Test func aCallerOnTheWorkersCPUMovesOffIt() async throws {
        var allowed: UInt64 = 0
        guard skillhost_test_affinity(0, &allowed) == 0, allowed & 1 != 0, allowed.nonzeroBitCount >= 2 else {
            return  // one CPU (or not CPU 0) to run on: nowhere to move
        }
        let host = try Host()
        try await host.load("faults.c")
        let pid = try #require(await host.workerPID())
        let threads = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        #expect(!threads.isEmpty)
        for thread in threads.compactMap({ Int32($0) }) {
            #expect(skillhost_test_set_affinity(thread, 1) == 0, "worker thread \(thread) held on CPU 0")
        }
        let (registry, mask) = (host.registry, allowed)
        let (moves, statuses, after) = try await offPool { () -> (Int, [SkillOutcome.Status], UInt64) in
            // The caller is put on CPU 0 before each call (the scheduler may move it away by itself in between, on
            // a busy machine), until one call finds it there and it moves; generous cap.
            let before = skillhost_lane_moves()
            var statuses: [SkillOutcome.Status] = []
            for _ in 0..<50 where skillhost_lane_moves() == before {
                _ = skillhost_test_set_affinity(0, 1)  // onto CPU 0 ...
                _ = skillhost_test_set_affinity(0, mask)  // ... allowed elsewhere again, still there
                statuses.append(registry.invokeOnCurrentThread("fault_ok", arguments: "{}").status)
            }
            var now: UInt64 = 0
            _ = skillhost_test_affinity(0, &now)
            return (skillhost_lane_moves() - before, statuses, now)
        }
        #expect(statuses.allSatisfy { $0 == .ok })
        #expect(moves >= 1, "the caller moved off CPU 0")
        #expect(after == allowed, "the caller's affinity is as it was")
    }

    /// The child a confined worker starts to learn what its plugin declares is reaped once it is gone: a worker
    /// that serves for days keeps no zombie of it.
    @Test func aWorkerKeepsNoZombieOfItsPeek() async throws {
        let host = try Host()
        try await host.load("faults.c")
        let pid = try #require(await host.workerPID())
        // The peek child is gone only once reaped (killed, it is first dying, then a zombie until waited for).
        let reaped = await TestSupport.eventually {
            _ = await host.registry.invoke("fault_ok", arguments: "{}")
            return Self.children(of: pid_t(pid)).isEmpty
        }
        #expect(reaped, "children of worker \(pid): \(Self.children(of: pid_t(pid)))")
    }

    /// A worker opens the host's private copy where it is, instead of writing a copy of the copy first: the
    /// plugin it maps is the host's file (still on disk), not one it wrote and removed.
    @Test func aWorkerLoadsTheHostsCopyInPlace() async throws {
        let host = try Host()
        try await host.load("faults.c")
        let pid = try #require(await host.workerPID())
        let maps = try String(contentsOfFile: "/proc/\(pid)/maps", encoding: .utf8)
        let plugin = maps.split(separator: "\n").filter {
            $0.hasSuffix("faults.so") || $0.hasSuffix("faults.so (deleted)")
        }
        #expect(!plugin.isEmpty, "the plugin is mapped")
        #expect(plugin.allSatisfy { !$0.hasSuffix("(deleted)") }, "\(plugin)")
        let path = try #require(plugin.first?.split(separator: " ").last.map(String.init))
        #expect(FileManager.default.fileExists(atPath: path))
    }

    /// The processes whose parent is `parent`, running or ended and not yet waited for, with their state.
    static func children(of parent: pid_t) -> [String] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { entry -> String? in
            guard let child = pid_t(entry),
                let stat = try? String(contentsOfFile: "/proc/\(child)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { return nil }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return fields.count > 2 && fields[1] == "\(parent)" ? "\(child) (\(fields[0]))" : nil
        }
    }

    /// A call that arrives while a stuck call's kill is pending waits for the new worker instead of failing with
    /// the other call's reason; and such kills are not crashes, so they never make the plugin "failing".
    @Test(arguments: Worker.allCases) func killsAfterATimeoutAreNotCrashesAndLaterCallsWaitForTheNewWorker(
        worker: Worker
    ) async throws {
        let clock = ManualClock()
        let host = try Host(clock: clock, worker: worker) { $0.maximumCrashes = 2 }
        try await host.load("faults.c")
        for round in 1...3 {
            let before = try #require(await host.workerPID())
            let stuck = StartedCall(host.registry, "fault_block", timeout: .milliseconds(100))
            await Self.eventually("the call reached the worker") { host.callsInWorker("faults") == 1 }
            clock.advance(by: .milliseconds(100))
            #expect(stuck.outcome?.status == .timeout)
            await Self.eventually("the kill is scheduled") { clock.pendingTimers == 1 }
            let next = StartedCall(host.registry, "fault_ok")
            #expect(next.outcome == nil, "round \(round): the call waits rather than going to the doomed worker")
            clock.advance(by: .milliseconds(100))
            await Self.eventually("the waiting call ran") { next.outcome != nil }
            #expect(next.outcome?.status == .ok, "round \(round): \(String(describing: next.outcome?.error))")
            #expect(next.outcome?.result?["pid"] != .int(before), "on a new worker")
        }
        #expect(!host.logged("is failing"), "three kills for stuck calls are not three crashes")
    }

    /// A crash is noticed from the worker's exit, not from its pipe closing: a child that keeps the pipe open does
    /// not turn the crash into a timeout. A plugin that closes the protocol channel is told so.
    @Test(arguments: Worker.allCases) func crashesAreSeenFromTheExitAndAClosedChannelIsNamed(worker: Worker)
        async throws
    {
        let host = try Host(worker: worker)
        try await host.load("faults.c")
        let pidFile = Paths.temporaryDirectory("orphan") + "/pid"
        let crashed = await host.registry.invoke("fault_orphan", arguments: #"{"pid_file":"\#(pidFile)"}"#)
        #expect(crashed.status == .error, "\(crashed)")
        #expect(crashed.error?.hasPrefix("plugin \"faults\" crashed (killed by SIGSEGV)") == true)
        if let orphan = try? String(contentsOfFile: pidFile, encoding: .utf8), let pid = pid_t(orphan) {
            kill(pid, SIGKILL)
        }
        #expect(await host.registry.invoke("fault_ok", arguments: "{}").status == .ok, "restarted")
        let closed = await host.registry.invoke("fault_close_fds", arguments: "{}")
        // Said by the worker itself (it exits saying why), or — when it is slow to — by the host that saw the pipe
        // close under a live worker. A call on the direct lane travels in shared memory, which closing descriptors
        // does not end: that call is answered, and the worker stops saying why right after.
        let worker = try Regex(
            #"^plugin "faults"'s worker stopped: the plugin closed the protocol channel "#
                + #"\(descriptor \d+\); a plugin must not close descriptors it did not open$"#)
        if closed.status == .ok {
            await Self.eventually("the worker says why it stopped") {
                host.logged("the plugin closed the protocol channel")
            }
        } else {
            #expect(
                (closed.error?.wholeMatch(of: worker) != nil)
                    || closed.error
                        == "plugin \"faults\" closed its worker's protocol channel (it closed or "
                        + "replaced file descriptors it does not own), so its worker was stopped",
                "\(closed)")
        }
        // A call may still meet the stopping worker (and fail saying so); the plugin then answers on a new one.
        #expect(await host.answeringWorkerPID() != nil, "restarted")
    }

    /// A plugin spinning on stderr is cut back to its budget, with a line saying how much was dropped.
    @Test(arguments: Worker.allCases) func aPluginsLogIsThrottled(worker: Worker) async throws {
        let host = try Host(worker: worker)
        try await host.load("faults.c")
        #expect(await host.registry.invoke("fault_spam", arguments: "{}").status == .ok)
        // The next line let through after the drops says how many went.
        #expect(
            await TestSupport.eventually {
                _ = await host.registry.invoke("fault_stdout", arguments: "{}")
                return host.logged("log lines dropped (plugin \"faults\" logs faster than 200 lines a second)")
            })
        let relayed = host.logs.lines.withLock { $0.filter { $0.hasPrefix("stderr: spam line") }.count }
        #expect(relayed < 10_000, "\(relayed) of 100,000 lines relayed")
    }

    /// The worker protocol carries what the host accepts: arguments and results nested 510 deep cross it; arguments
    /// too big for the worker are refused up front with a sentence (not lost until a timeout).
    @Test(arguments: Worker.allCases) func theWorkerProtocolCarriesWhatTheHostAccepts(worker: Worker) async throws {
        let host = try Host(worker: worker)
        try await host.load("behaviours.c")
        let deep = String(repeating: #"{"a":"#, count: 510) + "1" + String(repeating: "}", count: 510)
        let echoed = await host.registry.invoke("echo", arguments: deep)
        #expect(echoed.status == .ok, "\(echoed.error ?? "")")
        #expect(echoed.result == (try JSONValue(parsing: deep)))
        let big = #"{"s":""# + String(repeating: "x", count: 40 << 20) + #""}"#
        let refused = await host.registry.invoke("echo", arguments: big)
        #expect(refused.status == .error)
        #expect(
            refused.error?.hasPrefix(
                "the arguments of echo take 40.0 MB, over the 33.0 MB a plugin in process mode "
                    + "can receive") == true, "\(refused.error ?? "")")
        #expect(await host.registry.invoke("echo", arguments: "{}").status == .ok, "the worker is fine")
    }

    /// A worker hands a JSON skill the text its host validated as it is, unparsed: spacing survives, blank text
    /// arrives as `{}`.
    @Test(arguments: Worker.allCases) func aWorkerHandsAJSONSkillItsArgumentTextAsItIs(worker: Worker) async throws {
        let host = try Host(worker: worker)
        try await host.load("behaviours.c")
        #expect(await host.registry.invoke("echo", arguments: " \n ").result == .object(JSONObject()))
        let spaced = #"{ "a" : [1, 2.5, "x", {"b": null}] }"#
        let echoed = await host.registry.invoke("echo", arguments: spaced)
        #expect(echoed.result == (try JSONValue(parsing: spaced)), "\(echoed.error ?? "")")
    }

    /// A JSON skill's result reaches the host as the plugin set it and is decoded there exactly as the worker would
    /// have: JSON as JSON (spread over lines too), anything else as text, `{` that is not JSON as an error; and the
    /// declared output schema is checked on the host.
    @Test(arguments: Worker.allCases) func resultsDecodeInTheHostAsInTheWorker(worker: Worker) async throws {
        let source = """
            #include <string.h>
            #include "skill_sdk.h"
            static int reply(const skill_call_api *api, skill_call *call, const char *text) {
                api->set_result(call, text, strlen(text)); return SKILL_OK;
            }
            static int text(void *s, const skill_call_api *api, skill_call *c, const char *a) {
                (void)s; (void)a; return reply(api, c, "plain words, not JSON");
            }
            static int lines(void *s, const skill_call_api *api, skill_call *c, const char *a) {
                (void)s; (void)a; return reply(api, c, "{\\n  \\"a\\": [1, 2]\\n}");
            }
            static int broken(void *s, const skill_call_api *api, skill_call *c, const char *a) {
                (void)s; (void)a; return reply(api, c, "{\\"a\\": ");
            }
            static int count(void *s, const skill_call_api *api, skill_call *c, const char *a) {
                (void)s; return reply(api, c, strstr(a, "bad") ? "{\\"n\\":\\"three\\"}" : "{\\"n\\":3}");
            }
            #define ANY "{\\"type\\":\\"object\\"}"
            static const skill_descriptor skills[] = {
                SKILL_JSON("result_text", "Text", "Text.", ANY, SKILL_RISK_READ_ONLY, 0, text),
                SKILL_JSON("result_lines", "Lines", "Lines.", ANY, SKILL_RISK_READ_ONLY, 0, lines),
                SKILL_JSON("result_broken", "Broken", "Broken.", ANY, SKILL_RISK_READ_ONLY, 0, broken),
                SKILL_JSON_OUTPUT("result_count", "Count", "Count.", ANY,
                    "{\\"type\\":\\"object\\",\\"properties\\":{\\"n\\":{\\"type\\":\\"integer\\"}}}",
                    SKILL_RISK_READ_ONLY, 0, count),
            };
            SKILL_PLUGIN("results", "1.0.0", "Results of every shape", skills)
            """
        let host = try Host(isolated: ["results"], worker: worker)
        _ = try host.registry.load(file: try Fixture.compile(source, name: "results")).get()
        #expect(await host.registry.invoke("result_text", arguments: "{}").result == "plain words, not JSON")
        #expect(await host.registry.invoke("result_lines", arguments: "{}").result == ["a": [1, 2]])
        let broken = await host.registry.invoke("result_broken", arguments: "{}")
        #expect(broken.error?.hasPrefix("result_broken returned invalid JSON (") == true, "\(broken)")
        #expect(await host.registry.invoke("result_count", arguments: "{}").result == ["n": 3])
        let bad = await host.registry.invoke("result_count", arguments: #"{"bad":true}"#)
        #expect(
            bad.error
                == "result_count returned a result that does not match its output schema: $.n: expected integer, got string",
            "\(bad)")
    }

    /// A schema with 13,000 properties (about 300 KB) loads through a worker and answers: loading is linear in
    /// what a plugin declares (it used to pass for a hanging init).
    @Test(arguments: Worker.allCases) func aPluginWithAHugeSchemaLoadsInProcessMode(worker: Worker) async throws {
        let properties = (0..<13_000).map { #"\"p\#($0)\":{\"type\":\"integer\"}"# }.joined(separator: ",")
        let source = """
            #include "skill_sdk.h"
            static int invoke(void *s, const skill_call_api *api, skill_call *call, const char *args) {
                (void)s; (void)args; api->set_result(call, "1", 1); return SKILL_OK;
            }
            static const skill_descriptor skills[] = {
                SKILL_JSON("big_schema", "Big", "Many properties.",
                           "{\\"type\\":\\"object\\",\\"properties\\":{\(properties)}}", 0, 0, invoke)
            };
            SKILL_PLUGIN("big", "1.0.0", "A big schema", skills)
            """
        let host = try Host(isolated: ["big"], worker: worker)
        _ = try host.registry.load(file: try Fixture.compile(source, name: "big")).get()
        #expect(host.registry.plugins.first { $0.name == "big" }?.isolation == .process)
        #expect(await host.registry.invoke("big_schema", arguments: #"{"p12999": 7}"#).result == .int(1))
        #expect(
            await host.registry.invoke("big_schema", arguments: #"{"p5": "x"}"#).error
                == "$.p5: expected integer, got string")
    }

    /// With the real clock: a stuck call's worker is killed after the grace period (the kill timer is not kept by
    /// anyone but must fire), and the next call gets a new worker.
    @Test func theKillGraceFiresWithTheRealClock() async throws {
        let host = try Host()
        try await host.load("faults.c")
        let before = try #require(await host.workerPID())
        #expect(
            await host.registry.invoke("fault_spin", arguments: "{}", timeout: .milliseconds(100)).status == .timeout)
        await Self.eventually("the worker was killed") { kill(pid_t(before), 0) != 0 }
        let after = try #require(await host.workerPID())
        #expect(after != before)
    }

    @Test(arguments: Worker.allCases) func otherCallsInFlightGetAClearError(worker: Worker) async throws {
        let host = try Host(worker: worker)
        try await host.load("faults.c")
        let blocked = Task { await host.registry.invoke("fault_block", arguments: "{}") }
        await Self.eventually("the blocking call reached the worker") { host.callsInWorker("faults") == 1 }
        _ = await host.registry.invoke("fault_segv", arguments: "{}")
        let outcome = await blocked.value
        #expect(outcome.status == .error)
        #expect(outcome.error?.hasPrefix("plugin \"faults\" crashed (killed by SIGSEGV)") == true)
    }

    /// The limit ends the call, one way or the other: the worker dies of it (and the message names the limit), or
    /// — on a machine too busy to reach it within the deadline — the call times out.
    @Test(arguments: Worker.allCases) func aMemoryHogHitsTheLimit(worker: Worker) async throws {
        let host = try Host(timeout: .seconds(120), worker: worker) { $0.limits.addressSpace = 768 << 20 }
        try await host.load("faults.c")
        let outcome = await host.registry.invoke("fault_hog", arguments: "{}")
        switch outcome.status {
        case .error:
            #expect(outcome.error?.hasPrefix("plugin \"faults\" crashed (killed by SIG") == true)
            #expect(
                outcome.error?.contains(
                    "it may have run over its memory limit of 768 MB (it used ") == true, "\(outcome)")
        case .timeout: #expect(outcome.error == "fault_hog timed out after 2 min")
        default: Issue.record("unexpected outcome \(outcome)")
        }
        #expect(await host.workerPID() != nil)
    }

    @Test(arguments: Worker.allCases) func openFilesAndCPUTimeAreLimited(worker: Worker) async throws {
        let host = try Host(worker: worker) {
            $0.limits.openFiles = 64
            $0.limits.cpuSeconds = 1
        }
        try await host.load("faults.c")
        guard case .int(let count)? = await host.registry.invoke("fault_files", arguments: "{}").result else {
            Issue.record("fault_files gave no count")
            return
        }
        #expect(count > 0 && count < 64)
        // The limit ends the call, one way or the other: the worker dies of it, or the call times out first.
        let outcome = await host.registry.invoke("fault_spin", arguments: "{}", timeout: .seconds(120))
        switch outcome.status {
        case .error:
            #expect(
                outcome.error?.hasPrefix("plugin \"faults\" crashed (killed by SIGKILL); ") == true
                    || outcome.error?.hasPrefix("plugin \"faults\" crashed (killed by SIGXCPU)")
                        == true,
                "\(outcome)")
            #expect(outcome.error?.contains("it ran over its CPU-time limit of 1 s (it used ") == true, "\(outcome)")
        case .timeout: #expect(outcome.error == "fault_spin timed out after 2 min")
        default: Issue.record("unexpected outcome \(outcome)")
        }
    }

    @Test(arguments: Worker.allCases) func aCrashOnABackgroundThreadIsNoticedAndRecovered(worker: Worker) async throws {
        let host = try Host(worker: worker)
        try await host.load("faults.c")
        let before = try #require(await host.workerPID())
        #expect(await host.registry.invoke("fault_thread", arguments: "{}").result == "started")
        // The thread crashes once told to: during this call or after it, so either answer is right.
        let fire = await host.registry.invoke("fault_thread_fire", arguments: "{}")
        #expect(
            fire.result == "fired" || fire.error?.hasPrefix("plugin \"faults\" crashed (killed by SIGSEGV)") == true,
            "\(fire)")
        await Self.eventually("the crash was logged") { host.logged("crashed (killed by SIGSEGV)") }
        let after = try #require(await host.workerPID())
        #expect(after != before)
    }

    @Test(arguments: Worker.allCases) func garbageOnStdoutGoesToTheLogNotTheProtocol(worker: Worker) async throws {
        let host = try Host(worker: worker)
        try await host.load("faults.c")
        let before = try #require(await host.workerPID())
        #expect(await host.registry.invoke("fault_stdout", arguments: "{}").result == "printed")
        await Self.eventually("stdout reached the log") { host.logged("stderr: not even json") }
        #expect(await host.workerPID() == before)
    }

    @Test(arguments: Worker.allCases) func badResultsAreErrorsAndTheWorkerStays(worker: Worker) async throws {
        let host = try Host(worker: worker)
        try await host.load("faults.c")
        let before = try #require(await host.workerPID())
        #expect(
            await host.registry.invoke("fault_huge", arguments: "{}").error
                == "the result of fault_huge is 64.0 MB, over the host's limit of 16.0 MB; return less (or raise "
                + "max_result_mb in config.json)")
        #expect(
            await host.registry.invoke("fault_utf8", arguments: "{}").error
                == "fault_utf8 returned a result that is not valid UTF-8; results must be UTF-8 text or JSON")
        let json = await host.registry.invoke("fault_json", arguments: "{}")
        #expect(json.error?.hasPrefix("fault_json returned invalid JSON (") == true, "\(json)")
        #expect(json.error?.hasSuffix("); a result that starts with { or [ must be JSON") == true)
        #expect(await host.workerPID() == before)
    }

    @Test(arguments: [IsolationMode.process, .inProcess])
    func aCrashingConstructorOrAHangingInitIsRejected(mode: IsolationMode) async throws {
        let host = try Host(isolated: mode == .process ? ["ctor_crash", "init_hang"] : []) {
            $0.startTimeout = .seconds(2)
        }
        try await host.load("typed.c")
        let crash = host.registry.load(file: try Fixture.compileFile("ctor_crash.c"))
        guard case .failure(let crashError) = crash else {
            Issue.record("a crashing constructor was loaded")
            return
        }
        #expect(
            crashError.description
                == "ctor_crash.so: crashed while loading (killed by SIGSEGV); a constructor or init is broken, so it "
                + "was not loaded")
        let hang = host.registry.load(file: try Fixture.compileFile("init_hang.c"))
        guard case .failure(let hangError) = hang else {
            Issue.record("a hanging init was loaded")
            return
        }
        #expect(
            hangError.description
                == "init_hang.so: did not finish loading within 2 s (it was still in its init); it was stopped "
                + "and not loaded")
        #expect(await host.registry.invoke("add", arguments: #"{"a": 1, "b": 2}"#).result == .double(3))
    }

    @Test(arguments: Worker.allCases) func aPluginThatKeepsCrashingIsMarkedFailing(worker: Worker) async throws {
        let clock = ManualClock()
        let host = try Host(clock: clock, worker: worker) { $0.maximumCrashes = 3 }
        let copy = Paths.temporaryDirectory("failing") + "/faults.so"
        try FileManager.default.copyItem(atPath: try Fixture.compileFile("faults.c"), toPath: copy)
        _ = try host.registry.load(file: copy).get()
        // The first restart is immediate; after two crashes in a row the next start waits 50 ms (of the host's
        // clock, moved here: the call's deadline and the restart's wait are its two timers).
        _ = await host.registry.invoke("fault_segv", arguments: "{}")
        _ = await host.registry.invoke("fault_segv", arguments: "{}")
        let third = StartedCall(host.registry, "fault_segv")
        await Self.eventually("the restart waits") { clock.pendingTimers == 2 }
        clock.advance(by: .milliseconds(49))
        #expect(third.outcome == nil, "restarted before 50 ms")
        clock.advance(by: .milliseconds(1))
        await Self.eventually("the third call crashed its new worker") { third.outcome?.status == .error }
        let refused = await host.registry.invoke("fault_ok", arguments: "{}")
        #expect(refused.status == .error)
        #expect(
            refused.error?.hasPrefix(
                "plugin \"faults\" is failing: its worker crashed 3 times within 60 s (last: plugin "
                    + "\"faults\" crashed (killed by SIGSEGV)") == true, "\(refused)")
        #expect(refused.error?.hasSuffix("fix the plugin and replace its file to load it again") == true)
        // Replacing the file (new content) loads a fresh plugin.
        var bytes = try Data(contentsOf: URL(fileURLWithPath: copy))
        bytes.append(0)
        try bytes.write(to: URL(fileURLWithPath: copy))
        _ = try host.registry.load(file: copy).get()
        #expect(await host.workerPID() != nil)
    }

    @Test(arguments: Worker.allCases) func progressCancellationAndConcurrentCallsCrossTheProcessBoundary(worker: Worker)
        async throws
    {
        let clock = ManualClock()
        let host = try Host(clock: clock, worker: worker)
        try await host.load("behaviours.c")
        let reports = Mutex<[SkillProgress]>([])
        let progress = await host.registry.invoke("progress", arguments: "{}") { report in
            reports.withLock { $0.append(report) }
        }
        #expect(progress.status == .ok)
        #expect(reports.withLock { $0.count } == 3)
        // Written on the call's thread, the log line came before the outcome.
        #expect(host.logged("progress: progress done"))
        // A cooperative skill stops when cancelled: no kill, the worker stays.
        let whoami = await host.registry.invoke("whoami", arguments: "{}")
        let cancelled = StartedCall(host.registry, "cooperative", #"{"ms": 600000}"#, timeout: .milliseconds(100))
        await Self.eventually("the call reached the worker") { host.callsInWorker("behaviours") == 1 }
        clock.advance(by: .milliseconds(100))
        #expect(cancelled.outcome?.status == .timeout)
        await Self.eventually("the kill is scheduled") { clock.pendingTimers == 1 }
        await Self.eventually("the plugin answered the cancel") { host.callsInWorker("behaviours") == 0 }
        #expect(host.logged("noticed the cancellation"))
        clock.advance(by: .seconds(1))  // past the kill grace: nothing left to kill
        #expect(!host.logged("did not stop"))
        #expect(await host.registry.invoke("whoami", arguments: "{}").result == whoami.result)
        // Four calls at once are all inside the plugin together (concurrent ids), not one after another.
        let holds = (0..<4).map { _ in StartedCall(host.registry, "hold") }
        await Self.eventually("four calls are inside the plugin at once") {
            host.callsInWorker("behaviours") == 4
        }
        #expect(await host.registry.invoke("held", arguments: "{}").result == .int(4))
        _ = await host.registry.invoke("release", arguments: "{}")
        await Self.eventually("the four calls returned") { holds.allSatisfy { $0.outcome?.result == "released" } }
        #expect(await host.registry.invoke("undoable", arguments: "{}").undo != nil)
    }

    /// A call goes on the worker's direct lane when the lane is free (the worker's lane thread runs it), and on the
    /// main channel while another call holds the lane; both answer.
    @Test(arguments: Worker.allCases) func aCallTakesTheDirectLaneWhenItIsFreeAndTheMainChannelOtherwise(worker: Worker)
        async throws
    {
        let host = try Host(worker: worker)
        try await host.load("behaviours.c")
        let first = await host.registry.invoke("thread_name", arguments: "{}")
        #expect(first.result == "skillhost.lane", "\(first)")
        let hold = StartedCall(host.registry, "hold")
        await Self.eventually("the held call is in the worker") { host.callsInWorker("behaviours") == 1 }
        let other = await host.registry.invoke("thread_name", arguments: "{}")
        #expect(other.status == .ok)
        #expect(other.result != "skillhost.lane")
        _ = await host.registry.invoke("release", arguments: "{}")
        await Self.eventually("the held call returned") { hold.outcome?.result == "released" }
        #expect(await host.registry.invoke("thread_name", arguments: "{}").result == "skillhost.lane")
    }

    @Test(arguments: Worker.allCases) func hotReloadStartsANewWorkerAndStopsTheOldOne(worker: Worker) async throws {
        let host = try Host(worker: worker)
        let staging = Paths.temporaryDirectory("isolation-hot")
        let source = try String(contentsOfFile: Paths.fixtures + "/hot.c", encoding: .utf8)
        let v1 = try Fixture.compile(source, name: "v1", into: staging, flags: ["-shared", "-fPIC", "-DVERSION=1"])
        let v2 = try Fixture.compile(source, name: "v2", into: staging, flags: ["-shared", "-fPIC", "-DVERSION=2"])
        let file = Paths.temporaryDirectory("isolation-hot-plugins") + "/hot.so"
        try FileManager.default.copyItem(atPath: v1, toPath: file)
        _ = try host.registry.load(file: file).get()
        // Started (looked up and handed to the old worker) before the replacement.
        let slow = StartedCall(host.registry, "hot_slow", #"{"ms": 300}"#)
        try FileManager.default.removeItem(atPath: file)
        try FileManager.default.copyItem(atPath: v2, toPath: file)
        _ = try host.registry.load(file: file).get()
        #expect(await host.registry.invoke("hot_version", arguments: "{}").result == .int(2))
        // The call that was running finishes on the old worker, which is then stopped.
        await Self.eventually("the slow call finished") { slow.outcome != nil }
        #expect(slow.outcome?.result == .int(1))
        await Self.eventually("the old worker was retired") { host.registry.pendingRetirements == 0 }
    }

    /// In-process, the faults that do not kill the process have these outcomes: a hung call times out and its
    /// thread is abandoned (a cooperative skill would stop; this one never looks); stdout goes to the host's own
    /// standard output; bad results are errors.
    @Test func inProcessFaultsHaveTheirDocumentedOutcomes() async throws {
        let clock = ManualClock()
        let host = try Host(isolated: [], clock: clock)
        try await host.load("faults.c")
        #expect(host.registry.plugins.first?.isolation == .inProcess)
        for (index, skill) in ["fault_spin", "fault_block"].enumerated() {
            let call = StartedCall(host.registry, skill, timeout: .milliseconds(200))
            await Self.eventually("\(skill) is inside the plugin") {
                host.registry.invokeOnCurrentThread("fault_inside", arguments: "{}").result == .int(Int64(index + 1))
            }
            clock.advance(by: .milliseconds(200))
            #expect(call.outcome?.error == "\(skill) timed out after 200 ms")
        }
        #expect(host.registry.poolStatistics.abandonedThreads == 2)
        #expect(await host.registry.invoke("fault_stdout", arguments: "{}").result == "printed")
        #expect(
            await host.registry.invoke("fault_huge", arguments: "{}").error?.hasPrefix(
                "the result of fault_huge is 64.0 MB") == true)
        #expect(await host.registry.invoke("fault_utf8", arguments: "{}").status == .error)
        #expect(await host.registry.invoke("fault_json", arguments: "{}").status == .error)
        #expect(await host.registry.invoke("fault_ok", arguments: "{}").result?["pid"] == .int(Int64(getpid())))
        _ = await host.registry.invoke("fault_release", arguments: "{}")
        await Self.eventually("the spinning thread returned") { host.registry.poolStatistics.abandonedThreads == 1 }
    }
}

/// The worker's record of its calls: a cancel may arrive on the main channel before its call arrives on the lane.
struct WorkerCallsTests {
    @Test func aCancelThatCameFirstCancelsTheCallWhenItArrives() {
        var calls = WorkerCalls()
        let unknown = calls.cancel(7)
        #expect(unknown == nil)
        let seven = calls.start(7, CallCancellation())
        let eight = calls.start(8, CallCancellation())
        #expect(seven && !eight)
        let running = CallCancellation()
        _ = calls.start(9, running)
        let nine = calls.cancel(9)
        #expect(nine === running)
        #expect(calls.cancelledEarly.isEmpty)
    }

    @Test func cancelsNeverClaimedAreForgottenOldestFirst() {
        var calls = WorkerCalls()
        for id in Int64(1)...100 { _ = calls.cancel(id) }
        #expect(calls.cancelledEarly.count == 64)
        #expect(calls.cancelledEarly.min() == 37)
        let newest = calls.start(100, CallCancellation())
        let oldest = calls.start(1, CallCancellation())
        #expect(newest && !oldest)
    }
}
