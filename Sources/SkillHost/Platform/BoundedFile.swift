import Foundation

/// Reading a file that a person or a stranger may have made any size (config.json, caches, certificates): its
/// kind and size are checked before anything is read, and never more than the limit is read even if it grows
/// meanwhile — a 1 GB config.json costs one `fstat`, not 1 GB of memory.
package enum BoundedFile {
    package enum Outcome: Sendable, Equatable {
        /// No file at the path.
        case missing
        case bytes([UInt8])
    }

    /// Why the file was not read: a phrase that follows the file's path ("is 1.0 GB; at most 1.0 MB is read").
    package struct Problem: Error, Sendable, Equatable, CustomStringConvertible {
        package let description: String
    }

    package static func read(_ path: String, limit: Int) -> Result<Outcome, Problem> {
        // O_NONBLOCK: a FIFO put where a file was expected must not wait for a writer.
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            if errno == ENOENT { return .success(.missing) }
            return .failure(Problem(description: "cannot be read: \(String(cString: strerror(errno)))"))
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            return .failure(Problem(description: "cannot be read: \(String(cString: strerror(errno)))"))
        }
        guard status.st_mode & S_IFMT == S_IFREG else {
            return .failure(Problem(description: "is not a regular file"))
        }
        let size = Int(status.st_size)
        guard size <= limit else {
            return .failure(
                Problem(
                    description: "is \(byteCount(size)); at most \(byteCount(limit)) is read (is it the right file?)"))
        }
        var bytes = [UInt8](repeating: 0, count: limit + 1)
        var filled = 0
        while filled <= limit {
            let count = bytes.withUnsafeMutableBytes { buffer in
                Foundation.read(descriptor, buffer.baseAddress.map { $0 + filled }, limit + 1 - filled)
            }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else {
                return .failure(Problem(description: "cannot be read: \(String(cString: strerror(errno)))"))
            }
            if count == 0 { break }
            filled += count
        }
        guard filled <= limit else {
            return .failure(Problem(description: "grew past \(byteCount(limit)) while it was read"))
        }
        bytes.removeSubrange(filled...)
        return .success(.bytes(bytes))
    }
}
