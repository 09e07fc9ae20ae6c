import Foundation
import Synchronization

/// A TCP listener on 127.0.0.1 that answers every connection with "hello\n" (on a thread of its own).
package final class LoopbackListener: Sendable {
    final class Count: Sendable {
        let value = Mutex(0)
    }
    let descriptor: Int32
    package let port: Int
    let accepted = Count()

    /// A TCP socket listening on 127.0.0.1 at a port the kernel chose.
    package static func listeningSocket(backlog: Int32 = 8) throws -> (descriptor: Int32, port: Int) {
        let listening = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = in_addr_t(0x7f00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(listening, pointer, length) == 0 && listen(listening, backlog) == 0
                    && getsockname(listening, pointer, &length) == 0
            }
        }
        guard bound else {
            close(listening)
            throw POSIXError(.EADDRNOTAVAIL)
        }
        return (listening, Int(UInt16(bigEndian: address.sin_port)))
    }

    package init() throws {
        let (listening, port) = try Self.listeningSocket()
        descriptor = listening
        self.port = port
        let accepted = accepted
        Thread {
            while true {
                let client = accept(listening, nil, nil)
                if client < 0, errno == EINTR { continue }
                if client < 0 {
                    // Closed by this thread, not by deinit: a number closed there could be reused by another
                    // test's socket while this thread still waits in accept() on it.
                    close(listening)
                    return
                }
                accepted.value.withLock { $0 += 1 }
                _ = write(client, "hello\n", 6)
                close(client)
            }
        }.start()
    }

    package var connections: Int { accepted.value.withLock { $0 } }

    deinit { shutdown(descriptor, Int32(SHUT_RDWR)) }
}

/// A UNIX datagram socket bound to a file in a temporary folder of the test's: what a confined plugin must not be
/// able to send to (in real life `/dev/log`, systemd's notify socket, a desktop bus).
package final class UnixDatagramReceiver: Sendable {
    let descriptor: Int32
    package let path: String

    package init() throws {
        path = Paths.temporaryDirectory("dgram") + "/socket"
        descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let path = path
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.enumerated() where index < raw.count - 1 { raw[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard descriptor >= 0, bound == 0 else { throw POSIXError(.EADDRNOTAVAIL) }
    }

    /// Whether a datagram is waiting (never blocks).
    package var received: Bool {
        var byte: UInt8 = 0
        return recv(descriptor, &byte, 1, Int32(MSG_DONTWAIT)) >= 0
    }

    deinit { close(descriptor) }
}
