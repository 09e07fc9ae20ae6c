"""A minimal MCP server of the handshake generation only (no server/discover), for client tests.

Tools: `echo_text(text)` returns the text; `crash()` makes the process exit with status 3.
"""
import json
import sys

TOOLS = [
    {"name": "echo_text", "description": "Echoes text back.", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
     "annotations": {"readOnlyHint": True, "idempotentHint": True, "openWorldHint": False}},
    {"name": "crash", "description": "Exits the server.", "inputSchema": {"type": "object"}},
]

for line in sys.stdin:
    message = json.loads(line)
    method, ident = message.get("method"), message.get("id")
    if ident is None:
        continue
    if method == "initialize":
        result = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}, "serverInfo": {"name": "legacy", "version": "9.9"}}
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call" and message["params"]["name"] == "echo_text":
        result = {"content": [{"type": "text", "text": message["params"]["arguments"]["text"]}], "isError": False}
    elif method == "tools/call" and message["params"]["name"] == "crash":
        sys.exit(3)
    else:
        print(json.dumps({"jsonrpc": "2.0", "id": ident, "error": {"code": -32601, "message": "Method not found"}}), flush=True)
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": ident, "result": result}), flush=True)
