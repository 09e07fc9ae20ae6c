"""A stub MCP server of the handshake generation over stdio, whose tools are data — the one the tests share.

Run as a program: `stub_mcp_server.py TOOLS` where TOOLS is JSON text or a JSON file: a list of tools as
`tools/list` sends them, each with an optional "x-stub" member (never listed) saying how a call is answered:
{"echo": "ARG"} (the text of argument ARG, the default with ARG "text"), {"text": "…"} (a fixed text), or
{"exit": N} (the process ends with status N). Imported, `serve(tools, name, on_initialized=None, on_list=None)`
serves the same to a server with a behaviour of its own (a flood of notifications, a count of lists, resources to
read by address)."""
import json
import os
import sys


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def serve(tools, name="stub", on_initialized=None, on_list=None, list_changed=False, resources=None, on_initialize=None):
    listed = [{k: v for k, v in tool.items() if k != "x-stub"} for tool in tools]
    behaviour = {tool["name"]: tool.get("x-stub", {"echo": "text"}) for tool in tools}
    for line in sys.stdin:
        message = json.loads(line)
        method, ident = message.get("method"), message.get("id")
        if method == "notifications/initialized" and on_initialized:
            on_initialized()
        if ident is None:
            continue
        if method == "initialize":
            if on_initialize:
                on_initialize(message["params"])
            capabilities = {"tools": {"listChanged": True} if list_changed else {}}
            result = {"protocolVersion": "2025-06-18", "capabilities": capabilities,
                      "serverInfo": {"name": name, "version": "9.9"}}
        elif method == "tools/list":
            if on_list:
                on_list()
            result = {"tools": listed}
        elif method == "resources/read" and message["params"].get("uri") in (resources or {}):
            result = {"contents": resources[message["params"]["uri"]]}
        elif method == "tools/call" and message["params"].get("name") in behaviour:
            stub = behaviour[message["params"]["name"]]
            arguments = message["params"].get("arguments") or {}
            if "exit" in stub:
                sys.exit(stub["exit"])
            text = stub["text"] if "text" in stub else str(arguments.get(stub.get("echo", "text"), ""))
            result = {"content": [{"type": "text", "text": text}], "isError": False}
        else:
            send({"jsonrpc": "2.0", "id": ident, "error": {"code": -32601, "message": "Method not found"}})
            continue
        send({"jsonrpc": "2.0", "id": ident, "result": result})


if __name__ == "__main__":
    given = sys.argv[1]
    if os.path.exists(given):
        with open(given) as file:
            given = file.read()
    serve(json.loads(given), name=sys.argv[2] if len(sys.argv) > 2 else "stub")
