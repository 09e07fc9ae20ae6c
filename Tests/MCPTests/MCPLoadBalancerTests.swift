import Foundation
import TestSupport
import Testing

/// Stateless MCP scales out: nginx (a real load balancer, started with its own configuration on loopback ports)
/// in front of two `skillhost mcp --http` instances, driven by the official SDK's HTTP client.
struct MCPLoadBalancerTests {
    @Test func twoThousandCallsThroughNginxLandOnBothInstances() async throws {
        let python = try await PythonPeers.ensure()
        let folder = Paths.temporaryDirectory("mcp-nginx")
        let environment = cliEnvironment(home: folder)
        let first = try await HTTPServerProcess.start(arguments: [], environment: environment)
        let second = try await HTTPServerProcess.start(arguments: [], environment: environment)
        let port = try LoopbackPort.free()
        let nginx = try await Nginx.start(
            in: folder, port: port, upstreams: [first.port, second.port], location: "/mcp")
        let result = try await runProcessOffPool(
            python, [Paths.fixtures + "/mcp_http_load.py", "http://127.0.0.1:\(port)/mcp", "2000", "4"],
            environment: environment)
        await nginx.stop()
        await first.stop()
        await second.stop()
        #expect(result.status == 0, "\(result.stderr.suffix(3000))")
        let tally = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        #expect(tally?["ok"] as? Int == 2000, "\(tally ?? [:])")
        #expect(tally?["errors"] as? Int == 0, "\(tally?["first_error"] ?? "")")
        // Which instance answered each request, from nginx's own access log.
        let log = (try? String(contentsOfFile: folder + "/nginx/access.log", encoding: .utf8)) ?? ""
        let landed = log.split(separator: "\n").reduce(into: [String: Int]()) { $0[String($1), default: 0] += 1 }
        #expect(landed["127.0.0.1:\(first.port)", default: 0] >= 100, "\(landed)")
        #expect(landed["127.0.0.1:\(second.port)", default: 0] >= 100, "\(landed)")
    }
}
