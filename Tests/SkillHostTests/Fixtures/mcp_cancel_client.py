"""The official MCP SDK's client, in both protocol generations, and FastMCP's client give up on a slow call (the
caller times out, so the client sends notifications/cancelled) against `skillhost mcp` on stdio serving the behaviours
fixture. The server's standard error (where the plugin's log lines go) is passed through, so the caller can see the
plugin notice the cancellation.

Usage: python mcp_cancel_client.py <skillhost binary> <plugins folder>
"""
import asyncio
import os
import sys

from fastmcp import Client as FastMCPClient
from fastmcp.client.transports import StdioTransport
from mcp import Client, StdioServerParameters


async def run(mode: str) -> None:
    env = dict(os.environ)
    env["SKILLHOST_LOG"] = "info"
    args = ["mcp", "--no-default-plugins", "--plugins", sys.argv[2]]
    if mode == "fastmcp":
        client = FastMCPClient(StdioTransport(command=sys.argv[1], args=args, env=env, log_file=sys.stderr))
    else:
        client = Client(StdioServerParameters(command=sys.argv[1], args=args, env=env), mode=mode)
    async with client:
        try:
            await asyncio.wait_for(client.call_tool("cooperative", {"ms": 60000}), timeout=1)
        except asyncio.TimeoutError:
            print(f"{mode}: gave up", flush=True)
        # The plugin's log line comes on the server's standard error; give it time on a busy machine.
        await asyncio.sleep(3)


for generation in ["auto", "legacy", "fastmcp"]:
    asyncio.run(run(generation))
