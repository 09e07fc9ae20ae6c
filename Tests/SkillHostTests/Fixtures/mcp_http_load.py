"""Many tools/call requests through the official MCP Python SDK's Streamable HTTP client (2026-07-28, stateless).

Usage: python mcp_http_load.py <endpoint URL> <calls> <clients>. Prints {"ok": …, "errors": …, "first_error": …}.
"""
import asyncio
import json
import sys

from mcp import Client

URL, CALLS, CLIENTS = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])


async def worker(index: int, calls: int, tally: dict) -> None:
    async with Client(URL, mode="auto") as client:
        for number in range(calls):
            try:
                result = await client.call_tool("calculator", {"expression": f"{index}*1000+{number}"})
                if result.is_error or result.content[0].text != str(index * 1000 + number):
                    raise RuntimeError(f"wrong answer: {result}")
                tally["ok"] += 1
            except Exception as error:  # every failure is counted and the first one shown
                tally["errors"] += 1
                tally.setdefault("first_error", repr(error))


async def main() -> None:
    tally = {"ok": 0, "errors": 0}
    share = CALLS // CLIENTS
    await asyncio.gather(*(worker(index, share, tally) for index in range(CLIENTS)))
    print(json.dumps(tally), flush=True)


asyncio.run(main())
