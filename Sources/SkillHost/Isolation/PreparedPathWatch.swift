import CProcess
import Glibc
import Synchronization

/// The lists a spare prepares Landlock's rules for ahead of its launch (`--prepare`): as the spare reads them, and
/// their paths, which the host watches (`PreparedPathWatch`).
struct StandbyLists: Sendable {
    let text: String
    let paths: [String]
}

/// The host's watch of the paths spares prepare Landlock's rules for (`skillhost_paths_watch`: each path and every
/// folder on the way to it, inotify). A spare notes the watch's count of changes before it starts; when the count is
/// the same at its launch, nothing could have made a prepared path name another file in between, and the launch
/// says so (`--prepared unchanged`): the spare and its standby child then take their rules without a `stat` of
/// each path (about 0.13 ms of the peek's path on this machine). Each list is watched for the host's life: closing
/// an inotify descriptor that holds watches waits for a grace period of the kernel's (up to 14 ms measured).
final class PreparedPathWatch: Sendable {
    static let shared = PreparedPathWatch()

    private struct Watch {
        let descriptor: Int32
        var changes = 0
    }

    /// Lists watched, by their text; a few at most (one host's workers share theirs).
    private let watches = Mutex<[String: Watch]>([:])
    private static let maximumLists = 8

    /// How many times a change was seen in `lists`' paths so far, every event queued until now counted; nil when
    /// they cannot be watched (no inotify, too many lists). Equal before a spare starts and at its launch: nothing
    /// changed in between.
    func mark(_ lists: StandbyLists) -> Int? {
        watches.withLock { watches in
            if watches[lists.text] == nil {
                guard watches.count < Self.maximumLists else { return nil }
                let descriptor = Self.watch(lists.paths)
                guard descriptor >= 0 else { return nil }
                watches[lists.text] = Watch(descriptor: descriptor)
            }
            guard var watch = watches[lists.text] else { return nil }
            if skillhost_paths_changed(watch.descriptor) != 0 { watch.changes += 1 }
            watches[lists.text] = watch
            return watch.changes
        }
    }

    private static func watch(_ paths: [String]) -> Int32 {
        let owned = paths.map { strdup($0) }
        defer { owned.forEach { free($0) } }
        let pointers = owned.map { UnsafePointer($0) }
        return pointers.withUnsafeBufferPointer { skillhost_paths_watch($0.baseAddress, Int32($0.count)) }
    }
}
