import Foundation

/// Who is at the other end of a loopback TCP connection: the user id that owns the client's socket, read from the
/// kernel's tables of TCP sockets (`/proc/net/tcp`, `/proc/net/tcp6`), where the client's socket is the one whose
/// local address is exactly the client's (address and port) and whose remote port is the server's. Without tokens,
/// that is what tells one user's programs from another's on this machine.
package enum LocalPeer {
    /// The user id owning the client socket `peer`:`peerPort` → `serverPort`; nil when it is not in the tables (a
    /// peer on another machine) or they cannot be read.
    package static func userID(peer: String, peerPort: UInt16, serverPort: UInt16) -> UInt32? {
        guard peerPort != 0 else { return nil }
        for (table, local) in [("/proc/net/tcp", v4(peer)), ("/proc/net/tcp6", v6(peer))] {
            guard let local, let handle = FileHandle(forReadingAtPath: table) else { continue }
            defer { try? handle.close() }
            // Bounded: a machine with very many sockets is read up to 16 MB.
            guard let data = try? handle.read(upToCount: 16 << 20) else { continue }
            let text = String(decoding: data, as: UTF8.self)
            if let uid = find(in: text, local: local + ":" + String(format: "%04X", peerPort), serverPort: serverPort) {
                return uid
            }
        }
        return nil
    }

    /// The uid column of the socket whose local address is `local` (as the table writes it) and whose remote port is
    /// `serverPort`, in a table's text. The full local address must match: a client that binds its own port to the
    /// server's cannot be taken for the server's own socket.
    static func find(in table: String, local: String, serverPort: UInt16) -> UInt32? {
        let remote = ":" + String(format: "%04X", serverPort)
        for line in table.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count > 7, fields[1] == local, fields[2].hasSuffix(remote) else { continue }
            return UInt32(fields[7])
        }
        return nil
    }

    /// An IPv4 address as `/proc/net/tcp` writes it (the 32-bit value in the machine's order, in hex); nil for
    /// another kind of address.
    static func v4(_ address: String) -> String? {
        var parsed = in_addr()
        let text = address.hasPrefix("::ffff:") ? String(address.dropFirst(7)) : address
        guard inet_pton(AF_INET, text, &parsed) == 1 else { return nil }
        return String(format: "%08X", parsed.s_addr)
    }

    /// An IPv6 address (an IPv4 one as `::ffff:a.b.c.d`) as `/proc/net/tcp6` writes it: four 32-bit words in hex.
    static func v6(_ address: String) -> String? {
        var parsed = in6_addr()
        let text = address.contains(":") ? address : "::ffff:" + address
        guard inet_pton(AF_INET6, text, &parsed) == 1 else { return nil }
        return withUnsafeBytes(of: &parsed) { bytes in
            (0..<4).map { String(format: "%08X", bytes.load(fromByteOffset: $0 * 4, as: UInt32.self)) }.joined()
        }
    }
}
