import Foundation

/// Who is at the other end of a loopback TCP connection: the user id that owns the client's socket, read from the
/// kernel's tables of TCP sockets (`/proc/net/tcp`, `/proc/net/tcp6`), where the client's socket is the established
/// one whose local port is the client's and whose remote port is the server's. Without tokens, that is what tells
/// one user's programs from another's on this machine.
package enum LocalPeer {
    /// The user id owning the client socket `peerPort` → `serverPort`; nil when it is not in the tables (a peer on
    /// another machine) or they cannot be read.
    package static func userID(peerPort: UInt16, serverPort: UInt16) -> UInt32? {
        guard peerPort != 0 else { return nil }
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            guard let handle = FileHandle(forReadingAtPath: table) else { continue }
            defer { try? handle.close() }
            // Bounded: a machine with very many sockets is read up to 16 MB.
            guard let data = try? handle.read(upToCount: 16 << 20) else { continue }
            if let uid = find(in: String(decoding: data, as: UTF8.self), peerPort: peerPort, serverPort: serverPort) {
                return uid
            }
        }
        return nil
    }

    /// The uid column of the established socket from `peerPort` to `serverPort` in a table's text.
    static func find(in table: String, peerPort: UInt16, serverPort: UInt16) -> UInt32? {
        let local = ":" + String(format: "%04X", peerPort)
        let remote = ":" + String(format: "%04X", serverPort)
        for line in table.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count > 7, fields[1].hasSuffix(local), fields[2].hasSuffix(remote), fields[3] == "01" else {
                continue
            }
            return UInt32(fields[7])
        }
        return nil
    }
}
