import Foundation

/// Folders and files that hold a user's data (chat history, plugin data) are the user's alone: created 0700 / 0600
/// whatever the umask, and tightened — with a notice — when an earlier version left them readable by others.
package enum PrivateFiles {
    /// Creates `path` (and missing parents) as a directory only its owner can enter. Returns a notice when an
    /// existing directory had group or other permissions and was tightened.
    /// - Throws: `CocoaError`/`POSIXError` with the reason when it cannot be created.
    package static func directory(_ path: String) throws -> String? {
        var isDirectory: ObjCBool = false
        if !FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            try FileManager.default.createDirectory(
                atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            _ = chmod(path, 0o700)  // the umask may have narrowed nothing, but never widen: set it exactly
            return nil
        }
        return tighten(path, to: 0o700)
    }

    /// Makes the file at `path` readable and writable by its owner only, creating it empty when `create` is set.
    /// Returns a notice when an existing file was tightened.
    package static func file(_ path: String, create: Bool) -> String? {
        if create, !FileManager.default.fileExists(atPath: path) {
            let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            if descriptor >= 0 {
                close(descriptor)
                return nil
            }
        }
        return tighten(path, to: 0o600)
    }

    /// Writes `bytes` to a new file at `path` (never an existing one, never through a symbolic link), without the
    /// temporary file, `fsync` and rename of an atomic write: for scratch files this process uses at once and
    /// removes (a plugin's private copy, a folder's owner mark), whose durability does not matter. Returns 0, or the
    /// errno value of the step that failed (the partly written file is removed).
    package static func writeScratch(_ path: String, _ bytes: [UInt8], mode: mode_t = 0o600) -> Int32 {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode)
        guard descriptor >= 0 else { return errno }
        var written = 0
        var failure: Int32 = 0
        bytes.withUnsafeBytes { raw in
            while written < raw.count, let base = raw.baseAddress {
                let count = write(descriptor, base + written, raw.count - written)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else {
                    failure = count < 0 ? errno : ENOSPC
                    return
                }
                written += count
            }
        }
        close(descriptor)
        if failure != 0 { unlink(path) }
        return failure
    }

    private static func tighten(_ path: String, to mode: mode_t) -> String? {
        var status = stat()
        guard stat(path, &status) == 0, status.st_uid == geteuid() else { return nil }
        let current = status.st_mode & 0o777
        guard current & 0o077 != 0 else { return nil }
        guard chmod(path, current & ~0o077 | (mode & 0o700)) == 0 else {
            return "\(path) can be read by other users (mode \(String(current, radix: 8))) and could not be tightened: "
                + "\(String(cString: strerror(errno))); run chmod \(String(mode, radix: 8)) \(path)"
        }
        return "tightened the permissions of \(path) from \(String(current, radix: 8)) to "
            + "\(String(current & ~0o077 | (mode & 0o700), radix: 8)): other users could read it"
    }
}
