"""A minimal MCP server (handshake generation) whose tools try what a sandbox must stop, for client tests.

Tools: `read_file(path)`, `write_file(path)`, `connect(port)` (TCP to 127.0.0.1), `signal_parent()`,
`unix_datagram(path)` and `chmod(path, mode)` (then os.utime and a user.* extended attribute); each answers
"ok: …" or the exception's words, as a tool result (isError false, so the test sees the text either way).
"""
import json
import os
import signal
import socket
import sys


def text_tool(name, description, properties):
    return {"name": name, "description": description,
            "inputSchema": {"type": "object", "properties": properties, "required": list(properties)},
            "annotations": {"readOnlyHint": True}}


TOOLS = [
    text_tool("read_file", "Reads a file.", {"path": {"type": "string"}}),
    text_tool("write_file", "Writes a file.", {"path": {"type": "string"}}),
    text_tool("connect", "Connects to a loopback port.", {"port": {"type": "integer"}}),
    text_tool("signal_parent", "Signals the process that started the server.", {}),
    text_tool("unix_datagram", "Sends a datagram to a socket file from a SOCK_RAW UNIX socket.",
              {"path": {"type": "string"}}),
    text_tool("chmod", "Changes a file's mode, then its times.", {"path": {"type": "string"}, "mode": {"type": "integer"}}),
]


def call(name, arguments):
    try:
        if name == "read_file":
            with open(arguments["path"]) as file:
                return "ok: " + file.read(64)
        if name == "write_file":
            with open(arguments["path"], "a") as file:
                file.write("written\n")
            return "ok: written"
        if name == "connect":
            with socket.create_connection(("127.0.0.1", arguments["port"]), timeout=5) as connection:
                return "ok: " + connection.recv(64).decode().strip()
        if name == "signal_parent":
            os.kill(os.getppid(), 0)
            return "ok: signalled"
        if name == "unix_datagram":
            with socket.socket(socket.AF_UNIX, socket.SOCK_RAW) as datagram:
                datagram.sendmsg([b"hello"], [], 0, arguments["path"])
            return "ok: sent"
        if name == "chmod":
            os.chmod(arguments["path"], arguments["mode"])
            os.utime(arguments["path"], (0, 0))
            return "ok: changed"
    except OSError as error:
        return f"{type(error).__name__}: {error.strerror}"
    return "unknown tool"


for line in sys.stdin:
    message = json.loads(line)
    method, ident = message.get("method"), message.get("id")
    if ident is None:
        continue
    if method == "initialize":
        result = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                  "serverInfo": {"name": "probing", "version": "1.0"}}
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call":
        params = message["params"]
        result = {"content": [{"type": "text", "text": call(params["name"], params.get("arguments", {}))}],
                  "isError": False}
    else:
        print(json.dumps({"jsonrpc": "2.0", "id": ident, "error": {"code": -32601, "message": "Method not found"}}),
              flush=True)
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": ident, "result": result}), flush=True)
