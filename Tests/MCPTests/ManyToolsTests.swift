import Foundation
import TestSupport
import Testing

@testable import MCP

/// A server (or a tampered tool cache) naming very many tools costs time linear in them and is cut to what is kept:
/// 100,000 tools of one name made `skillhost list` run past 20 s (a suffix searched from _2 for each, pins.json read
/// and written once per tool) and grew pins.json past what skillhost reads back.
struct ManyToolsTests {
    @Test func clashingNamesGetSuffixesInOnePass() {
        let ids = MCPSkillSource.skillIDs(for: Array(repeating: "t", count: 100_000), server: "many", taken: [])
        #expect(Set(ids).count == 100_000)
        #expect(ids.prefix(3) == ["t", "t_2", "t_3"] && ids.last == "t_100000")
    }

    @Test func aServerListingTooManyToolsIsCutAndSaysSo() throws {
        let home = Paths.temporaryDirectory("many-tools-home")
        // The shared stub server, listing one tool 5,000 times.
        let server = Paths.fixtures + "/stub_mcp_server.py"
        let tools = home + "/tools.json"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        try
            ("["
            + Array(repeating: #"{"name": "t", "description": "d", "inputSchema": {"type": "object"}}"#, count: 5000)
            .joined(separator: ",") + "]").write(toFile: tools, atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(atPath: home + "/config/skillhost", withIntermediateDirectories: true)
        try #"{"mcpServers": {"many": {"command": "/usr/bin/python3", "args": ["\#(server)", "\#(tools)", "many"]}}}"#
            .write(
                toFile: home + "/config/skillhost/config.json", atomically: true, encoding: .utf8)
        let listed = try runProcess(Paths.skillhost, ["list"], environment: cliEnvironment(home: home))
        #expect(listed.status == 0, "\(listed.stderr.suffix(500))")
        let said = listed.stdout + listed.stderr
        #expect(
            said.contains(
                "MCP server many lists 5000 tools; the first 2000 are used (more would be more than anyone reads, and "
                    + "each is pinned)"), "\(said.suffix(1000))")
        #expect(said.contains("t_2000") && !said.contains("t_2001"))
        // Listed again (the pins now on disk, the tools from the cache), nothing changed is reported.
        let again = try runProcess(Paths.skillhost, ["list"], environment: cliEnvironment(home: home))
        #expect(again.status == 0 && !again.stdout.contains("changed since"), "\(again.stdout.suffix(500))")
    }
}
