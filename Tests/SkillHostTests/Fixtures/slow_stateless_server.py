"""A stateless-only MCP server (revision 2026-07-28) that takes 3.5 s to start: requests sent meanwhile wait in
its input. It refuses `initialize` with -32022, as the revision says, and has one tool."""
import json
import sys
import time

time.sleep(3.5)
VERSION = "2026-07-28"
TOOLS = [{"name": "slow_echo", "description": "Echoes its text.",
          "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
          "annotations": {"readOnlyHint": True}}]


def answer(ident, result=None, error=None):
    message = {"jsonrpc": "2.0", "id": ident}
    message["error" if error else "result"] = error or result
    print(json.dumps(message), flush=True)


for line in sys.stdin:
    message = json.loads(line)
    method, ident = message.get("method"), message.get("id")
    if ident is None:
        continue
    if method == "server/discover":
        answer(ident, {"supportedVersions": [VERSION], "capabilities": {"tools": {}},
                       "serverInfo": {"name": "slow", "version": "1.0"}, "resultType": "complete"})
    elif method == "initialize":
        answer(ident, error={"code": -32022, "message": "Unsupported protocol version",
                             "data": {"supported": [VERSION]}})
    elif method == "tools/list":
        answer(ident, {"tools": TOOLS, "resultType": "complete"})
    elif method == "tools/call":
        text = message["params"]["arguments"]["text"]
        answer(ident, {"content": [{"type": "text", "text": text}], "isError": False, "resultType": "complete"})
    else:
        answer(ident, error={"code": -32601, "message": "Method not found"})
