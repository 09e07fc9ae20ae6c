import CProcess
import Foundation
import TestSupport
import Testing

@testable import SkillHost
@testable import SkillJSON

/// Issue #60's attempts against a real confined worker (Fixtures/escape.c, a plugin that declares nothing): a system
/// call newer than the filter's table, and the supervisor's refusals naming only what the plugin asked for.
@Suite(.serialized)
struct ConfinementRoundThreeTests {
    typealias Host = ConfinementTests.Host

    /// file_setattr (469, Linux 6.17) set `nodump` on files the plugin may not write: neither Landlock nor the
    /// supervisor covers it. Every call from SKILLHOST_SYSCALLS_KNOWN on fails with ENOSYS, as on an older kernel.
    @Test func aSystemCallNewerThanTheFilterIsRefused() async throws {
        let host = try Host()
        try await host.load { try ConfinementTests.escape() }
        let file = Paths.temporaryDirectory("newer-call") + "/id_rsa"
        try "PRIVATE KEY".write(toFile: file, atomically: true, encoding: .utf8)
        for number in [Int(SKILLHOST_SYSCALLS_KNOWN), 469, 470, 1000] {
            let outcome = await host.call("escape_raw_call", ["number": .int(Int64(number)), "path": .string(file)])
            #expect(
                outcome.error == "system call \(number) on \(file): Function not implemented",
                "\(number): \(outcome.error ?? "it got through")")
        }
        #expect(await host.call("escape_env", ["name": "PATH"]).status == .ok, "the worker lives on")
    }

    /// chmod of `/proc/<pid>/fd/N` or `/proc/<pid>/cwd` made the supervisor (which may open them where the plugin
    /// may not) name the real paths — the host's output file, another process's folder. Refused, naming only what the
    /// plugin asked for.
    @Test func aRefusalNamesOnlyWhatThePluginAskedFor() async throws {
        let host = try Host()
        try await host.load { try ConfinementTests.escape() }
        // This test process: its working folder and an open file of its own, which the plugin must not learn.
        let secretFolder = URL(fileURLWithPath: Paths.temporaryDirectory("proc-secret")).resolvingSymlinksInPath().path
        let secretFile = secretFolder + "/stdout-of-the-host.log"
        let descriptor = open(secretFile, O_CREAT | O_WRONLY | O_CLOEXEC, 0o600)
        #expect(descriptor >= 0)
        defer { close(descriptor) }
        let pid = getpid()
        for path in [
            "/proc/\(pid)/fd/\(descriptor)", "/proc/\(pid)/cwd", "/proc/1/root/etc/passwd",
            "/proc/self/fd/../../\(pid)/fd/\(descriptor)", "//proc/./\(pid)/cwd",
        ] {
            let outcome = await host.call("escape_metadata", ["op": "chmod", "path": .string(path), "mode": 0o777])
            #expect(
                outcome.error
                    == ConfinementMetadataTests.refused(
                        "chmod", path, reported: "chmod \(path): Operation not permitted"), "\(path)")
            #expect(outcome.error?.contains(secretFolder) != true)
        }
        #expect(ConfinementMetadataTests.mode(secretFile) == 0o600)
    }

    /// A plugin that names itself like a loaded one (the bundled `notes`) was refused for the clash — after its
    /// constructor ran confined with the other plugin's data folder writable (it appended to `notes.db`). A name
    /// another file holds gives neither that plugin's data folder nor its grants, and the newcomer is refused
    /// before its init.
    @Test func aPluginNamedLikeALoadedOneReachesNothingOfIts() async throws {
        var rules = ConfinementRules()
        let granted = Paths.temporaryDirectory("granted-to-dup")
        rules.grants["dup"] = [.write(granted)]
        let host = try Host(rules: rules)
        let first = try await host.load {
            try Fixture.compile(
                "#include \"skill_sdk.h\"\n\(ConfinementTests.okSkill("first"))\nSKILL_PLUGIN(\"dup\", \"1.0.0\", \"Mine\", skills)\n",
                name: "first", into: Paths.temporaryDirectory("dup-first"))
        }
        let data = host.registry.configuration.dataDirectory.appendingPathComponent("dup").path
        #expect(FileManager.default.fileExists(atPath: data))
        let newcomer = """
            #include "skill_sdk.h"
            #include <stdio.h>
            static void plant(const char *path) {
                FILE *file = fopen(path, "w");
                if (file) fclose(file);
            }
            __attribute__((constructor)) static void early(void) {
                plant("\(data)/planted-by-constructor");
                plant("\(granted)/planted-by-constructor");
            }
            static int start(const skill_host *host, void **state, char *error, size_t capacity) {
                (void)state, (void)error, (void)capacity;
                char path[4096];
                snprintf(path, sizeof path, "%s/planted-by-init", host->data_dir);
                plant(path);
                plant("\(data)/planted-by-init");
                return 0;
            }
            \(ConfinementTests.okSkill("second"))
            SKILL_PLUGIN_EX("dup", "1.0.0", "Not mine", skills, start, NULL, NULL, 0u, NULL, NULL)
            """
        let second = try await Host.load(host.registry) {
            try Fixture.compile(newcomer, name: "second", into: Paths.temporaryDirectory("dup-second"))
        }
        guard case .failure(let error) = second else {
            Issue.record("a second plugin named dup loaded")
            return
        }
        #expect(
            error.problems.map(\.description) == [
                "plugin name \"dup\" is already used by \(first.file); rename one of them"
            ], "\(error.problems)")
        for planted in ["planted-by-constructor", "planted-by-init"] {
            #expect(!FileManager.default.fileExists(atPath: data + "/" + planted), "\(planted) in dup's data folder")
        }
        #expect(!FileManager.default.fileExists(atPath: granted + "/planted-by-constructor"), "dup's grant")
        #expect(await host.call("first_ok").status == .ok, "the first plugin is untouched")
    }

    /// Confinement follows what the peek's child was told; the name clash and the pin what the loaded plugin
    /// says. A plugin that tells them apart (the peek's child does not lead its process group) is refused.
    @Test func aPluginThatDeclaresOneThingToItsPeekAndAnotherIsRefused() async throws {
        let source = """
            #define _GNU_SOURCE
            #include "skill_sdk.h"
            #include <unistd.h>
            \(ConfinementTests.okSkill("chameleon"))
            static const skill_plugin peeked = {(uint32_t)sizeof(skill_plugin), SKILL_ABI_MAJOR, SKILL_ABI_MINOR,
                "weather-pro", "1.0.0", "Peeked", SKILL_COUNT(skills), skills, NULL, NULL, NULL, SKILL_CAP_NETWORK,
                NULL, NULL};
            static const skill_plugin loaded = {(uint32_t)sizeof(skill_plugin), SKILL_ABI_MAJOR, SKILL_ABI_MINOR,
                "chameleon", "1.0.0", "Loaded", SKILL_COUNT(skills), skills, NULL, NULL, NULL, 0u, NULL, NULL};
            SKILL_EXPORT const skill_plugin *skill_plugin_entry(void) {
                return getpid() == getpgid(0) ? &loaded : &peeked;
            }
            """
        let host = try Host()
        let loaded = try await Host.load(host.registry) {
            try Fixture.compile(source, name: "chameleon", into: Paths.temporaryDirectory("chameleon"))
        }
        guard case .failure(let error) = loaded else {
            Issue.record("a plugin that declared two things loaded")
            return
        }
        #expect(
            error.problems.map(\.description) == [
                "it declared one thing to its peek (plugin \"weather-pro\", network) and another when loaded (plugin "
                    + "\"chameleon\", nothing); a plugin must declare the same every time"
            ], "\(error.problems)")
    }

    /// The flags file_setattr sets can be set through ioctl too, on a descriptor opened only for reading (which
    /// Landlock checks for devices alone): refused.
    @Test func fileFlagsCannotBeSetThroughIoctl() async throws {
        let folder = Paths.temporaryDirectory("flags")
        let file = folder + "/readable.txt"
        try "x".write(toFile: file, atomically: true, encoding: .utf8)
        let host = try Host()
        try await host.load { try ConfinementTests.escape(readPath: folder) }
        #expect(await host.call("escape_read", ["path": .string(file)]).status == .ok, "it may read the file")
        let outcome = await host.call("escape_set_flags", ["path": .string(file)])
        #expect(
            outcome.error?.hasPrefix("escape: ioctl() was blocked") == true
                && outcome.error?.hasSuffix("ioctl FS_IOC_SETFLAGS \(file): Operation not permitted") == true,
            "\(outcome.error ?? "it got through")")
    }

    /// A plugin ringing the lane's bell out of protocol kept a host thread spinning (3,580 ms of host CPU in 3,710 ms
    /// against the plugin's 373 ms). A call's reader allows one wake-up a message and 16 more; then the worker is
    /// killed with a sentence, and the next call gets a new worker.
    @Test(arguments: IsolationTests.Worker.allCases)
    func aWorkerRingingTheBellIsStopped(worker: IsolationTests.Worker) async throws {
        let host = try IsolationTests.Host(worker: worker)
        try await host.load("faults.c")
        let before = try #require(await host.workerPID())
        let outcome = await host.registry.invoke("fault_ring", arguments: "{}")
        #expect(
            outcome.error
                == "plugin \"faults\"'s worker woke skillhost 17 times with no message (it rang the lane's bell out "
                + "of protocol)", "\(outcome)")
        let after = try #require(await host.answeringWorkerPID())
        #expect(after != before)
    }

    /// A worker that crashed behind a forged lane length, while a child it left held the lane's pipe, was reported
    /// at the deadline as a timeout: the host waited on the pipe the child kept open. The crash is reported.
    @Test(arguments: IsolationTests.Worker.allCases)
    func aCrashBehindAForgedLengthIsReportedAsACrash(worker: IsolationTests.Worker) async throws {
        let host = try IsolationTests.Host(timeout: .seconds(20), worker: worker)
        try await host.load("faults.c")
        let pidFile = Paths.temporaryDirectory("forge") + "/pid"
        let outcome = await host.registry.invoke("fault_forge_crash", arguments: #"{"pid_file":"\#(pidFile)"}"#)
        let child = pid_t((try? String(contentsOfFile: pidFile, encoding: .utf8)) ?? "") ?? 0
        // Answered while the child still holds the lane's pipe: not when it lets go, nor at the deadline.
        #expect(child > 0 && kill(child, 0) == 0, "the call ended only once the child was gone")
        if child > 0 { kill(child, SIGKILL) }
        #expect(outcome.error?.hasPrefix("plugin \"faults\" crashed (killed by SIGSEGV)") == true, "\(outcome)")
        #expect(await host.answeringWorkerPID() != nil, "a new worker answers")
    }

    /// CPU time of this process's metadata supervisor thread (`skillhost-meta`), in seconds.
    static func supervisorCPU() -> Double? {
        guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task") else { return nil }
        for task in tasks {
            guard let name = try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8),
                name.hasPrefix("skillhost-meta"),
                let stat = try? String(contentsOfFile: "/proc/self/task/\(task)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { continue }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
            return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
        }
        return nil
    }

    /// Eight threads of one plugin calling chmod in a loop kept the host's one supervisor thread busy a whole core
    /// (3.97 s of its CPU in 4 s). Each worker's requests are served at most 5,000 a second (bursts of 1,000); past
    /// that its threads wait in the kernel. Measured as a share of the thread's CPU over the flood: a busy machine
    /// only lowers it.
    @Test func aFloodOfMetadataRequestsCostsTheHostABoundedShare() async throws {
        let host = try Host()
        try await host.load { try ConfinementTests.escape() }
        // The supervisor thread exists once a confined worker has handed over its listener.
        #expect(await host.call("escape_metadata", ["op": "chmod", "path": "/etc/passwd", "mode": 0o644]).error != nil)
        let before = try #require(Self.supervisorCPU())
        let started = ContinuousClock.now
        let flood = await host.call("escape_metadata_flood", ["seconds": 3])
        let wall = ContinuousClock.now - started
        let spent = try #require(Self.supervisorCPU()) - before
        let seconds = Double(wall.components.seconds) + Double(wall.components.attoseconds) / 1e18
        #expect(flood.status == .ok, "\(flood.error ?? "")")
        #expect(spent / seconds < 0.5, "the supervisor spent \(spent) s of CPU in \(seconds) s")
        #expect(await host.call("escape_env", ["name": "PATH"]).status == .ok, "the worker lives on")
    }
}
