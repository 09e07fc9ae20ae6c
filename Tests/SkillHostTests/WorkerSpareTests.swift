import Foundation
import TestSupport
import Testing

@testable import SkillHost

/// The spare C worker (`WorkerSpares`): made once a start has finished, taken by the next start (here a restart after
/// a crash), which then runs exactly as a worker started for the plugin; a spare that died is not used. Each test
/// has an executable path of its own (spares are kept per executable), so no test running beside it takes its spare.
@Suite(.serialized)
struct WorkerSpareTests {
    /// A private path to the C worker, a host whose process-mode plugins run on it with `fixture` loaded, and the
    /// spare that first start made, once it is ready. The caller discards the spare (`WorkerSpares.discard`).
    static func hostWithSpare(_ name: String, loading fixture: String) async throws -> (
        host: IsolationTests.Host, executable: String, spare: pid_t
    ) {
        let executable = Paths.temporaryDirectory(name) + "/skillhost-worker"
        #expect(symlink(Paths.products + "/skillhost-worker", executable) == 0)
        let host = try IsolationTests.Host(worker: .native) {
            $0.nativeWorker = executable
            $0.maximumCrashes = 100  // the kills below are crashes on purpose
        }
        try await host.load(fixture)
        await IsolationTests.eventually("a spare is ready") { WorkerSpares.shared.ready(executable) != nil }
        return (host, executable, try #require(WorkerSpares.shared.ready(executable)))
    }

    @Test func aRestartTakesTheSpareWhichRunsAsAWorkerStartedForThePlugin() async throws {
        let (host, executable, spare) = try await Self.hostWithSpare("spare", loading: "faults.c")
        defer { WorkerSpares.shared.discard(executable) }
        let first = try #require(await host.registry.invoke("fault_env", arguments: "{}").result)
        #expect(await host.registry.invoke("fault_sigkill", arguments: "{}").status == .error)
        #expect(await host.answeringWorkerPID() == Int64(spare), "the restart took the spare")
        #expect(WorkerSpares.shared.ready(executable) != spare)
        _ = try await IsolationTests.expectStartedForThePlugin(host, pid: spare, first: first)
        // Its short scheduling slice, where the kernel shows one (EEVDF, Linux 6.12 and later).
        let scheduling = (try? String(contentsOfFile: "/proc/\(spare)/sched", encoding: .utf8)) ?? ""
        if let line = scheduling.split(separator: "\n").first(where: { $0.hasPrefix("se.slice") }) {
            #expect(line.split(separator: ":").last?.trimmingCharacters(in: .whitespaces) == "100000", "\(line)")
        }
        await IsolationTests.eventually("the next spare is ready") {
            let ready = WorkerSpares.shared.ready(executable)
            return ready != nil && ready != spare
        }
    }

    /// A plugin loaded for the first time takes the spare too, and peeks from it: the declaration its peek reports
    /// (faults declares EXEC and WRITE_FS) is the one the plugin is confined with.
    @Test func aNewPluginTakesTheSpareAndPeeksFromIt() async throws {
        let (host, executable, spare) = try await Self.hostWithSpare("spare-peek", loading: "behaviours.c")
        defer { WorkerSpares.shared.discard(executable) }
        try await host.load("faults.c")
        #expect(await host.workerPID() == Int64(spare), "the new plugin took the spare")
        let report = try #require(host.registry.catalog.plugin(named: "faults")?.confinement)
        #expect(report.confinement.capabilities.contains(.runPrograms), "\(report)")
        await IsolationTests.eventually("the peek child is gone") { IsolationTests.children(of: spare).isEmpty }
    }

    /// A spare holds its standby peek child while it waits: confined for its calls already (no new privileges, no
    /// capabilities, the filter loaded), holding nothing of the spare's but its two pipes — and the Landlock ruleset
    /// it built ahead for the peek's lists —, titled as the spare is, and gone with the spare.
    @Test func aSpareHoldsAStandbyPeekChildConfinedForItsCalls() async throws {
        let (_, executable, spare) = try await Self.hostWithSpare("spare-standby", loading: "behaviours.c")
        var discarded = false
        defer { if !discarded { WorkerSpares.shared.discard(executable) } }
        await IsolationTests.eventually("the standby child is there") {
            IsolationTests.children(of: spare).count == 1
        }
        let entry = try #require(IsolationTests.children(of: spare).first)
        let child = try #require(pid_t(entry.prefix { $0 != " " }))
        let status = try String(contentsOfFile: "/proc/\(child)/status", encoding: .utf8)
        for field in ["NoNewPrivs:\t1", "Seccomp:\t2", "CapEff:\t0000000000000000", "CapBnd:\t0000000000000000"] {
            #expect(status.contains(field), "\(field) in \(status)")
        }
        func descriptors() -> [Int: String] {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(child)/fd")) ?? []
            return Dictionary(
                names.compactMap { name in
                    Int(name).map {
                        (
                            $0,
                            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(child)/fd/\(name)"))
                                ?? ""
                        )
                    }
                }, uniquingKeysWith: { first, _ in first })
        }
        await IsolationTests.eventually("the rules are built") { descriptors().count == 6 }
        let open = descriptors()
        #expect(open.keys.sorted() == [0, 1, 2, 3, 4, 5], "\(open)")
        #expect(open[5] == "anon_inode:[landlock-ruleset]", "\(open)")
        let title = try String(contentsOfFile: "/proc/\(child)/cmdline", encoding: .utf8)
        #expect(title.hasPrefix("skillhost-worker --spare\0"), "\(title)")
        WorkerSpares.shared.discard(executable)
        discarded = true
        await IsolationTests.eventually("the standby child is gone") {
            let stat = (try? String(contentsOfFile: "/proc/\(child)/stat", encoding: .utf8)) ?? ""
            return stat.isEmpty || stat.split(separator: ")").last?.split(separator: " ").first == "Z"
        }
    }

    /// A launch longer than the pipe holds waits for the spare to read it, at most `launchTimeout`: a spare that
    /// stopped reading is given up (the start then spawns its worker) instead of holding the start for ever.
    @Test func aSpareThatDoesNotReadItsLaunchIsGivenUp() async throws {
        let (_, executable, spare) = try await Self.hostWithSpare("spare-stopped", loading: "behaviours.c")
        defer { WorkerSpares.shared.discard(executable) }
        #expect(kill(spare, SIGSTOP) == 0)
        let taken = try await offPool {
            WorkerSpares.shared.take(executable, arguments: ["--file", String(repeating: "x", count: 1 << 20)])
        }
        #expect(taken == nil)
        #expect(WorkerSpares.shared.ready(executable) == nil)
        #expect(IsolationTests.children(of: spare).isEmpty && kill(spare, 0) != 0, "the stopped spare was ended")
    }

    @Test func aDeadSpareIsNotUsed() async throws {
        let (host, executable, spare) = try await Self.hostWithSpare("spare-dead", loading: "faults.c")
        defer { WorkerSpares.shared.discard(executable) }
        #expect(kill(spare, SIGKILL) == 0)
        await IsolationTests.eventually("the spare is dead") { IsolationTests.hasEnded(spare) }
        #expect(await host.registry.invoke("fault_sigkill", arguments: "{}").status == .error)
        let restarted = try #require(await host.answeringWorkerPID(), "a worker started directly answers")
        #expect(restarted != Int64(spare))
        await IsolationTests.eventually("a new spare is ready") {
            let ready = WorkerSpares.shared.ready(executable)
            return ready != nil && ready != spare
        }
    }
}
