"""Drives `skillhost mcp --http` with the official MCP Python SDK's Streamable HTTP client, in both protocol
generations (2026-07-28 stateless, 2025-11-25 sessions), raw HTTP for what a client library hides, and FastMCP's
client.

Usage: python mcp_http_client.py <endpoint URL> <token> <plugins folder> <plugin to drop in>.
Prints one JSON object per line with what it saw.
"""
import asyncio
import json
import os
import shutil
import sys

import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

URL, TOKEN, FOLDER, PLUGIN = sys.argv[1:5]
AUTH = {"Authorization": f"Bearer {TOKEN}"}
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}


def drop(name: str) -> str:
    target = os.path.join(FOLDER, name)
    shutil.copy(PLUGIN, target + ".partial")
    os.rename(target + ".partial", target)
    return target


async def first(iterator, timeout=60):
    async def take():
        async for item in iterator:
            return item
    return await asyncio.wait_for(take(), timeout=timeout)


async def sdk(mode: str) -> None:
    answers = []

    async def elicit(context, params):
        # The user says yes to the first question and no to the second.
        answers.append(params.message)
        accept = len(answers) == 1
        return types.ElicitResult(action="accept", content={"confirm": True}) if accept else types.ElicitResult(
            action="decline")

    changed = asyncio.Event()

    async def on_message(message) -> None:
        if "ToolListChanged" in type(getattr(message, "root", message)).__name__:
            changed.set()

    transport = streamable_http_client(URL, http_client=create_mcp_http_client(headers=AUTH))
    async with Client(transport, mode=mode, elicitation_callback=elicit, message_handler=on_message) as client:
        # The previous run's file (the same plugin) must be gone first: its removal is a change of its own, and
        # hot reload may still be taking it away on a busy machine.
        tools = await client.list_tools()
        for _ in range(600):
            if not any(tool.name == "twice64" for tool in tools.tools):
                break
            await asyncio.sleep(0.1)
            tools = await client.list_tools()
        changed.clear()
        ok = await client.call_tool("calculator", {"expression": "(23+7)*2"})
        failed = await client.call_tool("calculator", {"expression": "1/0"})
        try:
            await client.call_tool("no_such_tool", {})
            unknown = "no error"
        except Exception as error:
            unknown = str(error)
        progress = []

        async def on_progress(done, total, message):
            progress.append(done)

        progressed = await client.call_tool("progress", {}, progress_callback=on_progress)
        confirmed = await client.call_tool("notes_delete", {"id": 999999})
        declined = await client.call_tool("notes_delete", {"id": 999999})
        # The same file name each run: a pinned skill answered from another file is another provider, unapproved
        # until trusted (and then not listed to the client).
        target = "dropped.so"
        notified = False
        try:
            if mode == "legacy":
                path = drop(target)
                await asyncio.wait_for(changed.wait(), timeout=60)
                notified = True
            else:
                async with client.listen(tools_list_changed=True) as subscription:
                    path = drop(target)
                    event = await first(subscription)
                    notified = type(event).__name__ == "ToolsListChanged"
        except asyncio.TimeoutError:
            pass
        # The change notified may still be the previous run's file going away (hot reload reports each change on
        # its own): list until the dropped plugin's tools are there, within a generous cap.
        after = await client.list_tools()
        for _ in range(600):
            if any(tool.name == "twice64" for tool in after.tools):
                break
            await asyncio.sleep(0.1)
            after = await client.list_tools()
        os.remove(path)
        print(json.dumps({
            "mode": mode, "version": client.protocol_version,
            "server_info": client.server_info.name if client.server_info else None,
            "tools": len(tools.tools), "tools_after": len(after.tools), "list_changed": notified,
            "ok": [ok.is_error, ok.content[0].text], "failed": [failed.is_error, failed.content[0].text],
            "unknown": unknown, "progress": progress, "progressed": progressed.content[0].text,
            "questions": answers, "confirmed": [confirmed.is_error, confirmed.content[0].text],
            "declined": [declined.is_error, declined.content[0].text],
        }), flush=True)


async def raw() -> None:
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "calculator", "arguments": {"expression": "1+1"}, "_meta": META}}
    headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2026-07-28",
               "Mcp-Method": "tools/call", "Mcp-Name": "calculator"}
    async with httpx2.AsyncClient(timeout=60) as http:
        no_token = await http.post(URL, json=call, headers=headers)
        foreign = await http.post(URL, json=call, headers={**headers, **AUTH, "Origin": "http://evil.example"})
        mismatch = await http.post(URL, json=call, headers={**headers, **AUTH, "Mcp-Name": "other"})
        get = await http.get(URL, headers=AUTH)
        huge_body = await http.post(URL, content=b"a" * (5 << 20), headers={**headers, **AUTH})
        # Request headers: 12 KiB are served, 17 KiB are refused with 431 (the limit is 16 KiB, as Node's). The
        # server closes at once with the rest unread, so the client may see the connection reset before the 431.
        big_header = await http.post(URL, json=call, headers={**headers, **AUTH, "X-Padding": "a" * (12 << 10)})
        try:
            huge_header = (await http.post(
                URL, json=call, headers={**headers, **AUTH, "X-Padding": "a" * (17 << 10)})).status_code
        except httpx2.TransportError:
            huge_header = "reset"
        # A dropped connection cancels its call: the server admits one call per client here, so the next call
        # gets through only once the abandoned one has ended. `patient` waits ten minutes and its deadline is ten
        # minutes, so nothing but noticing the client leave ends it. The client gives up after a second of
        # silence (the server answers a call without progress only when it ends) and closes the connection.
        slow = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "patient", "arguments": {"ms": 600000}, "_meta": META}}
        try:
            await http.post(URL, json=slow, headers={**headers, **AUTH, "Mcp-Name": "patient"},
                            timeout=httpx2.Timeout(60, read=1))
            opened = "answered"
        except httpx2.ReadTimeout:
            opened = "gave up"
        busy_seen = False
        admitted = None
        for _ in range(600):
            answer = await http.post(URL, json=call, headers={**headers, **AUTH})
            if answer.status_code == 429:
                busy_seen = True
                await asyncio.sleep(0.1)
                continue
            admitted = answer.json()["result"]["content"][0]["text"]
            break
    print(json.dumps({
        "mode": "raw", "no_token": [no_token.status_code, no_token.headers.get("www-authenticate")],
        "foreign_origin": foreign.status_code, "mismatch": [mismatch.status_code, mismatch.json()["error"]["code"]],
        "get_without_session": get.status_code, "slow_opened": opened,
        "huge_body": huge_body.status_code, "after_disconnect": admitted,
        "headers_12k_17k": [big_header.status_code, huge_header],
        "busy_seen": busy_seen,
    }), flush=True)


async def fast() -> None:
    from fastmcp import Client as FastClient
    from fastmcp.client.elicitation import ElicitResult as FastElicitResult
    answers = []

    async def elicit(message, response_type, params, context):
        answers.append(message)
        if len(answers) == 1:
            return FastElicitResult(action="accept", content={"confirm": True})
        return FastElicitResult(action="decline")

    progress = []

    async def on_progress(done, total, message):
        progress.append(done)

    async with FastClient(URL, auth=TOKEN, elicitation_handler=elicit, progress_handler=on_progress) as client:
        tools = await client.list_tools()
        # One call per client: a call of the runs before (same token) may still be ending on a busy machine, and
        # the server says to retry when one has finished (a full run once met it here).
        for attempt in range(600):
            try:
                ok = await client.call_tool("calculator", {"expression": "(23+7)*2"})
                break
            except Exception as error:
                if "Server busy" not in str(error) or attempt == 599:
                    raise
                await asyncio.sleep(0.1)
        failed = await client.call_tool("calculator", {"expression": "1/0"}, raise_on_error=False)
        progressed = await client.call_tool("progress", {})
        confirmed = await client.call_tool("notes_delete", {"id": 999999}, raise_on_error=False)
        declined = await client.call_tool("notes_delete", {"id": 999999}, raise_on_error=False)
    print(json.dumps({
        "mode": "fastmcp", "tools": len(tools), "ok": [ok.is_error, ok.content[0].text],
        "failed": [failed.is_error, failed.content[0].text], "progress": progress,
        "progressed": progressed.content[0].text, "questions": answers,
        "confirmed": [confirmed.is_error, confirmed.content[0].text],
        "declined": [declined.is_error, declined.content[0].text],
    }), flush=True)


asyncio.run(sdk("auto"))
asyncio.run(sdk("legacy"))
asyncio.run(raw())
asyncio.run(fast())
