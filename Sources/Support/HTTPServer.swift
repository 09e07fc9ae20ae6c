import CHTTP
import Foundation
import Synchronization

/// An HTTP/1.1 server (libmicrohttpd's epoll thread pool, through CHTTP): each request reaches `handler` once
/// with its whole body, on a server thread that must not block; the answer may come later from any thread.
package final class HTTPServer: Sendable {
    /// One request as received. Header names are lower case.
    package struct Request: Sendable {
        package let method: String
        package let path: String
        /// The client's address ("127.0.0.1").
        package let peer: String
        /// The client's port (0 when not known).
        package var peerPort: UInt16 = 0
        /// The headers as received: `name: value` lines, names in lower case (kept as one array of bytes and
        /// searched on demand — a String per name and value were a tenth of a call's allocations).
        let headerLines: [UInt8]
        package let body: [UInt8]

        /// The first value of header `name` (lower case), without the spaces after the colon.
        package func header(_ name: String) -> String? {
            withHeader(name) { value in value.map { String(decoding: $0, as: UTF8.self) } }
        }

        /// Calls `body` with the bytes of header `name`'s first value (lower-case name; the spaces after the colon
        /// left out), or nil when there is none: a check of a value costs no string. A request's eight or so
        /// lookups each skip from line to line with the C library's `memchr` and compare only lines that start
        /// with the name's first byte.
        package func withHeader<Result>(_ name: String, _ body: (UnsafeBufferPointer<UInt8>?) -> Result) -> Result {
            var name = name
            return name.withUTF8 { name in
                headerLines.withUnsafeBufferPointer { lines -> Result in
                    guard let base = lines.baseAddress, let named = name.baseAddress, let first = name.first else {
                        return body(nil)
                    }
                    var start = 0
                    while start < lines.count {
                        let end =
                            memchr(base + start, 10, lines.count - start).map {
                                base.distance(to: $0.assumingMemoryBound(to: UInt8.self))
                            } ?? lines.count
                        let colon = start + name.count
                        if lines[start] == first, colon < end, lines[colon] == UInt8(ascii: ":"),
                            memcmp(base + start, named, name.count) == 0
                        {
                            var value = colon + 1
                            while value < end, lines[value] == UInt8(ascii: " ") { value += 1 }
                            return body(UnsafeBufferPointer(rebasing: lines[value..<end]))
                        }
                        start = end + 1
                    }
                    return body(nil)
                }
            }
        }
    }

    /// What bounds the server (CHTTP's `skillhost_http_limits`).
    package struct Limits: Sendable {
        package var maximumBody = 4 << 20
        /// Node's default. libmicrohttpd zeroes a connection's whole memory (this size) after every request, so
        /// a larger limit costs every call on a kept-alive connection (32 KiB: about 1.5 µs more CPU per call at
        /// 32 clients, and the first-level cache wiped each time).
        package var maximumHeaderBytes = 16 << 10
        package var idleTimeoutSeconds = 30
        package var maximumConnections = 1024
        package var connectionsPerAddress = 256
        /// A new connection's request line and headers must be in within this many seconds, however slowly they
        /// trickle (later requests on it: within the idle timeout).
        package var headerTimeoutSeconds = 10
        /// Connections kept free for new clients: past `maximumConnections` less this, the oldest connections
        /// still sending headers are cut.
        package var reservedConnections = 64
        /// Event threads: more than the cores, so a quick skill that turns slow (see `QuickCalls`) stalls few.
        package var threads = 2
        package init() {}
    }

    package typealias Handler = @Sendable (Request, HTTPExchange) -> Void

    /// The CHTTP server, nil once stopped.
    private let server: Mutex<OpaquePointer?>
    private let context: Unmanaged<HTTPHandlerContext>
    /// The port listened on (the one asked for, or the one the system chose for 0).
    package let port: UInt16

    /// Listens on `address` (an IP literal) and `port` (0: any free one); HTTPS when `tls` holds PEM texts.
    package init(
        address: String, port: UInt16, limits: Limits = Limits(), tls: (certificate: String, key: String)? = nil,
        handler: @escaping Handler
    ) throws(HTTPServerError) {
        let context = Unmanaged.passRetained(HTTPHandlerContext(handler: handler))
        var cLimits = skillhost_http_limits(
            maximum_body: limits.maximumBody, maximum_header_bytes: limits.maximumHeaderBytes,
            idle_timeout_seconds: UInt32(limits.idleTimeoutSeconds),
            maximum_connections: UInt32(limits.maximumConnections),
            connections_per_address: UInt32(limits.connectionsPerAddress), threads: UInt32(limits.threads),
            maximum_stream_backlog: 0, header_timeout_seconds: UInt32(limits.headerTimeoutSeconds),
            reserved_connections: UInt32(limits.reservedConnections))
        var error = [CChar](repeating: 0, count: 512)
        let started = skillhost_http_start(
            address, port, &cLimits, tls?.certificate, tls?.key, httpHandler, httpAbort, httpRelease,
            context.toOpaque(), &error, error.count)
        guard let started else {
            context.release()
            throw HTTPServerError(
                message: String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        self.port = skillhost_http_port(started)
        self.context = context
        server = Mutex(started)
    }

    /// How many answers an event thread lingered after (watching the connection for the next request rather than
    /// sleeping), and in how many of those the next request came; zeros once stopped.
    package var lingers: (lingered: UInt, paid: UInt) {
        server.withLock { server in
            guard let server else { return (0, 0) }
            var (lingered, paid): (UInt, UInt) = (0, 0)
            skillhost_http_linger_counts(server, &lingered, &paid)
            return (lingered, paid)
        }
    }

    /// Bytes all streams together hold unsent (bounded: four streams' backlog in all, past which the streams holding
    /// most, over 256 KiB, are cut).
    package var unsentStreamBytes: Int {
        server.withLock { server in server.map { Int(skillhost_http_stream_unsent($0)) } ?? 0 }
    }

    /// Stops the server: waiting requests are abandoned (their abort handlers run); answers after this are dropped.
    package func stop() {
        guard
            let server = server.withLock({ server -> OpaquePointer? in
                defer { server = nil }
                return server
            })
        else { return }
        skillhost_http_stop(server)
        context.release()
    }

    deinit { stop() }
}

/// Why the server could not start, as a sentence.
package struct HTTPServerError: Error, Sendable, CustomStringConvertible {
    package let message: String
    package var description: String { message }
}

/// One request's answer: a buffered response, or a stream (`beginStream`, `write`…, `end`). Exactly one of
/// `respond` or `end` must be called, once.
///
/// - Important: `@unchecked Sendable` is safe because the only stored state besides the immutable pointer is the
///   abort handler, behind a `Mutex`; every CHTTP output function locks the request it is given, and the request
///   stays allocated until both the server and this answer are done with it (CHTTP's reference counts).
package final class HTTPExchange: @unchecked Sendable {
    private let request: OpaquePointer
    private let abortHandler = Mutex<(@Sendable () -> Void)?>(nil)

    fileprivate init(_ request: OpaquePointer) { self.request = request }

    /// Runs `handler` once if the client goes away (or the server stops) before the answer is complete.
    package func onAbort(_ handler: @escaping @Sendable () -> Void) { abortHandler.withLock { $0 = handler } }

    fileprivate func aborted() {
        abortHandler.withLock { handler in
            defer { handler = nil }; return handler
        }?()
    }

    /// Answers with `status`, `headers` and `body`. Returns false when the client is gone.
    @discardableResult
    package func respond(_ status: Int, headers: [(String, String)] = [], body: [UInt8] = []) -> Bool {
        let block = Self.block(headers)
        return block.withUnsafeBufferPointer { block in
            body.withUnsafeBytes { bytes in
                skillhost_http_respond(request, UInt32(status), block.baseAddress, bytes.baseAddress, bytes.count) == 0
            }
        }
    }

    /// Answers with `status`, `headers` and the UTF-8 of `text` (without copying it into an array first).
    /// Returns false when the client is gone.
    @discardableResult
    package func respond(_ status: Int, headers: [(String, String)] = [], text: String) -> Bool {
        let block = Self.block(headers)
        var text = text
        return block.withUnsafeBufferPointer { block in
            text.withUTF8 { bytes in
                skillhost_http_respond(request, UInt32(status), block.baseAddress, bytes.baseAddress, bytes.count) == 0
            }
        }
    }

    /// Starts a streamed answer. Returns false when the client is gone (`end` must still be called).
    @discardableResult
    package func beginStream(_ status: Int, headers: [(String, String)]) -> Bool {
        Self.block(headers).withUnsafeBufferPointer {
            skillhost_http_stream_begin(request, UInt32(status), $0.baseAddress) == 0
        }
    }

    /// Queues text on the stream. Returns false when the client is gone or too far behind.
    @discardableResult
    package func write(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { bytes in skillhost_http_stream_write(request, bytes.baseAddress, bytes.count) == 0 }
    }

    /// Ends the stream once what is queued has been sent.
    package func end() { skillhost_http_stream_end(request) }

    /// The headers as `name: value` lines, NUL-terminated for C, built in one array (a call's answer pays one
    /// allocation for them).
    private static func block(_ headers: [(String, String)]) -> [CChar] {
        var block: [CChar] = []
        block.reserveCapacity(headers.reduce(1) { $0 + $1.0.utf8.count + $1.1.utf8.count + 3 })
        for (name, value) in headers {
            for byte in name.utf8 { block.append(CChar(bitPattern: byte)) }
            block.append(CChar(bitPattern: UInt8(ascii: ":")))
            block.append(CChar(bitPattern: UInt8(ascii: " ")))
            for byte in value.utf8 { block.append(CChar(bitPattern: byte)) }
            block.append(CChar(bitPattern: UInt8(ascii: "\n")))
        }
        block.append(0)
        return block
    }
}

private func string(_ pointer: UnsafePointer<CChar>?) -> String { pointer.map { String(cString: $0) } ?? "" }

/// Keeps the handler alive for the server's threads (released by `HTTPServer.stop`).
private final class HTTPHandlerContext: Sendable {
    let handler: HTTPServer.Handler
    init(handler: @escaping HTTPServer.Handler) { self.handler = handler }
}

private let httpHandler: skillhost_http_handler = { context, request in
    guard let context, let request else { return }
    let handler = Unmanaged<HTTPHandlerContext>.fromOpaque(context).takeUnretainedValue().handler
    var length = 0
    let headerLines =
        skillhost_http_headers(request, &length).map {
            Array(UnsafeRawBufferPointer(start: $0, count: length).bindMemory(to: UInt8.self))
        } ?? []
    var bodyLength = 0
    let bodyStart = skillhost_http_body(request, &bodyLength)
    let body = bodyStart.map { Array(UnsafeBufferPointer(start: $0, count: bodyLength)) } ?? []
    let exchange = HTTPExchange(request)
    // The request holds the exchange until it is freed (released by httpRelease), so aborts can reach it.
    skillhost_http_set_tag(request, Unmanaged.passRetained(exchange).toOpaque())
    var described = HTTPServer.Request(
        method: string(skillhost_http_method(request)), path: string(skillhost_http_path(request)),
        peer: string(skillhost_http_peer(request)), headerLines: headerLines, body: body)
    described.peerPort = UInt16(truncatingIfNeeded: skillhost_http_peer_port(request))
    handler(described, exchange)
}

private let httpAbort: skillhost_http_abort_handler = { _, tag in
    guard let tag else { return }
    Unmanaged<HTTPExchange>.fromOpaque(tag).takeUnretainedValue().aborted()
}

private let httpRelease: skillhost_http_tag_release = { tag in
    guard let tag else { return }
    Unmanaged<HTTPExchange>.fromOpaque(tag).release()
}
