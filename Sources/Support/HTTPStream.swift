import CHTTPClient
import Foundation

/// What a streaming HTTP request delivers, in order: the response head, then body chunks as they arrive.
package enum HTTPEvent: Sendable {
    case head(status: Int, headers: [String: String])
    case body(Data)
}

/// A response larger than the reader allows: refused from its `Content-Length` before a byte of the body is read,
/// or as soon as what arrived passes the limit (the transfer stops then; with the transport's backpressure at most
/// one window more than the limit was ever read).
package struct HTTPResponseTooLarge: LocalizedError, Sendable, CustomStringConvertible {
    package let limit: Int
    /// The Content-Length the server announced, when that was the reason.
    package let declared: Int64?

    package var errorDescription: String? { description }

    package var description: String {
        if let declared { return "announced \(declared) bytes (Content-Length), more than the \(limit >> 20) MB read" }
        return "sent more than \(limit >> 20) MB"
    }
}

/// A request that did not get a whole response: the server could not be reached, went silent or broke off.
package struct HTTPTransportError: LocalizedError, Sendable, CustomStringConvertible {
    package enum Kind: Sendable {
        /// Nothing arrived for the request's timeout (or connecting took that long).
        case timedOut
        case cannotConnect
        case unknownHost
        /// The connection closed or broke before the response was complete.
        case connectionLost
        case failed
    }

    package let kind: Kind
    /// libcurl's own sentence.
    package let detail: String

    package var errorDescription: String? { description }

    package var description: String {
        switch kind {
        case .timedOut: return "timed out"
        case .cannotConnect: return detail.isEmpty ? "cannot connect" : detail
        case .unknownHost: return "unknown host"
        case .connectionLost: return "the connection was lost"
        case .failed: return detail
        }
    }
}

/// Streams an HTTP response from libcurl on a thread of its own, with backpressure: the transfer pauses while more
/// than `window` bytes were delivered and not yet taken by the consumer, so memory stays bounded however fast a
/// server sends. Ending the stream — the consumer stops or its task is cancelled — stops the transfer and closes
/// the connection at once. Redirects are followed only within the request's origin (scheme, host and port): the
/// request may carry an API key, which must not reach another server; any other redirect is delivered as it is.
package enum HTTPStream {
    /// Bytes delivered and not yet consumed before reading from the socket pauses.
    static let window = 1 << 20
    /// Redirects followed within one origin before the last one is delivered as it is.
    static let maximumRedirects = 5

    /// - Parameters:
    ///   - timeout: how long the server may stay silent (connecting included) before the stream ends with
    ///     `HTTPTransportError.timedOut`.
    ///   - maximumBytes: the most of the body that is accepted (nil: no limit, for long-lived streams whose reader
    ///     bounds each event); past it the stream ends with `HTTPResponseTooLarge` and the transfer stops.
    package static func start(_ request: HTTPRequest, timeout: TimeInterval, maximumBytes: Int? = nil)
        -> HTTPResponseStream
    {
        let (events, continuation) = AsyncThrowingStream<HTTPEvent, any Error>.makeStream()
        guard let transfer = HTTPTransfer(window: window) else {
            continuation.finish(throwing: HTTPTransportError(kind: .failed, detail: "out of memory"))
            return HTTPResponseStream(events: events, transfer: nil)
        }
        continuation.onTermination = { _ in transfer.stop() }
        let milliseconds = Int(min(max(timeout, 0.001), 86_400 * 30) * 1000)
        // libcurl blocks its thread for the whole transfer: never a thread of the cooperative pool.
        let thread = Thread {
            transfer.run(request, timeoutMilliseconds: milliseconds, maximumBytes: maximumBytes, into: continuation)
        }
        thread.name = "skillhost-http"
        thread.start()
        return HTTPResponseStream(events: events, transfer: transfer)
    }
}

/// The events of one response. Each body chunk taken from it is reported to the transfer, which is what lets
/// reading go on.
package struct HTTPResponseStream: AsyncSequence, Sendable {
    package typealias Element = HTTPEvent
    fileprivate let events: AsyncThrowingStream<HTTPEvent, any Error>
    fileprivate let transfer: HTTPTransfer?

    package struct AsyncIterator: AsyncIteratorProtocol {
        fileprivate var base: AsyncThrowingStream<HTTPEvent, any Error>.AsyncIterator
        fileprivate let transfer: HTTPTransfer?

        package mutating func next() async throws -> HTTPEvent? {
            let event = try await base.next()
            if case .body(let data)? = event { transfer?.consumed(data.count) }
            return event
        }
    }

    package func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: events.makeAsyncIterator(), transfer: transfer)
    }
}
