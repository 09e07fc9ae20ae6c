"""Drives `skillhost mcp` with the official MCP Python SDK, in both protocol generations.

Usage: python mcp_client.py <skillhost binary> <plugins folder> <plugin to drop in>.
Prints one JSON object per line with what it saw.
"""
import asyncio
import json
import os
import shutil
import sys

from mcp import Client, StdioServerParameters


async def run(mode: str) -> None:
    folder, plugin = sys.argv[2], sys.argv[3]
    params = StdioServerParameters(command=sys.argv[1], args=["mcp", "--plugins", folder], env=dict(os.environ))
    changed = asyncio.Event()

    async def on_message(message) -> None:
        if "tools/list_changed" in repr(message) or "ToolListChanged" in type(getattr(message, "root", message)).__name__:
            changed.set()

    async with Client(params, mode=mode, message_handler=on_message) as client:
        tools = await client.list_tools()
        calculator = next(t for t in tools.tools if t.name == "calculator")
        ok = await client.call_tool("calculator", {"expression": "(23+7)*2"})
        failed = await client.call_tool("calculator", {"expression": "1/0"})
        try:
            await client.call_tool("no_such_tool", {})
            unknown = "no error"
        except Exception as error:  # the SDK raises for JSON-RPC errors
            unknown = str(error)
        # Hot reload: a plugin dropped into the served folder becomes notifications/tools/list_changed — on a
        # subscriptions/listen stream in the stateless generation (never unasked), unasked in the handshake one.
        # The same file name each run: a pinned skill answered from another file is another provider, unapproved
        # until trusted (and then not listed to the client).
        target = os.path.join(folder, "dropped.so")

        def drop() -> None:
            shutil.copy(plugin, target + ".partial")
            os.rename(target + ".partial", target)

        notified = False
        try:
            # A generous cap (a busy 2-core machine may take long to load and probe the plugin), not a timing.
            if mode == "legacy":
                drop()
                await asyncio.wait_for(changed.wait(), timeout=60)
                notified = True
            else:
                async with client.listen(tools_list_changed=True) as subscription:
                    honoured = subscription.honored.tools_list_changed
                    drop()
                    async def first_event():
                        async for event in subscription:
                            return event
                    event = await asyncio.wait_for(first_event(), timeout=60)
                    notified = honoured and type(event).__name__ == "ToolsListChanged"
        except asyncio.TimeoutError:
            notified = False
        after = await client.list_tools()
        # Stateless: a plugin copied over in place (new bytes, the same name) and one removed are changes too.
        updated_notified = removed_notified = None
        if mode != "legacy":
            async def next_event(subscription):
                async for event in subscription:
                    return type(event).__name__
            for change in ("update", "remove"):
                try:
                    async with client.listen(tools_list_changed=True) as subscription:
                        if change == "update":
                            with open(target, "ab") as file:  # in place: trailing bytes, a new version
                                file.write(b"\0")
                        else:
                            os.remove(target)
                        seen = await asyncio.wait_for(next_event(subscription), timeout=60) == "ToolsListChanged"
                except asyncio.TimeoutError:
                    seen = False
                if change == "update":
                    updated_notified = seen
                else:
                    removed_notified = seen
        else:
            os.remove(target)
        # The plugins' state as resources; in the stateless generation a change arrives on a listen stream.
        resources = await client.list_resources()
        uris = [str(r.uri) for r in resources.resources]
        state = await client.read_resource("skillhost://state/notes")
        state_updated = None
        if mode != "legacy":
            async with client.listen(resource_subscriptions=["skillhost://state/notes"]) as subscription:
                await client.call_tool("notes_add", {"title": f"from the SDK ({mode})"})
                async def first_update():
                    async for event in subscription:
                        return event
                try:
                    event = await asyncio.wait_for(first_update(), timeout=60)
                    state_updated = [type(event).__name__, str(getattr(event, "uri", ""))]
                except asyncio.TimeoutError:
                    state_updated = "timed out"
        after_state = await client.read_resource("skillhost://state/notes", cache_mode="bypass")
        print(json.dumps({
            "mode": mode,
            "list_changed": notified,
            "updated_notified": updated_notified,
            "removed_notified": removed_notified,
            "tools_after": len(after.tools),
            "version": client.protocol_version,
            "server_info": client.server_info.name if client.server_info else None,
            "tools": len(tools.tools),
            "calculator_read_only": calculator.annotations.read_only_hint,
            "ok": [ok.is_error, ok.content[0].text],
            "failed": [failed.is_error, failed.content[0].text],
            "unknown": unknown,
            "resources": uris,
            "state": state.contents[0].text,
            "state_updated": state_updated,
            "state_after": after_state.contents[0].text,
        }), flush=True)


asyncio.run(run("auto"))
asyncio.run(run("legacy"))
