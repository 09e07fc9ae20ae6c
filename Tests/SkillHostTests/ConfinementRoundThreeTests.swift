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
}
