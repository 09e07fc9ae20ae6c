import Foundation
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What a streaming HTTP request delivers, in order: the response head, then body chunks as they arrive.
package enum HTTPEvent: Sendable {
    case head(status: Int, headers: [String: String])
    case body(Data)
}

/// A response larger than the reader allows: refused from its `Content-Length` before a byte of the body is read,
/// or as soon as what arrived passes the limit (the transfer is cancelled then; what Foundation's URLSession queued
/// for the delegate before the cancel took effect is still delivered and dropped — it does not pace libcurl, so a
/// fast endless body can queue far more than the limit meanwhile).
package struct HTTPResponseTooLarge: Error, Sendable, CustomStringConvertible {
    package let limit: Int
    /// The Content-Length the server announced, when that was the reason.
    package let declared: Int64?

    package var description: String {
        if let declared { return "announced \(declared) bytes (Content-Length), more than the \(limit >> 20) MB read" }
        return "sent more than \(limit >> 20) MB"
    }
}

/// Streams an HTTP response through a `URLSessionDataDelegate` (swift-corelibs-foundation has no
/// `URLSession.bytes(for:)`). Ending the stream — the consumer stops or its task is cancelled — cancels the task,
/// which closes the connection.
package enum HTTPStream {
    /// - Parameter maximumBytes: the most of the body that is accepted (nil: no limit, for long-lived streams whose
    ///   reader bounds each event); past it the stream ends with `HTTPResponseTooLarge` and the transfer stops.
    package static func start(_ request: URLRequest, timeout: TimeInterval, maximumBytes: Int? = nil)
        -> AsyncThrowingStream<HTTPEvent, any Error>
    {
        AsyncThrowingStream { continuation in
            let delegate = StreamingDelegate(continuation: continuation, maximumBytes: maximumBytes)
            let configuration = URLSessionConfiguration.ephemeral
            configuration.timeoutIntervalForRequest = timeout
            configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
            // Nothing of a model's or a server's answers is kept: no cache, no cookies, no credentials.
            configuration.urlCache = nil
            configuration.httpCookieStorage = nil
            configuration.urlCredentialStorage = nil
            let session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
            let task = session.dataTask(with: request)
            continuation.onTermination = { _ in
                task.cancel()
                session.invalidateAndCancel()
            }
            task.resume()
        }
    }
}

/// Forwards delegate callbacks into the stream.
///
/// - Important: `@unchecked Sendable` is safe because the stored properties are the continuation (Sendable), a
///   constant, and the byte count in a `Mutex`; NSObject (needed for the delegate protocol) is what the compiler
///   cannot see through.
private final class StreamingDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    let continuation: AsyncThrowingStream<HTTPEvent, any Error>.Continuation
    let maximumBytes: Int?
    private let received = Mutex(0)

    init(continuation: AsyncThrowingStream<HTTPEvent, any Error>.Continuation, maximumBytes: Int?) {
        self.continuation = continuation
        self.maximumBytes = maximumBytes
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        let http = response as? HTTPURLResponse
        var headers: [String: String] = [:]
        for (key, value) in http?.allHeaderFields ?? [:] {
            if let key = key as? String, let value = value as? String { headers[key.lowercased()] = value }
        }
        if let maximumBytes, response.expectedContentLength > Int64(maximumBytes) {
            continuation.finish(
                throwing: HTTPResponseTooLarge(limit: maximumBytes, declared: response.expectedContentLength))
            completionHandler(.cancel)
            return
        }
        continuation.yield(.head(status: http?.statusCode ?? 0, headers: headers))
        completionHandler(.allow)
    }

    /// Follows a redirect only within the original origin (scheme, host and port): the request carries the API
    /// key, which must not reach another server. Otherwise the redirect response itself is delivered.
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void
    ) {
        let original = task.originalRequest?.url
        let target = request.url
        let sameOrigin =
            original?.scheme?.lowercased() == target?.scheme?.lowercased()
            && original?.host?.lowercased() == target?.host?.lowercased() && original?.port == target?.port
        completionHandler(sameOrigin ? request : nil)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        if let maximumBytes {
            let total = received.withLock { count -> Int in
                count += data.count
                return count
            }
            guard total <= maximumBytes else {
                continuation.finish(throwing: HTTPResponseTooLarge(limit: maximumBytes, declared: nil))
                dataTask.cancel()
                return
            }
        }
        continuation.yield(.body(data))
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        continuation.finish(throwing: error)
        session.finishTasksAndInvalidate()
    }
}
