import Foundation
import MCP
import TestSupport
import Testing

/// Without tokens, a session is counted to the user of this machine whose program opened it: another user's
/// programs can neither end it (opening sessions of their own never pushes one out) nor take its owner's share
/// (a 100 `initialize` calls ended another program's session; ten loopback addresses filled all 1,000 sessions
/// for good). Sessions unused for `session_idle_s` end.
struct MCPHTTPSessionOwnersTests {
    /// `curl` as the user `uid` (`setpriv`), or as this process's user when nil.
    static func send(_ url: String, _ headers: [String: String], body: String, as uid: Int? = nil) async throws
        -> MCPHTTPGuardTests.Reply
    {
        var arguments = ["-s", "-i", "-X", "POST", url, "-H", "Accept: application/json, text/event-stream"]
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { arguments += ["-H", "\(name): \(value)"] }
        arguments += ["-H", "Content-Type: application/json", "--data-binary", body]
        let result: ProcessResult
        if let uid {
            result = try await runProcessOffPool(
                "/usr/bin/setpriv", ["--reuid=\(uid)", "--regid=\(uid)", "--clear-groups", "/usr/bin/curl"] + arguments)
        } else {
            result = try await runProcessOffPool("/usr/bin/curl", arguments)
        }
        let parts = result.stdout.components(separatedBy: "\r\n\r\n")
        let head = parts.first ?? ""
        let status = head.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        let body = parts.dropFirst().joined(separator: "\r\n\r\n")
        return MCPHTTPGuardTests.Reply(status: status, headers: head, body: body)
    }

    @Test func anotherUsersProgramsCannotEndOrStarveASession() async throws {
        let (environment, _) = try MCPHTTPTests.home(
            "mcp-session-owners", config: #"{"mcp": {"sessions_per_client": 3, "session_idle_s": 3600}}"#)
        let server = try await HTTPServerProcess.start(arguments: ["--no-default-plugins"], environment: environment)
        defer { server.terminate() }
        let url = server.url
        let opened = try await Self.send(url, [:], body: MCPHTTPGuardTests.initialize)
        let session = try #require(opened.header("Mcp-Session-Id"), "\(opened)")
        let mine = ["Mcp-Session-Id": session]

        // Same user: at its cap a new session is refused, and none of its own is ended for it.
        for _ in 1...2 { #expect(try await Self.send(url, [:], body: MCPHTTPGuardTests.initialize).status == 200) }
        let fourth = try await Self.send(url, [:], body: MCPHTTPGuardTests.initialize)
        #expect(fourth.status == 503)
        #expect(
            fourth.body.contains(
                "Server busy: you have 3 sessions open; end one (DELETE), let one go unused for 60 minutes (it then "
                    + "ends)"),
            "\(fourth.body)")
        #expect(try await Self.send(url, mine, body: MCPHTTPGuardTests.list).status == 200, "nothing was ended")

        // Another user of this machine (root may become one) has a share of its own, and takes nothing of ours.
        if getuid() == 0 {
            for _ in 1...3 {
                let theirs = try await Self.send(url, [:], body: MCPHTTPGuardTests.initialize, as: 65534)
                #expect(theirs.status == 200, "\(theirs)")
            }
            #expect(try await Self.send(url, [:], body: MCPHTTPGuardTests.initialize, as: 65534).status == 503)
            #expect(try await Self.send(url, mine, body: MCPHTTPGuardTests.list).status == 200)
        }

    }

    /// A session unused for `session_idle_s` ends: its id is unknown, and its place is free. (The wait is a lower
    /// bound: a busy machine only makes more time pass.)
    @Test func aSessionUnusedForItsIdleTimeEnds() async throws {
        let (environment, _) = try MCPHTTPTests.home(
            "mcp-session-idle", config: #"{"mcp": {"sessions_per_client": 1, "session_idle_s": 1}}"#)
        let server = try await HTTPServerProcess.start(arguments: ["--no-default-plugins"], environment: environment)
        defer { server.terminate() }
        let url = server.url
        let opened = try await Self.send(url, [:], body: MCPHTTPGuardTests.initialize)
        let session = try #require(opened.header("Mcp-Session-Id"), "\(opened)")
        try await Task.sleep(for: .seconds(2))
        let ended = try await Self.send(url, ["Mcp-Session-Id": session], body: MCPHTTPGuardTests.list)
        #expect(ended.status == 404, "\(ended)")
        #expect(try await Self.send(url, [:], body: MCPHTTPGuardTests.initialize).status == 200, "its place is free")
    }
}
