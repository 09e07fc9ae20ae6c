import Foundation
import Synchronization

/// The host's private directories under `$TMPDIR` (`skillhost-XXXXXX`, holding the private copies of plugins and
/// the workers' temporary files): removed at shutdown, on SIGTERM/SIGHUP/SIGINT (`removeAll`), and — for hosts that
/// died without a word (SIGKILL, a crash) — swept at the next start: each holds an `owner` file with its host's
/// pid, and one whose owner is gone is removed.
package enum TemporaryDirectories {
    private static let live = Mutex<Set<String>>([])
    static let ownerFile = "owner"

    /// Makes a new private directory and records this process as its owner.
    static func create() throws(RegistryError) -> URL {
        let root = temporaryRoot
        var template = Array((root + "/skillhost-XXXXXX").utf8CString)
        guard let created = template.withUnsafeMutableBufferPointer({ $0.baseAddress.flatMap { mkdtemp($0) } }) else {
            throw .cannotCreateDirectory(root, String(cString: strerror(errno)))
        }
        let path = String(cString: created)
        // A mark for the sweep of a later start, not data: written without fsync.
        _ = PrivateFiles.writeScratch(path + "/" + ownerFile, Array("\(getpid())".utf8))
        live.withLock { _ = $0.insert(path) }
        return URL(fileURLWithPath: path)
    }

    /// `$TMPDIR`, else `/tmp` — what `NSTemporaryDirectory()` gives, read without it: its first call in a process
    /// took 0.4 ms of every worker's start.
    static var temporaryRoot: String {
        guard let value = getenv("TMPDIR").map({ String(cString: $0) }), !value.isEmpty else { return "/tmp" }
        return value
    }

    static func remove(_ directory: URL) {
        try? FileManager.default.removeItem(at: directory)
        live.withLock { _ = $0.remove(directory.path) }
    }

    /// Removes every directory this process still has (for a signal handler that is about to exit).
    package static func removeAll() {
        for path in live.withLock({ Array($0) }) { try? FileManager.default.removeItem(atPath: path) }
    }

    /// Removes the directories of hosts that are gone (this user's only; ones without an owner file are left
    /// alone). Returns how many were removed.
    @discardableResult
    package static func sweepStale(in folder: String = NSTemporaryDirectory()) -> Int {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        var removed = 0
        for name in names where name.hasPrefix("skillhost-") && name.count == "skillhost-XXXXXX".count {
            let path = (folder as NSString).appendingPathComponent(name)
            var status = stat()
            guard lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFDIR, status.st_uid == geteuid(),
                case .success(.bytes(let bytes)) = BoundedFile.read(path + "/" + ownerFile, limit: 64),
                let text = Optional(String(decoding: bytes, as: UTF8.self)),
                let owner = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)), owner > 0
            else { continue }
            // kill(pid, 0) fails with ESRCH when no such process exists (EPERM: it exists, as another user's).
            guard kill(owner, 0) != 0, errno == ESRCH else { continue }
            if (try? FileManager.default.removeItem(atPath: path)) != nil { removed += 1 }
        }
        return removed
    }
}
