import Foundation
import TestSupport
import Testing

@testable import SkillHost
@testable import SkillJSON

/// Metadata — a file's mode, owner, times and extended attributes — which Landlock does not cover (issue #28, the
/// first hole): a supervisor makes such a change only beneath what the plugin may write, never on a device and
/// never adding a set-user-ID bit, and refuses everything else with a sentence naming the file.
@Suite(.serialized)
struct ConfinementMetadataTests {
    typealias Host = ConfinementTests.Host

    static func mode(_ path: String) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? nil
    }

    static func modified(_ path: String) -> Date? {
        (try? FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date) ?? nil
    }

    /// The sentence for a metadata change refused outside what the plugin may write.
    static func refused(_ call: String, _ path: String, reported: String) -> String {
        "escape: \(call)() of \(path) was blocked (a plugin may change modes, owners, times and extended attributes "
            + "only where it may write; grant a folder with \"isolation.grant.escape\": [\"write:<folder>\"]); it "
            + "reported: \(reported)"
    }

    @Test func metadataChangesOnlyWhereThePluginMayWrite() async throws {
        // Canonical paths: a descriptor's refusal names the file where it really lies.
        let home = URL(fileURLWithPath: Paths.temporaryDirectory("metadata-home")).resolvingSymlinksInPath().path
        let shared = home + "/shared"
        try FileManager.default.createDirectory(atPath: home + "/.ssh", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: true)
        let key = home + "/.ssh/id_rsa"
        let notes = shared + "/notes.txt"
        try "-----BEGIN OPENSSH PRIVATE KEY-----".write(toFile: key, atomically: true, encoding: .utf8)
        try "mine".write(toFile: notes, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: key)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: notes)
        let keyTime = Self.modified(key)
        let host = try Host()
        // It may read `shared` (so it holds descriptors of files there), and write only its data dir.
        try await host.load { try ConfinementTests.escape("escape", readPath: shared) }

        // By path, by *at with no-follow, by a descriptor opened for reading: all refused outside.
        for (op, call) in [
            ("chmod", "chmod"), ("fchmodat_nofollow", "chmod"), ("chown", "chown"), ("utimensat", "utimensat"),
            ("setxattr", "setxattr"), ("removexattr", "removexattr"),
        ] {
            let outcome = await host.call("escape_metadata", ["op": .string(op), "path": .string(key), "mode": 0o644])
            #expect(
                outcome.error == Self.refused(call, key, reported: "\(op) \(key): Operation not permitted"), "\(op)")
        }
        for (op, call) in [
            ("fchmod", "fchmod"), ("fchown", "fchown"), ("futimens", "utimensat"), ("fsetxattr", "fsetxattr"),
        ] {
            let outcome = await host.call(
                "escape_metadata", ["op": .string(op), "path": .string(notes), "mode": 0o666])
            #expect(
                outcome.error == Self.refused(call, notes, reported: "\(op) \(notes): Operation not permitted"),
                "\(op)")
        }
        #expect(Self.mode(key) == 0o600)
        #expect(Self.mode(notes) == 0o644)
        #expect(Self.modified(key) == keyTime)

        // A symlink in its own folder to the key: the object is checked, not the name — and the refusal names what
        // the plugin asked for, not where the link led.
        let data = URL(fileURLWithPath: host.registry.configuration.dataDirectory.appendingPathComponent("escape").path)
            .resolvingSymlinksInPath().path
        try FileManager.default.createSymbolicLink(atPath: data + "/link", withDestinationPath: key)
        let link = await host.call("escape_metadata", ["op": "chmod", "path": .string(data + "/link"), "mode": 0o666])
        #expect(
            link.error == Self.refused("chmod", data + "/link", reported: "chmod \(data)/link: Operation not permitted")
        )
        #expect(Self.mode(key) == 0o600)

        // Nor can the key be brought into its folder first: no hard link, no rename (Landlock's rule for moving
        // between folders).
        let hardLink = await host.call("escape_link", ["from": .string(key), "to": .string(data + "/key")])
        #expect(hardLink.error == "link \(key): Invalid cross-device link", "\(hardLink.error ?? "")")
        let moved = await host.call(
            "escape_link", ["from": .string(key), "to": .string(data + "/key"), "rename": true])
        #expect(moved.error?.hasPrefix("rename \(key): Permission denied (the plugin is confined") == true)
        #expect(FileManager.default.fileExists(atPath: key))

        // In its own folder, every form works.
        let own = data + "/state"
        #expect(await host.call("escape_write", ["path": .string(own)]).status == .ok)
        for (op, mode) in [("chmod", 0o640), ("fchmod", 0o600), ("fchmodat_nofollow", 0o644)] {
            let outcome = await host.call(
                "escape_metadata", ["op": .string(op), "path": .string(own), "mode": .int(Int64(mode))])
            #expect(outcome.status == .ok, "\(op): \(outcome.error ?? "")")
            #expect(Self.mode(own) == mode, "\(op)")
        }
        for op in ["chown", "fchown", "utimensat", "futimens"] {
            let outcome = await host.call("escape_metadata", ["op": .string(op), "path": .string(own)])
            #expect(outcome.status == .ok, "\(op): \(outcome.error ?? "")")
        }
        // Extended attributes where the file system has them (tmpfs and ext4 do; some overlays do not).
        let attribute = await host.call("escape_metadata", ["op": "setxattr", "path": .string(own)])
        #expect(
            attribute.status == .ok || attribute.error?.hasSuffix("Operation not supported") == true,
            "\(attribute.error ?? "")")

        // Never a set-user-ID bit, never a device — not even /dev/null, which it may write.
        let setuid = await host.call("escape_metadata", ["op": "chmod", "path": .string(own), "mode": 0o4755])
        #expect(
            setuid.error
                == "escape: chmod() of \(own) with the set-user-ID or set-group-ID bit was blocked (no plugin may do "
                + "that); it reported: chmod \(own): Operation not permitted")
        let device = await host.call("escape_metadata", ["op": "chmod", "path": "/dev/null", "mode": 0o666])
        #expect(
            device.error
                == "escape: chmod() of the device /dev/null was blocked (no plugin may do that); it reported: chmod "
                + "/dev/null: Operation not permitted")
        #expect(await host.call("escape_env", ["name": "PATH"]).status == .ok, "the worker lives on")
    }

    /// A system call through another ABI (i386's `int 0x80`, an x32 number) names none of the calls the filter
    /// compares: it is blocked with a sentence, where it used to kill the calling thread (a call that never ends).
    @Test(.enabled(if: Self.isX86_64)) func callsThroughAnotherABIAreBlocked() async throws {
        let home = URL(fileURLWithPath: Paths.temporaryDirectory("metadata-abi")).resolvingSymlinksInPath().path
        let file = home + "/file"
        try "x".write(toFile: file, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file)
        let host = try Host()
        try await host.load { try ConfinementTests.escape() }
        for (abi, number) in [("i386", 15), ("x32", 90)] {
            let outcome = await host.call("escape_other_abi", ["abi": .string(abi), "path": .string(file)])
            #expect(
                outcome.error
                    == "escape: a system call through another ABI (number \(number)) was blocked (no plugin may do "
                    + "that); it reported: \(abi): Operation not permitted")
        }
        #expect(Self.mode(file) == 0o600)
        #expect(await host.call("escape_env", ["name": "PATH"]).status == .ok, "the worker lives on")
    }

    /// A worker's metadata changes are answered by a thread of the host (which took the filter's listener before
    /// the plugin loaded), not by a process of the worker's — nothing to fork at start, nothing left behind.
    @Test func theHostSupervisesWithoutAProcess() async throws {
        let host = try Host()
        try await host.load { try ConfinementTests.escape() }
        let data = host.registry.configuration.dataDirectory.appendingPathComponent("escape").path
        let own = data + "/state"
        #expect(await host.call("escape_write", ["path": .string(own)]).status == .ok)
        #expect(await host.call("escape_metadata", ["op": "chmod", "path": .string(own), "mode": 0o640]).status == .ok)
        let threads = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        let names = threads.compactMap { try? String(contentsOfFile: "/proc/self/task/\($0)/comm", encoding: .utf8) }
        #expect(names.contains { $0.hasPrefix("skillhost-meta") }, "the host's supervisor thread")
        let processes = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).filter { entry in
            guard Int(entry) != nil,
                let name = try? String(contentsOfFile: "/proc/\(entry)/comm", encoding: .utf8),
                name.hasPrefix("skillhost-meta"),
                let line = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline")
            else { return false }
            return String(decoding: line, as: UTF8.self).contains(host.registry.configuration.dataDirectory.path)
        }
        #expect(processes.isEmpty, "no supervisor process for a worker")
    }

    static var isX86_64: Bool {
        #if arch(x86_64)
            return true
        #else
            return false
        #endif
    }
}
