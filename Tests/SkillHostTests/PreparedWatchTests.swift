import CProcess
import Foundation
import TestSupport
import Testing

@testable import SkillHost

/// The host's watch of the paths spares prepare Landlock's rules for (`skillhost_paths_watch`, real inotify): a
/// change counts when it could make a path of the lists name another file than when the watch began — a file
/// created, removed or renamed in a folder on the way, the file replaced, a folder on the way through a symbolic
/// link renamed — and a change elsewhere does not. Each check reads every event queued, so the next starts afresh.
struct PreparedWatchTests {
    @Test func onlyAChangeThatCouldMakeAPathNameAnotherFileCounts() throws {
        let folder = Paths.temporaryDirectory("prepared-watch")
        let manager = FileManager.default
        let file = folder + "/lists/file.txt"
        let target = folder + "/elsewhere/deep/target"
        let link = folder + "/lists/link"
        for directory in [folder + "/lists", target, folder + "/unrelated"] {
            try manager.createDirectory(atPath: directory, withIntermediateDirectories: true)
        }
        try "one".write(toFile: file, atomically: false, encoding: .utf8)
        try manager.createSymbolicLink(atPath: link, withDestinationPath: target)
        let paths = [file, link, "/proc/self/status", "/nonexistent/skillhost"]
        let owned = paths.map { strdup($0) }
        defer { owned.forEach { free($0) } }
        let watch = owned.map { UnsafePointer($0) }.withUnsafeBufferPointer {
            skillhost_paths_watch($0.baseAddress, Int32($0.count))
        }
        #expect(watch >= 0)
        defer { close(watch) }
        let cases: [(String, Bool, () throws -> Void)] = [
            ("nothing", true, {}),
            (
                "a file made in an unrelated folder", true,
                {
                    try "x".write(toFile: folder + "/unrelated/x", atomically: false, encoding: .utf8)
                }
            ),
            (
                "the file written in place (the same file)", true,
                {
                    try "two".write(toFile: file, atomically: false, encoding: .utf8)
                }
            ),
            (
                "a new file renamed over it", false,
                { try "three".write(toFile: file, atomically: true, encoding: .utf8) }
            ),
            (
                "an entry made in its folder", false,
                {
                    try "n".write(toFile: folder + "/lists/new", atomically: false, encoding: .utf8)
                }
            ),
            (
                "a folder on the way through the link renamed, and made anew", false,
                {
                    try manager.moveItem(atPath: folder + "/elsewhere/deep", toPath: folder + "/elsewhere/old")
                    try manager.createDirectory(atPath: target, withIntermediateDirectories: true)
                }
            ),
            ("the file removed", false, { try manager.removeItem(atPath: file) }),
        ]
        // The folders on the way to the test's own are shared (other tests make folders in them at any moment): a
        // change that must not count is tried until no other event came with it.
        for (change, unchanged, body) in cases {
            var changed = true
            for _ in 0..<(unchanged ? 50 : 1) where changed {
                _ = skillhost_paths_changed(watch)
                try body()
                changed = skillhost_paths_changed(watch) != 0
            }
            #expect(changed == !unchanged, "\(change)")
        }
    }
}
