import Glibc

/// Writes to standard output and standard error that survive a reader that went away (`skillhost ask … | head -0`):
/// `FileHandle.write` traps on EPIPE (a fatal error and a backtrace, exit 132). SIGPIPE is ignored by the host, so
/// a closed pipe is an error from `write`, handled here.
package enum StandardStreams {
    /// Exit status of a command whose standard output was closed by its reader: 141 (128 + SIGPIPE), what a shell
    /// reports for a program a closed pipe stopped (`yes | head -1`), so scripts see it the same way.
    package static let closedOutputStatus: Int32 = 141

    /// Writes `text` to standard output at once (unbuffered: piped readers see lines as they happen). When the
    /// reader has gone, the command ends here, quietly, with `closedOutputStatus`: nothing more can reach it.
    package static func out(_ text: String) {
        if !write(1, text) { exit(closedOutputStatus) }
    }

    /// Writes `text` to standard error; a closed or failing standard error is ignored (there is nowhere left to
    /// say so).
    package static func error(_ text: String) {
        _ = write(2, text)
    }

    /// Writes all of `text` to `descriptor`, retrying interrupted and partial writes; false on any other failure.
    @discardableResult
    package static func write(_ descriptor: Int32, _ text: String) -> Bool {
        var text = text
        return text.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = Glibc.write(descriptor, bytes.baseAddress.map { $0 + offset }, bytes.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    if errno == EAGAIN {
                        // A non-blocking descriptor that is full: wait until it takes more (a spin cost a core).
                        var ready = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                        _ = poll(&ready, 1, -1)
                        continue
                    }
                    return false
                }
                offset += written
            }
            return true
        }
    }
}
