import Foundation
import TestSupport
import Testing

@testable import SkillHost
@testable import SkillJSON

/// The audit of what a worker shares with the host (issue #28): for every kernel object a confined plugin could
/// reach another process through, an attempt from a plugin that declares nothing. Each row of the README's table
/// "What is shared with the host, and why it cannot be used" is a test here or in `ConfinementTests`.
@Suite(.serialized)
struct ConfinementAuditTests {
    typealias Host = ConfinementTests.Host

    static func blocked(_ what: String, reported: String) -> String {
        "escape: \(what) was blocked (no plugin may do that); it reported: \(reported): Operation not permitted"
    }

    static func reach(_ host: Host, _ what: String, pid: pid_t = 0, path: String = "") async -> SkillOutcome {
        await host.call(
            "escape_reach", ["what": .string(what), "pid": .int(Int64(pid)), "path": .string(path)])
    }

    /// Another process by its id — its limits, priority, CPU affinity, scheduling, I/O priority, memory placement,
    /// descriptors — which Landlock does not check: `prlimit` set the host's open-file limit to 0 before.
    @Test func anotherProcessIsOutOfReachByItsID() async throws {
        let sibling = Process()
        sibling.executableURL = URL(fileURLWithPath: "/bin/sleep")
        sibling.arguments = ["120"]
        try launch(sibling)
        defer { sibling.terminate() }
        let pid = sibling.processIdentifier
        let limits = try String(contentsOfFile: "/proc/\(pid)/limits", encoding: .utf8)
        let host = try Host()
        try await host.load { try ConfinementTests.escape() }
        let expected = [
            ("prlimit", "prlimit64() of process \(pid)"), ("affinity", "sched_setaffinity() of process \(pid)"),
            ("scheduler", "sched_setscheduler() of process \(pid)"),
            ("migrate_pages", "migrate_pages() of process \(pid)"),
            ("setpriority", "setpriority() of another process, group or user"),
            ("setpriority_user", "setpriority() of another process, group or user"),
            ("ioprio", "ioprio_set() of another process, group or user"), ("pidfd_getfd", "pidfd_getfd()"),
        ]
        for (what, call) in expected {
            let outcome = await Self.reach(host, what, pid: pid)
            #expect(outcome.error == Self.blocked(call, reported: what), "\(what)")
        }
        #expect(try String(contentsOfFile: "/proc/\(pid)/limits", encoding: .utf8) == limits)
        #expect(sibling.isRunning)
        // On itself, the same calls stay allowed.
        #expect(await Self.reach(host, "setpriority", pid: 0).status == .ok)
    }

    /// `kill(-1, …)` signals every process the caller may signal: refused whatever the kernel's Landlock scoping.
    @Test func noSignalToEveryProcessAtOnce() async throws {
        let host = try Host()
        try await host.load { try ConfinementTests.escape() }
        #expect(
            await Self.reach(host, "kill_all").error == Self.blocked("kill() to every process", reported: "kill_all"))
    }

    /// The handler that reports blocked calls cannot be replaced through a signal number with stray high bits (the
    /// kernel reads 32 of them; the rule compared 64): the next blocked call still has its sentence.
    @Test func theBlockedCallHandlerStaysInPlace() async throws {
        let host = try Host()
        try await host.load { try ConfinementTests.escape() }
        #expect(
            await Self.reach(host, "sigaction_high").error
                == Self.blocked("rt_sigaction()", reported: "sigaction_high"))
        #expect(
            await host.call("escape_exec").error
                == ConfinementTests.blocked(
                    "execve() of /bin/sh", needs: "exec", reported: "execve /bin/sh: Operation not permitted"))
    }

    /// inotify watches a file by path, which Landlock does not check: without reading everything, no watch — it
    /// would tell the names and activity of files the plugin may not read. Granted `read`, it may.
    @Test func noWatchingFilesItMayNotRead() async throws {
        let home = Paths.temporaryDirectory("audit-inotify")
        try FileManager.default.createDirectory(atPath: home + "/.ssh", withIntermediateDirectories: true)
        let host = try Host()
        try await host.load { try ConfinementTests.escape() }
        #expect(
            await Self.reach(host, "inotify", path: home + "/.ssh").error
                == "escape: inotify_add_watch() was blocked (the plugin does not declare read; grant it with "
                + "\"isolation.grant.escape\": [\"read\"]); it reported: inotify: Operation not permitted")
        var rules = ConfinementRules()
        rules.grants["reader"] = [.capability(.readFiles)]
        let granted = try Host(rules: rules)
        try await granted.load { try ConfinementTests.escape("reader") }
        let watch = await granted.call("reader_reach", ["what": "inotify", "path": .string(home + "/.ssh")])
        #expect(watch.status == .ok, "\(watch.error ?? "")")
    }

    /// No name other programs would connect to: an abstract UNIX name (or a socket file) it listened on would
    /// receive whoever looks for the service that usually has it.
    @Test func noNameOthersWouldConnectTo() async throws {
        let name = "skillhost-audit-\(UUID().uuidString.prefix(8))"
        let host = try Host()
        try await host.load { try ConfinementTests.escape() }
        #expect(
            await Self.reach(host, "listen", path: name).error
                == ConfinementTests.blocked("bind()", needs: "network", reported: "listen: Operation not permitted"))
        // Nobody listens under that name.
        let client = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(client) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(name.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { path in
            for (index, byte) in bytes.enumerated() { path[index + 1] = byte }
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + 1 + bytes.count)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(client, $0, length) }
        }
        #expect(connected != 0)
    }

    /// What a worker started by root (as CI runs it) could open as the owner of system files, where an ordinary
    /// user could not — it holds no capability, but owner permissions still apply: the TLS private keys folder
    /// (readable to root through the old /etc/ssl rule), password hashes, host keys.
    @Test func whatOnlyRootCouldReadStaysClosed() async throws {
        let host = try Host()
        try await host.load { try ConfinementTests.escape() }
        for path in ["/etc/ssl/private", "/usr/lib/ssl/private", "/etc/shadow", "/etc/ssh", "/root"]
        where FileManager.default.fileExists(atPath: path) {
            #expect(
                await host.call("escape_read", ["path": .string(path)]).error
                    == "open \(path): Permission denied \(ConfinementTests.fileHint)", "\(path)")
        }
        // The certificates a TLS client needs stay readable, through /usr/lib/ssl's links too.
        for path in ["/etc/ssl/certs/ca-certificates.crt", "/usr/lib/ssl/cert.pem", "/etc/ssl/openssl.cnf"]
        where FileManager.default.fileExists(atPath: path) {
            #expect(await host.call("escape_read", ["path": .string(path)]).status == .ok, "\(path)")
        }
    }

    /// What /proc and /dev hold of the host and the machine: the network namespace's sockets and connections
    /// (/proc/self/net), another process's memory, the kernel log, the terminal (TIOCSTI), POSIX queues, shared
    /// memory, the keyrings — none of it; its own /proc/self status stays readable.
    @Test func sharedKernelObjectsStayClosed() async throws {
        let host = try Host()
        try await host.load { try ConfinementTests.escape() }
        let hint = ConfinementTests.fileHint
        for path in ["/proc/self/net/unix", "/proc/net/tcp", "/proc/self/net/tcp6", "/dev/kmsg"] {
            #expect(
                await host.call("escape_read", ["path": .string(path)]).error
                    == "open \(path): Permission denied \(hint)", "\(path)")
        }
        #expect(await host.call("escape_read", ["path": "/proc/self/status"]).status == .ok)
        #expect(
            await host.call("escape_write", ["path": "/dev/shm/skillhost-audit"]).error
                == "open /dev/shm/skillhost-audit for writing: Permission denied \(hint)")
        #expect(!FileManager.default.fileExists(atPath: "/dev/shm/skillhost-audit"))
        // Another program's POSIX message queue (made here through the C library, from Python).
        let queue = "/skillhost-audit-\(getpid())"
        let made = try runProcess(
            "/usr/bin/env",
            [
                "python3", "-c",
                "import ctypes, os, sys; libc = ctypes.CDLL(None); "
                    + "sys.exit(0 if libc.mq_open(sys.argv[1].encode(), os.O_CREAT | os.O_RDWR, 0o600, None) >= 0 else 1)",
                queue,
            ])
        #expect(made.status == 0, "\(made.stderr)")
        defer {
            _ = try? runProcess(
                "/usr/bin/env",
                ["python3", "-c", "import ctypes, sys; ctypes.CDLL(None).mq_unlink(sys.argv[1].encode())", queue])
        }
        #expect(await Self.reach(host, "mq_open", path: queue).error == "mq_open: Permission denied \(hint)")
        #expect(await Self.reach(host, "keyctl").error == Self.blocked("keyctl()", reported: "keyctl"))
        #expect(await Self.reach(host, "terminal").error == "terminal: Permission denied \(hint)")
    }
}
