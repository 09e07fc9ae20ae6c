import Foundation
import JSONRPC
import SkillHost
import Synchronization
import TestSupport
import Testing

@testable import MCP
@testable import SkillJSON

/// The MCP server in this process, with a fixture whose calls the test holds: requests in flight.
struct MCPServerInFlightTests {
    final class Lines: Sendable {
        let lines = Mutex<[String]>([])
        func add(_ line: String) { lines.withLock { $0.append(line) } }
        func contains(_ text: String) -> Bool { lines.withLock { $0.contains { $0.contains(text) } } }
    }

    func server(maximum: Int = 256) throws -> (MCPServer, Lines, SkillRegistry) {
        // Held calls must not reach their deadline while the test is slow: a long one.
        let registry = try makeRegistry(timeout: .seconds(600))
        _ = try registry.load(file: try Fixture.compileFile("behaviours.c")).get()
        let lines = Lines()
        let server = MCPServer(registry: registry, maximumCallsInFlight: maximum) { lines.add($0) }
        return (server, lines, registry)
    }

    /// Runs `line` on a thread of its own (a held call blocks the thread that reads it).
    func handle(_ server: MCPServer, _ line: String) {
        Thread { server.handle(Array(line.utf8)) }.start()
    }

    static func call(_ id: String, _ tool: String) -> String {
        #"{"jsonrpc":"2.0","id":\#(id),"method":"tools/call","params":{"name":"\#(tool)","arguments":{}}}"#
    }

    @Test func aDuplicateIdInFlightIsAnsweredWithAnError() async throws {
        let (server, lines, registry) = try server()
        handle(server, Self.call("7", "hold"))
        #expect(await eventually { await registry.invoke("held", arguments: "{}").result == 1 })
        server.handle(Array(Self.call("7", "echo").utf8))
        #expect(
            lines.contains(
                #"{"jsonrpc":"2.0","id":7,"error":{"code":-32600,"message":"Invalid request: id 7 is already used by a request in flight; give every request its own id"}}"#
            ))
        _ = await registry.invoke("release", arguments: "{}")
        #expect(await eventually { lines.contains(#""id":7,"result""#) }, "the first request is still answered")
    }

    @Test func callsInFlightAreBoundedWithABusyError() async throws {
        let (server, lines, registry) = try server(maximum: 2)
        handle(server, Self.call("1", "hold"))
        handle(server, Self.call("2", "hold"))
        #expect(await eventually { await registry.invoke("held", arguments: "{}").result == 2 })
        server.handle(Array(Self.call("3", "echo").utf8))
        #expect(
            lines.contains(
                #"{"jsonrpc":"2.0","id":3,"error":{"code":-32000,"message":"Server busy: 2 calls are already running for this client; retry when one has finished"}}"#
            ))
        _ = await registry.invoke("release", arguments: "{}")
        #expect(await eventually { lines.contains(#""id":1,"result""#) && lines.contains(#""id":2,"result""#) })
        server.handle(Array(Self.call("4", "echo").utf8))
        #expect(lines.contains(#""id":4,"result""#), "room again once the calls ended")
    }
}

/// HTTP runs a call on its event thread only for a skill whose recent calls were all quick.
struct QuickCallsTests {
    @Test func sixteenQuickCallsInARowAndOneSlowOneUndoesIt() {
        let quick = QuickCalls(window: 16, threshold: .milliseconds(1))
        let calculator = quick.record(of: "calculator")
        #expect(!calculator.isQuick, "unknown skills go to the pool")
        for _ in 0..<15 { calculator.record(took: .microseconds(20)) }
        #expect(!calculator.isQuick)
        quick.record(of: "calculator").record(took: .microseconds(20))
        #expect(quick.record(of: "calculator").isQuick, "one record per skill, whoever looks it up")
        calculator.record(took: .milliseconds(5))
        #expect(!calculator.isQuick, "one slow call sends it back to the pool")
        #expect(!quick.record(of: "other").isQuick)
    }
}

/// A described result's line written in one buffer is the text the general path writes, and results the fast
/// path cannot take (members of its own already, not an object) go the general way.
@Test func aDescribedLineIsTheGeneralPathsText() throws {
    let results: [JSONValue] = [
        .object(JSONObject()),
        try JSONValue(parsing: #"{"content":[{"type":"text","text":"60 \"é\""}],"isError":false}"#),
        try JSONValue(parsing: #"{"tools":[],"nextCursor":null}"#),
    ]
    for id in [JSONRPCID(7), JSONRPCID(rawText: #""abc""#), JSONRPCID(rawText: "123456789012345678901234567890")] {
        for result in results {
            for cacheable in [false, true] {
                let general = JSONRPCMessage.response(
                    id: id, result: MCPServer.described(result, cacheable: cacheable)
                ).line
                #expect(MCPServer.describedLine(id, result, cacheable: cacheable) == general)
            }
        }
    }
    for taken in [
        #"{"resultType":"incomplete"}"#, #"{"_meta":{"a":1}}"#, #"{"ttlMs":5}"#, #"[1]"#,
    ] {
        let result = try JSONValue(parsing: taken)
        #expect(MCPServer.describedLine(JSONRPCID(1), result, cacheable: true) == nil)
    }
    #expect(MCPServer.describedLine(JSONRPCID(1), try JSONValue(parsing: #"{"ttlMs":5}"#), cacheable: false) != nil)
}
