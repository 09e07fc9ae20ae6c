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
        for path in ["/proc/\(pid)/fd/\(descriptor)", "/proc/\(pid)/cwd", "/proc/1/root/etc/passwd"] {
            let outcome = await host.call("escape_metadata", ["op": "chmod", "path": .string(path), "mode": 0o777])
            #expect(
                outcome.error == ConfinementMetadataTests.refused(
                    "chmod", path, reported: "chmod \(path): Operation not permitted"), "\(path)")
            #expect(outcome.error?.contains(secretFolder) != true)
        }
        #expect(ConfinementMetadataTests.mode(secretFile) == 0o600)
    }
}
