"""An MCP server over Streamable HTTP built on a real library, for skillhost's HTTP client.

Usage: python http_mcp_server.py sdk|fastmcp. Prints "listening on 127.0.0.1:<port>" once it accepts connections.
Tools: shout(text) (read-only) and slow_shout(text, seconds).
"""
import asyncio
import socket
import sys
import signal

# Whatever mask the test runner's thread had, SIGTERM and SIGINT must reach this server so it can be stopped.
signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
import threading
import time

kind = sys.argv[1]
sock = socket.socket()
sock.bind(("127.0.0.1", 0))
port = sock.getsockname()[1]
sock.close()


def announce_when_ready() -> None:
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            print(f"listening on 127.0.0.1:{port}", file=sys.stderr, flush=True)
            return
        except OSError:
            time.sleep(0.05)


threading.Thread(target=announce_when_ready, daemon=True).start()

if kind == "fastmcp":
    from fastmcp import FastMCP
    server = FastMCP("fastmcp-peer")
else:
    from mcp.server.mcpserver import MCPServer
    server = MCPServer("sdk-peer")


@server.tool(annotations={"readOnlyHint": True})
def shout(text: str) -> str:
    """Upper-cases its text."""
    return text.upper() + "!"


@server.tool(annotations={"readOnlyHint": True})
async def slow_shout(text: str, seconds: float) -> str:
    """Upper-cases its text after a while."""
    await asyncio.sleep(seconds)
    return text.upper() + "!"


if kind == "fastmcp":
    server.run(transport="http", host="127.0.0.1", port=port, log_level="warning")
else:
    server.run(transport="streamable-http", host="127.0.0.1", port=port)
