import Foundation
import JSONRPC
import SkillJSON
import Synchronization

extension MCPServer {
    /// Serves one stdio client: reads messages until `reader` ends (standard input closed), on threads of its
    /// own; blocks the calling thread (never call it on the cooperative pool) until then. Threads follow the
    /// leader/follower pattern: the thread that reads a `tools/call` hands reading over to another thread and runs
    /// the call itself, so a request is answered without a single thread hand-off. Returns once the calls still
    /// running at the end have been answered.
    package func serve(_ reader: LineReader) {
        let notifier = watchChanges()
        defer { notifier.cancel() }
        // The loop runs on threads of its own: a thread stuck in a plugin call past its deadline must not keep
        // the server from ending.
        let loop = ReadLoop(reader: reader, threadName: "skillhost.mcp.reader", spin: .microseconds(50)) {
            [self] line, handOff in
            switch line {
            case .end: return
            case .tooLong:
                respond(
                    .null, code: .parseError,
                    message: "Parse error: a message longer than \(MCPServer.maximumLine >> 20) MB was skipped",
                    to: .stdio(output, admission: admission))
            case .line(let bytes):
                if bytes.allSatisfy({ [0x20, 0x09, 0x0D].contains($0) }) { return }
                handle(bytes, beforeCall: handOff)
            }
        }
        loop.start()
        loop.waitForEnd()
        // The client closed its side: calls still running are answered (each ends by its deadline at the latest).
        admission.waitUntilIdle()
        let open = state.withLock { state in
            defer { state.listening = [:] }
            return Array(state.listening.values)
        }
        open.forEach { subscriptions.remove($0) }
    }

    /// Handles one stdio line: a request, a notification, a batch (in 2025-03-26 only), or garbage. A call runs
    /// on this thread; `beforeCall` runs just before it starts. The line's bytes are parsed as they are: invalid
    /// UTF-8 is a parse error, not replaced.
    func handle(_ line: [UInt8], beforeCall: () -> Void = {}) {
        let exchange = MCPExchange.stdio(output, admission: admission)
        let message: JSONValue
        do throws(JSONParseError) { message = try JSONValue(parsing: line) } catch {
            respond(.null, code: .parseError, message: "Parse error: \(error)", to: exchange)
            return
        }
        guard case .array(let elements) = message else {
            handle(message, raw: line[...], exchange: exchange, beforeCall: beforeCall)
            return
        }
        guard state.withLock({ $0.negotiated }) == MCPProtocol.batchVersion else {
            respond(
                .null, code: .invalidRequest,
                message: "Invalid request: JSON-RPC batches are part of protocol revision 2025-03-26 only, and this "
                    + "session negotiated another; send one message per line", to: exchange)
            return
        }
        guard !elements.isEmpty else {
            respond(.null, code: .invalidRequest, message: "Invalid request: an empty batch", to: exchange)
            return
        }
        // Every request of the batch is answered in one array, once the last one is done; calls run on the pool.
        // What gets an answer: everything but notifications and responses (an invalid element gets an error).
        let requests = elements.filter { element in
            let notification = element["method"]?.stringValue != nil && element["id"] == nil
            let response = element["id"] != nil && (element["result"] != nil || element["error"] != nil)
            return !notification && !response
        }.count
        let batch = BatchReply(expected: requests, output: output)
        let batchExchange = MCPExchange(
            reply: { line, _ in batch.add(line) }, notify: output, call: nil, admission: admission)
        beforeCall()
        for (element, raw) in zip(elements, RawJSON.elements(in: line[...])) {
            handle(element, raw: raw, exchange: batchExchange, onPool: true)
        }
    }
}

/// Collects the responses to a batch and writes them as one array once every request has been answered.
final class BatchReply: Sendable {
    private let state: Mutex<(expected: Int, responses: [String])>
    private let output: @Sendable (String) -> Void

    init(expected: Int, output: @escaping @Sendable (String) -> Void) {
        state = Mutex((expected, []))
        self.output = output
    }

    @Sendable func add(_ response: String) {
        let complete = state.withLock { state -> [String]? in
            state.responses.append(response)
            return state.responses.count == state.expected ? state.responses : nil
        }
        if let complete { output("[" + complete.joined(separator: ",") + "]") }
    }
}
