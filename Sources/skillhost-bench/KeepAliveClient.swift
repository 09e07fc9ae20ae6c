import Foundation

/// How one server is spoken to: the request line's path, extra headers, and the body of call `index` — `bodyHead`,
/// then the index in decimal when `numbered`, then `bodyTail` — so a client writes each request without building a
/// string.
struct HTTPTarget: Sendable {
    let name: String
    let port: Int
    var headers: [(String, String)]
    let bodyHead: [UInt8]
    let bodyTail: [UInt8]
    let numbered: Bool

    init(name: String, port: Int, headers: [(String, String)], fixedBody: String) {
        self.name = name
        self.port = port
        self.headers = headers
        bodyHead = Array(fixedBody.utf8)
        bodyTail = []
        numbered = false
    }

    /// A 2026-07-28 stateless tools/call whose JSON-RPC id is the call's index.
    static func stateless(name: String, port: Int, tool: String, arguments: String) -> HTTPTarget {
        let meta =
            #""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#
        return HTTPTarget(
            name: name, port: port,
            headers: [("MCP-Protocol-Version", "2026-07-28"), ("Mcp-Method", "tools/call"), ("Mcp-Name", tool)],
            bodyHead: Array(#"{"jsonrpc":"2.0","id":"#.utf8),
            bodyTail: Array(
                #","method":"tools/call","params":{"name":"\#(tool)","arguments":\#(arguments),\#(meta)}}"#.utf8),
            numbered: true)
    }

    private init(
        name: String, port: Int, headers: [(String, String)], bodyHead: [UInt8], bodyTail: [UInt8], numbered: Bool
    ) {
        (self.name, self.port, self.headers) = (name, port, headers)
        (self.bodyHead, self.bodyTail, self.numbered) = (bodyHead, bodyTail, numbered)
    }
}

/// One keep-alive HTTP/1.1 connection that POSTs a target's requests and reads the answers (Content-Length or
/// chunked). It shares the machine's two cores with the server it measures, so a call costs it as little as a
/// plain C client: the request's fixed part is written once, each call adds only its length and index; the answer
/// is parsed in place with the C library's byte searches and its body is looked at where it was received.
final class KeepAliveClient {
    private let socket: Int32
    private let target: HTTPTarget
    /// Received bytes: `start..<count` is unread.
    private var buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 8)
    private var start = 0
    private var count = 0
    /// The request being written: the fixed head up to "Content-Length: " stays, the rest is rewritten per call.
    private var request = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 12, alignment: 8)
    private let fixedHead: Int
    /// A chunked answer's body, put together (rare: the servers measured answer with Content-Length).
    private var chunks = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 12, alignment: 8)
    /// The last answer's body: a range of `buffer`, or of `chunks` when `bodyInChunks`.
    private var body = 0..<0
    private var bodyInChunks = false

    init(target: HTTPTarget) throws {
        self.target = target
        var head = Array("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:\(target.port)\r\n".utf8)
        head += Array("Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n".utf8)
        for (name, value) in target.headers { head += Array("\(name): \(value)\r\n".utf8) }
        head += Array("Content-Length: ".utf8)
        fixedHead = head.count
        let longest = fixedHead + 24 + target.bodyHead.count + 20 + target.bodyTail.count
        if longest > request.count {
            request.deallocate()
            request = UnsafeMutableRawBufferPointer.allocate(byteCount: longest, alignment: 8)
        }
        request.copyBytes(from: head)
        socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(target.port).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard connected else {
            close(socket)
            buffer.deallocate()
            request.deallocate()
            chunks.deallocate()
            throw BenchError("cannot connect to port \(target.port)")
        }
        var one: Int32 = 1
        setsockopt(socket, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    deinit {
        close(socket)
        buffer.deallocate()
        request.deallocate()
        chunks.deallocate()
    }

    /// Sends call `index` and reads the answer; its status, or nil when the connection failed or the answer was
    /// not HTTP. The body is then looked at with `bodyContains`, until the next call.
    func call(_ index: Int) -> Int? {
        guard let base = request.baseAddress else { return nil }
        let digits = target.numbered ? Self.decimalLength(index) : 0
        var end = fixedHead
        end += Self.writeDecimal(target.bodyHead.count + digits + target.bodyTail.count, at: base + end)
        (base + end).copyMemory(from: Self.blankLine, byteCount: 4)
        end += 4
        end += target.bodyHead.withUnsafeBytes { copy($0, to: base + end) }
        if target.numbered { end += Self.writeDecimal(index, at: base + end) }
        end += target.bodyTail.withUnsafeBytes { copy($0, to: base + end) }
        var sent = 0
        while sent < end {
            let written = send(socket, base + sent, end - sent, Int32(MSG_NOSIGNAL))
            guard written > 0 else { return nil }
            sent += written
        }
        return readAnswer()
    }

    /// Whether the last answer's body contains `marker`.
    func bodyContains(_ marker: [UInt8]) -> Bool {
        let bytes = bodyInChunks ? chunks : buffer
        guard let base = bytes.baseAddress else { return false }
        return Self.search(marker, in: UnsafeRawBufferPointer(start: base + body.lowerBound, count: body.count)) != nil
    }

    private static let blankLine: [UInt8] = [13, 10, 13, 10]

    /// Where `marker` (not empty) first occurs in `bytes`: the C library finds each candidate first byte.
    private static func search(_ marker: [UInt8], in bytes: UnsafeRawBufferPointer) -> Int? {
        guard let base = bytes.baseAddress, let first = marker.first else { return nil }
        var offset = 0
        while bytes.count - offset >= marker.count {
            guard let candidate = memchr(base + offset, Int32(first), bytes.count - offset - marker.count + 1) else {
                return nil
            }
            let position = base.distance(to: UnsafeRawPointer(candidate))
            var matched = 1
            while matched < marker.count, bytes[position + matched] == marker[matched] { matched += 1 }
            if matched == marker.count { return position }
            offset = position + 1
        }
        return nil
    }

    private func copy(_ bytes: UnsafeRawBufferPointer, to destination: UnsafeMutableRawPointer) -> Int {
        if let source = bytes.baseAddress { destination.copyMemory(from: source, byteCount: bytes.count) }
        return bytes.count
    }

    private static func decimalLength(_ value: Int) -> Int {
        var (length, rest) = (1, value / 10)
        while rest > 0 { (length, rest) = (length + 1, rest / 10) }
        return length
    }

    private static func writeDecimal(_ value: Int, at destination: UnsafeMutableRawPointer) -> Int {
        let length = decimalLength(value)
        var rest = value
        for position in stride(from: length - 1, through: 0, by: -1) {
            destination.storeBytes(of: UInt8(48 + rest % 10), toByteOffset: position, as: UInt8.self)
            rest /= 10
        }
        return length
    }

    private func readAnswer() -> Int? {
        guard let headEnd = find(Self.blankLine) else { return nil }
        let head = start..<headEnd
        // "HTTP/1.1 200 …": the status is the three digits after the first space.
        guard head.count >= 12, byte(start + 8) == 32, let status = decimal(in: (start + 9)..<(start + 12)) else {
            return nil
        }
        let length = headerValue("content-length:", in: head).flatMap { decimal(in: $0) }
        // The servers measured send Transfer-Encoding only as chunked (HTTP/1.1 ends every coding with it).
        let chunked = headerValue("transfer-encoding:", in: head) != nil
        start = headEnd + 4
        bodyInChunks = false
        if let length {
            while count - start < length { guard fill() != nil else { return nil } }
            body = start..<(start + length)
            start += length
            return status
        }
        body = start..<start
        return chunked ? readChunks().map { _ in status } : status
    }

    /// Reads a chunked body into `chunks`.
    private func readChunks() -> Void? {
        var total = 0
        while true {
            guard let lineEnd = find(Array(Self.blankLine[0..<2])) else { return nil }
            var size = 0
            for position in start..<lineEnd {
                guard let digit = Self.hexDigit(byte(position)) else { break }
                size = size * 16 + digit
            }
            start = lineEnd + 2
            if size == 0 {
                guard let end = find(Array(Self.blankLine[0..<2])) else { return nil }
                start = end + 2
                (body, bodyInChunks) = (0..<total, true)
                return ()
            }
            while count - start < size + 2 { guard fill() != nil else { return nil } }
            if total + size > chunks.count {
                let grown = UnsafeMutableRawBufferPointer.allocate(byteCount: 2 * (total + size), alignment: 8)
                if let to = grown.baseAddress, let from = chunks.baseAddress {
                    to.copyMemory(from: from, byteCount: total)
                }
                chunks.deallocate()
                chunks = grown
            }
            if let to = chunks.baseAddress, let from = buffer.baseAddress {
                (to + total).copyMemory(from: from + start, byteCount: size)
            }
            total += size
            start += size + 2
        }
    }

    private func byte(_ position: Int) -> UInt8 { buffer[position] }

    private static func hexDigit(_ byte: UInt8) -> Int? {
        switch byte {
        case 48...57: Int(byte - 48)
        case 97...102: Int(byte - 87)
        case 65...70: Int(byte - 55)
        default: nil
        }
    }

    /// Reads more, first moving the unread bytes to the front (or growing the buffer) when the end is near;
    /// returns how far the unread bytes moved back, nil at the end of the connection.
    private func fill() -> Int? {
        var moved = 0
        if buffer.count - count < 4096 {
            if start > 0, let base = buffer.baseAddress {
                moved = start
                if count > start { memmove(base, base + start, count - start) }
                count -= start
                start = 0
            }
            if buffer.count - count < 4096 {
                let grown = UnsafeMutableRawBufferPointer.allocate(byteCount: buffer.count * 2, alignment: 8)
                if let to = grown.baseAddress, let from = buffer.baseAddress {
                    to.copyMemory(from: from, byteCount: count)
                }
                buffer.deallocate()
                buffer = grown
            }
        }
        guard let base = buffer.baseAddress else { return nil }
        let received = recv(socket, base + count, buffer.count - count, 0)
        guard received > 0 else { return nil }
        count += received
        return moved
    }

    /// Where `marker` begins in the unread bytes, reading more until it comes; nil at the end of the connection.
    private func find(_ marker: [UInt8]) -> Int? {
        var from = start
        while true {
            if let base = buffer.baseAddress, count > from {
                let unread = UnsafeRawBufferPointer(start: base + from, count: count - from)
                if let found = Self.search(marker, in: unread) { return from + found }
            }
            from = max(start, count - marker.count + 1)
            guard let moved = fill() else { return nil }
            from -= moved
        }
    }

    /// The decimal number written in `range` (spaces around it skipped).
    private func decimal(in range: Range<Int>) -> Int? {
        var value: Int?
        for position in range {
            let byte = byte(position)
            if byte == 32 || byte == 9 { continue }
            guard byte >= 48, byte <= 57 else { return nil }
            value = (value ?? 0) * 10 + Int(byte - 48)
        }
        return value
    }

    /// The value's range of the header line named by `prefix` ("name:", any case) in `head`.
    private func headerValue(_ prefix: StaticString, in head: Range<Int>) -> Range<Int>? {
        guard let base = buffer.baseAddress else { return nil }
        let name = UnsafeRawPointer(prefix.utf8Start)
        var line = head.lowerBound
        while line < head.upperBound {
            let rest = head.upperBound - line
            let newline = memchr(base + line, 10, rest).map { base.distance(to: $0) } ?? head.upperBound
            let lineEnd = newline > line && byte(newline - 1) == 13 ? newline - 1 : newline
            if lineEnd - line >= prefix.utf8CodeUnitCount,
                strncasecmp(base + line, name, prefix.utf8CodeUnitCount) == 0
            {
                return (line + prefix.utf8CodeUnitCount)..<lineEnd
            }
            line = newline + 1
        }
        return nil
    }
}

extension KeepAliveClient {
    /// Whether an answer is a tool result (JSON, or one SSE event carrying it) that did not fail.
    func succeeded(_ status: Int?) -> Bool {
        status == 200 && bodyContains(Self.result) && !bodyContains(Self.failed)
    }

    private static let result = Array(#""result""#.utf8)
    private static let failed = Array(#""isError":true"#.utf8)
}
