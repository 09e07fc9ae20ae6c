import Agent
import Foundation
import MCP
import SkillHost
import Synchronization

/// `skillhost mcp`: the registry as an MCP server on stdio until the client closes standard input.
enum MCPCommand {
    static func run(registry: SkillRegistry, policy: Policy) async {
        let lock = Mutex(())
        let server = MCPServer(registry: registry, policy: policy) { line in
            lock.withLock { _ in FileHandle.standardOutput.write(Data((line + "\n").utf8)) }
        }
        // Standard input is read on a thread of its own (blocking reads never touch the cooperative pool).
        let (lines, continuation) = AsyncStream<String>.makeStream()
        let reader = Thread {
            while let line = readLine(strippingNewline: true) { continuation.yield(line) }
            continuation.finish()
        }
        reader.name = "skillhost.mcp.stdin"
        reader.start()
        await server.serve(lines: lines)
    }
}
