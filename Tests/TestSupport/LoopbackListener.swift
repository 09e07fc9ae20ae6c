import Foundation
import Synchronization

/// A TCP listener on 127.0.0.1 that answers every connection with "hello\n" (on a thread of its own).
public final class LoopbackListener: Sendable {
    final class Count: Sendable {
        let value = Mutex(0)
    }
    let descriptor: Int32
    public let port: Int
    let accepted = Count()

    public init() throws {
        let listening = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = in_addr_t(0x7f00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(listening, pointer, length) == 0 && listen(listening, 8) == 0
                    && getsockname(listening, pointer, &length) == 0
            }
        }
        guard bound else { throw POSIXError(.EADDRNOTAVAIL) }
        descriptor = listening
        port = Int(UInt16(bigEndian: address.sin_port))
        let accepted = accepted
        Thread {
            while true {
                let client = accept(listening, nil, nil)
                if client < 0 { return }
                accepted.value.withLock { $0 += 1 }
                _ = write(client, "hello\n", 6)
                close(client)
            }
        }.start()
    }

    public var connections: Int { accepted.value.withLock { $0 } }

    deinit {
        shutdown(descriptor, Int32(SHUT_RDWR))
        close(descriptor)
    }
}
