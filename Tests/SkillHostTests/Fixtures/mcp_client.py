"""Drives `skillhost mcp` with the official MCP Python SDK, in both protocol generations.

Usage: python mcp_client.py <skillhost binary>. Prints one JSON object per line with what it saw.
"""
import asyncio
import json
import os
import sys

from mcp import Client, StdioServerParameters


async def run(mode: str) -> None:
    params = StdioServerParameters(command=sys.argv[1], args=["mcp"], env=dict(os.environ))
    async with Client(params, mode=mode) as client:
        tools = await client.list_tools()
        calculator = next(t for t in tools.tools if t.name == "calculator")
        ok = await client.call_tool("calculator", {"expression": "(23+7)*2"})
        failed = await client.call_tool("calculator", {"expression": "1/0"})
        try:
            await client.call_tool("no_such_tool", {})
            unknown = "no error"
        except Exception as error:  # the SDK raises for JSON-RPC errors
            unknown = str(error)
        print(json.dumps({
            "mode": mode,
            "version": client.protocol_version,
            "tools": len(tools.tools),
            "calculator_read_only": calculator.annotations.read_only_hint,
            "ok": [ok.is_error, ok.content[0].text],
            "failed": [failed.is_error, failed.content[0].text],
            "unknown": unknown,
        }), flush=True)


asyncio.run(run("auto"))
asyncio.run(run("legacy"))
