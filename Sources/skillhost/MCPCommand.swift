import Agent
import CProcess
import Foundation
import JSONRPC
import MCP
import SkillFolders
import SkillHost
import Support
import Synchronization

/// `skillhost mcp`: the registry as an MCP server on stdio until the client closes standard input.
enum MCPCommand {
    /// Moves the protocol channel off descriptor 1 and points 1 at standard error, so nothing an in-process plugin
    /// prints (a constructor, a stray printf) can corrupt the protocol. Call before any plugin loads.
    /// Returns the channel's descriptor (1 when it cannot be moved).
    static func protectStandardOutput() -> Int32 {
        let channel = dup(1)
        guard channel >= 0, dup2(2, 1) >= 0 else { return 1 }
        return channel
    }

    /// `output`: the protocol channel's descriptor. A client that closed it gets nothing more (a failed write is
    /// not a crash); the server ends when standard input does.
    static func run(registry: SkillRegistry, output: Int32, sessionToolCalls: Int?, skillFolders: SkillFolderTools)
        async
    {
        // A person who typed `skillhost mcp` in a terminal learns why nothing happens.
        if isatty(STDIN_FILENO) == 1 {
            StandardStreams.error(
                "skillhost: serving MCP on stdio, waiting for a client on standard input (an MCP client starts "
                    + "this command; --http ADDRESS:PORT serves over HTTP; Ctrl-D ends)\n")
        }
        let lock = Mutex(())
        let server = MCPServer(registry: registry, sessionToolCalls: sessionToolCalls, skillFolders: skillFolders) {
            line in
            lock.withLock { _ in _ = StandardStreams.write(output, line + "\n") }
        }
        // Standard input is read on threads of their own (blocking reads and plugin code never touch the
        // cooperative pool); the thread that ends a call writes its response.
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let reader = Thread {
                // Raw bytes (invalid UTF-8 is the server's to refuse), at most MCPServer.maximumLine per message;
                // one thread reads at a time (the read loop's leader).
                server.serve(LineReader(descriptor: STDIN_FILENO, limit: MCPServer.maximumLine))
                done.resume()
            }
            reader.name = "skillhost.mcp"
            reader.start()
        }
    }
}

extension MCPCommand {
    /// `skillhost mcp --http`: serves Streamable HTTP until SIGINT or SIGTERM, then ends subscriptions gracefully.
    static func serveHTTP(
        registry: SkillRegistry, configuration: MCPHTTPConfiguration, sessionToolCalls: Int?,
        skillFolders: SkillFolderTools
    ) async throws(CLIError) {
        let server = MCPServer(registry: registry, sessionToolCalls: sessionToolCalls, skillFolders: skillFolders)
        let service: MCPHTTPService
        do throws(MCPHTTPError) { service = try MCPHTTPService(server: server, configuration: configuration) } catch {
            throw .failure(error.message)
        }
        let host = configuration.address.contains(":") ? "[\(configuration.address)]" : configuration.address
        let scheme = configuration.tls == nil ? "http" : "https"
        let security =
            configuration.tokenDigests.isEmpty
            ? "no authentication (loopback only)" : "\(configuration.tokenDigests.count) bearer token(s)"
        StandardStreams.error(
            "skillhost: serving MCP at \(scheme)://\(host):\(service.port)\(configuration.path) (\(security)); "
                + "stop with Ctrl-C\n")
        await waitForTermination()
        service.stop()
    }

    /// Returns when the process gets SIGINT or SIGTERM (a handler writes to a pipe; a thread of its own reads it).
    static func waitForTermination() async {
        let signals = skillhost_termination_pipe()
        guard signals >= 0 else { return }
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let reader = Thread {
                var byte: UInt8 = 0
                while read(signals, &byte, 1) < 0, errno == EINTR {}
                done.resume()
            }
            reader.name = "skillhost.mcp.signals"
            reader.start()
        }
    }
}
