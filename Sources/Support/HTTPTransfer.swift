import CHTTPClient
import Foundation

/// Owns one C transfer (`skillhost_http_transfer`) and runs it.
///
/// - Important: `@unchecked Sendable` is safe because the only stored property is a constant pointer, and the C
///   functions called on it from other threads (`consumed`, `stop`) are thread-safe by their contract (a mutex
///   inside the transfer); `run` is called once, on the transfer's own thread; the transfer is freed in `deinit`,
///   when no thread holds this object any more.
final class HTTPTransfer: @unchecked Sendable {
    private let pointer: OpaquePointer

    init?(window: Int) {
        guard let pointer = skillhost_http_transfer_new(window) else { return nil }
        self.pointer = pointer
    }

    deinit { skillhost_http_transfer_free(pointer) }

    func consumed(_ bytes: Int) { skillhost_http_transfer_consumed(pointer, bytes) }

    func stop() { skillhost_http_transfer_stop(pointer) }

    /// Performs the request (and same-origin redirects) and finishes `continuation`. [the transfer's thread]
    func run(
        _ request: HTTPRequest, timeoutMilliseconds: Int, maximumBytes: Int?,
        into continuation: AsyncThrowingStream<HTTPEvent, any Error>.Continuation
    ) {
        var request = request
        for hop in 0...HTTPStream.maximumRedirects {
            let reader = ResponseReader(
                request: request, follows: hop < HTTPStream.maximumRedirects, maximumBytes: maximumBytes,
                continuation: continuation)
            let (result, detail) = perform(request, timeoutMilliseconds: timeoutMilliseconds, reader: reader)
            if reader.finished { return }
            if let next = reader.redirect {
                request = next
                continue
            }
            switch Int(result) {
            case Int(SKILLHOST_HTTP_COMPLETE.rawValue), Int(SKILLHOST_HTTP_STOPPED.rawValue):
                continuation.finish()
            case Int(SKILLHOST_HTTP_IDLE_TIMEOUT.rawValue):
                continuation.finish(throwing: HTTPTransportError(kind: .timedOut, detail: detail))
            case Int(SKILLHOST_HTTP_CANNOT_CONNECT.rawValue):
                continuation.finish(throwing: HTTPTransportError(kind: .cannotConnect, detail: detail))
            case Int(SKILLHOST_HTTP_UNKNOWN_HOST.rawValue):
                continuation.finish(throwing: HTTPTransportError(kind: .unknownHost, detail: detail))
            case Int(SKILLHOST_HTTP_CONNECTION_LOST.rawValue):
                continuation.finish(throwing: HTTPTransportError(kind: .connectionLost, detail: detail))
            default:
                continuation.finish(throwing: HTTPTransportError(kind: .failed, detail: detail))
            }
            return
        }
    }

    private func perform(_ request: HTTPRequest, timeoutMilliseconds: Int, reader: ResponseReader) -> (Int32, String) {
        var callbacks = skillhost_http_callbacks(
            context: Unmanaged.passUnretained(reader).toOpaque(),
            header: { context, name, nameLength, value, valueLength in
                guard let context else { return 1 }
                return Unmanaged<ResponseReader>.fromOpaque(context).takeUnretainedValue().header(
                    UnsafeRawBufferPointer(start: name, count: nameLength),
                    UnsafeRawBufferPointer(start: value, count: valueLength))
            },
            head: { context, status in
                guard let context else { return 1 }
                return Unmanaged<ResponseReader>.fromOpaque(context).takeUnretainedValue().head(Int(status))
            },
            body: { context, data, length in
                guard let context else { return 1 }
                return Unmanaged<ResponseReader>.fromOpaque(context).takeUnretainedValue().body(
                    UnsafeRawBufferPointer(start: data, count: length))
            })
        var error = [CChar](repeating: 0, count: 512)
        let lines = request.headers.map { "\($0.name): \($0.value)" }
        let result = withCStrings(lines) { headers in
            withExtendedLifetime(reader) {
                if let body = request.body {
                    body.withUnsafeBytes { bytes in
                        // libcurl sends a body pointer it is given; an empty body still needs a valid one.
                        let base = bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1)
                        return skillhost_http_transfer_perform(
                            pointer, request.url.absoluteString, request.method, headers, lines.count, base,
                            bytes.count, timeoutMilliseconds, timeoutMilliseconds, &callbacks, &error, error.count)
                    }
                } else {
                    skillhost_http_transfer_perform(
                        pointer, request.url.absoluteString, request.method, headers, lines.count, nil, 0,
                        timeoutMilliseconds, timeoutMilliseconds, &callbacks, &error, error.count)
                }
            }
        }
        let detail = String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return (result, detail)
    }
}

/// Calls `body` with the strings as a C array of C strings, valid during the call.
private func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>?) -> R) -> R {
    let copies = strings.map { strdup($0) }
    defer { copies.forEach { free($0) } }
    let pointers = copies.map { UnsafePointer($0) }
    return pointers.withUnsafeBufferPointer { body($0.baseAddress) }
}

/// Turns one response's callbacks into stream events. Lives on the transfer's thread only.
private final class ResponseReader {
    let request: HTTPRequest
    let follows: Bool
    let maximumBytes: Int?
    let continuation: AsyncThrowingStream<HTTPEvent, any Error>.Continuation
    var headers: [String: String] = [:]
    var received = 0
    /// The continuation was finished here (an answer too large, or the consumer gone).
    var finished = false
    /// The request a same-origin redirect asked for.
    var redirect: HTTPRequest?

    init(
        request: HTTPRequest, follows: Bool, maximumBytes: Int?,
        continuation: AsyncThrowingStream<HTTPEvent, any Error>.Continuation
    ) {
        self.request = request
        self.follows = follows
        self.maximumBytes = maximumBytes
        self.continuation = continuation
    }

    /// Header fields are bounded by libcurl (100 KB per field) and by their count here.
    func header(_ name: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> Int32 {
        guard headers.count < 256 else { return 0 }
        let key = String(decoding: name, as: UTF8.self).lowercased()
        let text = String(decoding: value, as: UTF8.self)
        headers[key] = headers[key].map { "\($0), \(text)" } ?? text
        return 0
    }

    func head(_ status: Int) -> Int32 {
        if follows, let location = headers["location"], let next = request.redirected(status: status, to: location) {
            redirect = next
            return 1
        }
        if let maximumBytes, let declared = headers["content-length"].flatMap({ Int64($0) }),
            declared > Int64(maximumBytes)
        {
            finish(throwing: HTTPResponseTooLarge(limit: maximumBytes, declared: declared))
            return 1
        }
        return deliver(.head(status: status, headers: headers))
    }

    func body(_ bytes: UnsafeRawBufferPointer) -> Int32 {
        received += bytes.count
        if let maximumBytes, received > maximumBytes {
            finish(throwing: HTTPResponseTooLarge(limit: maximumBytes, declared: nil))
            return 1
        }
        return deliver(.body(Data(bytes)))
    }

    private func deliver(_ event: HTTPEvent) -> Int32 {
        if case .terminated = continuation.yield(event) {
            finished = true
            return 1
        }
        return 0
    }

    private func finish(throwing error: any Error) {
        finished = true
        continuation.finish(throwing: error)
    }
}
