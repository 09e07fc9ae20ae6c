"""The official MCP SDK's client gives up on a slow call (its caller times out, so it sends
notifications/cancelled), in both protocol generations, against `skillhost mcp` on stdio serving the behaviours
fixture. The server's standard error (where the plugin's log lines go) is passed through, so the caller can see the
plugin notice the cancellation.

Usage: python mcp_cancel_client.py <skillhost binary> <plugins folder>
"""
import asyncio
import os
import sys

from mcp import Client, StdioServerParameters


async def run(mode: str) -> None:
    env = dict(os.environ)
    env["SKILLHOST_LOG"] = "info"
    params = StdioServerParameters(
        command=sys.argv[1], args=["mcp", "--no-default-plugins", "--plugins", sys.argv[2]], env=env)
    async with Client(params, mode=mode) as client:
        try:
            await asyncio.wait_for(client.call_tool("cooperative", {"ms": 60000}), timeout=1)
        except asyncio.TimeoutError:
            print(f"{mode}: gave up", flush=True)
        # The plugin's log line comes on the server's standard error; give it time on a busy machine.
        await asyncio.sleep(3)


for generation in ["auto", "legacy"]:
    asyncio.run(run(generation))
