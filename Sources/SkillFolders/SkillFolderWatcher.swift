import Foundation
import SkillHost
import Synchronization

/// Hot reload of skill folders: inotify on every root and every skill folder (with its subfolders, two levels
/// down), on a thread of its own. Any change — a folder moved in or removed, a SKILL.md written — is debounced,
/// then the roots are scanned again, the tools registered anew and `report` told what changed, one line each
/// (`+ skill folder greet (…)`, `- skill folder greet`, `~ skill folder greet: changed`). A root that does not
/// exist yet is looked for every second.
package final class SkillFolderWatcher: Sendable {
    /// Watches at most (a tree larger than this is watched in part, said once).
    package static let maximumWatches = 4096

    private let descriptor: Int32
    private let stopped = Flag()

    /// Set once, read by the watcher's thread.
    final class Flag: Sendable {
        private let value = Atomic<Bool>(false)
        func set() { value.store(true, ordering: .relaxed) }
        var isSet: Bool { value.load(ordering: .relaxed) }
    }

    package init(
        tools: SkillFolderTools, registry: SkillRegistry, debounce: Duration = .milliseconds(100),
        report: @escaping @Sendable ([String]) -> Void
    ) {
        descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        let descriptor = self.descriptor
        let stopped = self.stopped
        guard descriptor >= 0 else {
            report(["! skill folders are not watched (inotify: \(String(cString: strerror(errno)))); /reload rescans"])
            return
        }
        // The watches exist before init returns: a folder dropped in right afterwards is not missed.
        let initial = Self.watch(tools, descriptor: descriptor, existing: [:])
        let thread = Thread {
            var watches = initial
            var before = tools.scan
            var missing = Set(tools.roots.map(\.path).filter { !FileManager.default.fileExists(atPath: $0) })
            var dirty: ContinuousClock.Instant?
            var buffer = [UInt8](repeating: 0, count: 64 << 10)
            while !stopped.isSet {
                var fds = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)]
                let wait = dirty.map { max(1, Int32((($0 + debounce) - .now).milliseconds.rounded(.up))) } ?? 1000
                _ = poll(&fds, 1, min(wait, 1000))
                if stopped.isSet { break }
                if fds[0].revents & Int16(POLLIN) != 0 {
                    while buffer.withUnsafeMutableBytes({ read(descriptor, $0.baseAddress, $0.count) }) > 0 {}
                    dirty = dirty ?? .now
                }
                // A root that did not exist and does now is a change too (one that exists but cannot be watched
                // is not looked at again and again).
                let appeared = missing.filter { FileManager.default.fileExists(atPath: $0) }
                if !appeared.isEmpty {
                    missing.subtract(appeared)
                    dirty = dirty ?? .now
                }
                guard let since = dirty, ContinuousClock.now - since >= debounce else { continue }
                dirty = nil
                tools.rescan(into: registry)
                let after = tools.scan
                watches = Self.watch(tools, descriptor: descriptor, existing: watches)
                missing = Set(tools.roots.map(\.path).filter { !FileManager.default.fileExists(atPath: $0) })
                let lines = Self.changes(from: before, to: after)
                before = after
                if !lines.isEmpty { report(lines) }
            }
            close(descriptor)
        }
        thread.name = "skillhost.skill-folders"
        thread.start()
    }

    package func stop() { stopped.set() }

    /// Watches the roots and the skill folders (replacing `existing`, by watch descriptor → path).
    static func watch(_ tools: SkillFolderTools, descriptor: Int32, existing: [Int32: String]) -> [Int32: String] {
        for watch in existing.keys { inotify_rm_watch(descriptor, watch) }
        let mask =
            UInt32(IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_CLOSE_WRITE | IN_DELETE_SELF)
            | UInt32(IN_MOVE_SELF | IN_ATTRIB) | UInt32(IN_ONLYDIR)
        var watches: [Int32: String] = [:]
        func add(_ path: String) {
            guard watches.count < maximumWatches else { return }
            let watch = inotify_add_watch(descriptor, path, mask)
            if watch >= 0 { watches[watch] = path }
        }
        for root in tools.roots { add(root.path) }
        for skill in tools.scan.skills {
            add(skill.folder)
            for entry in (try? FileManager.default.contentsOfDirectory(atPath: skill.folder)) ?? [] {
                var isFolder: ObjCBool = false
                let path = skill.folder + "/" + entry
                if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue {
                    add(path)
                }
            }
        }
        return watches
    }

    /// What changed between two scans, one line per skill folder.
    static func changes(from before: SkillFolderScan, to after: SkillFolderScan) -> [String] {
        var lines: [String] = []
        let old = Dictionary(before.skills.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let new = Dictionary(after.skills.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        for skill in after.skills {
            if let previous = old[skill.name] {
                if previous != skill { lines.append("~ skill folder \(skill.name): changed (\(skill.folder))") }
            } else {
                lines.append("+ skill folder \(skill.name) (\(skill.folder))")
            }
        }
        for skill in before.skills where new[skill.name] == nil { lines.append("- skill folder \(skill.name)") }
        for notice in after.notices where !before.notices.contains(notice) { lines.append("! " + notice) }
        return lines
    }
}
