"""Compares `skillhost mcp` with the reference Python server `mcp-server-time`, from the same client (the official
MCP Python SDK, legacy handshake so both speak the same revision).

Usage: python Benchmarks/mcp_compare.py <skillhost binary> [calls] [runs]
Prints, for each server: start-to-ready (spawn → initialize answered) and tools/call round trip, each as
median / p10 / p90 over the runs.
"""
import asyncio
import os
import statistics
import sys
import time

from mcp import Client, StdioServerParameters


def summary(values):
    values = sorted(values)
    pick = lambda q: values[min(len(values) - 1, int(q * (len(values) - 1)))]
    return statistics.median(values), pick(0.1), pick(0.9)


async def measure(params, tool, arguments, calls):
    start = time.perf_counter()
    async with Client(params, mode="legacy") as client:
        ready = time.perf_counter() - start
        for _ in range(20):  # warm-up
            await client.call_tool(tool, arguments)
        samples = []
        for _ in range(calls):
            t = time.perf_counter()
            result = await client.call_tool(tool, arguments)
            samples.append(time.perf_counter() - t)
            assert not result.is_error, result
    return ready, samples


def measure_raw(command, tool, arguments, calls):
    """The same round trip with a minimal client: one JSON line out, one line back (no SDK overhead)."""
    import json
    import subprocess
    start = time.perf_counter()
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               bufsize=0)
    def request(message):
        process.stdin.write((json.dumps(message) + "\n").encode())
        while True:
            reply = json.loads(process.stdout.readline())
            if reply.get("id") == message["id"]:
                return reply
    request({"jsonrpc": "2.0", "id": 0, "method": "initialize",
             "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}})
    ready = time.perf_counter() - start
    process.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    samples = []
    for index in range(20 + calls):
        t = time.perf_counter()
        reply = request({"jsonrpc": "2.0", "id": index + 1, "method": "tools/call",
                         "params": {"name": tool, "arguments": arguments}})
        if index >= 20:
            samples.append(time.perf_counter() - t)
        assert not reply["result"].get("isError"), reply
    process.stdin.close()
    process.wait()
    return ready, samples


async def main():
    binary = sys.argv[1]
    calls = int(sys.argv[2]) if len(sys.argv) > 2 else 500
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    env = dict(os.environ)
    venv_bin = os.path.dirname(sys.executable)
    servers = {
        "skillhost mcp (calculator)": (StdioServerParameters(command=binary, args=["mcp"], env=env),
                                       "calculator", {"expression": "(23+7)*2"}),
        "skillhost mcp (clock_now)": (StdioServerParameters(command=binary, args=["mcp"], env=env),
                                      "clock_now", {"time_zone": "Europe/Paris"}),
        "mcp-server-time (get_current_time)": (
            StdioServerParameters(command=os.path.join(venv_bin, "mcp-server-time"), args=["--local-timezone", "UTC"], env=env),
            "get_current_time", {"timezone": "Europe/Paris"}),
    }
    for name, (params, tool, arguments) in servers.items():
        readies, medians, all_calls = [], [], []
        for _ in range(runs):
            ready, samples = await measure(params, tool, arguments, calls)
            readies.append(ready)
            medians.append(statistics.median(samples))
            all_calls += samples
        r = summary(readies)
        c = summary(all_calls)
        raw_calls = []
        for _ in range(runs):
            raw_calls += measure_raw([params.command] + list(params.args), tool, arguments, calls)[1]
        raw = summary(raw_calls)
        print(f"{name}: minimal client tools/call median {raw[0]*1e6:.0f} µs (p10 {raw[1]*1e6:.0f}, p90 {raw[2]*1e6:.0f})")
        print(f"{name}: ready median {r[0]*1000:.1f} ms (p10 {r[1]*1000:.1f}, p90 {r[2]*1000:.1f}); "
              f"tools/call median {c[0]*1e6:.0f} µs (p10 {c[1]*1e6:.0f}, p90 {c[2]*1e6:.0f}); "
              f"run medians {min(medians)*1e6:.0f}–{max(medians)*1e6:.0f} µs; {runs} runs × {calls} calls")


asyncio.run(main())
