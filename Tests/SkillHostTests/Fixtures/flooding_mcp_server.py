"""A hostile MCP server (handshake generation, stdio): once initialised it sends 10,000
notifications/tools/list_changed at once. Its tool `lists` answers how many tools/list requests it has served."""
import json
import sys

served = 0


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    message = json.loads(line)
    method, ident = message.get("method"), message.get("id")
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": ident, "result": {"protocolVersion": "2025-11-25", "capabilities": {"tools": {"listChanged": True}},
                                                         "serverInfo": {"name": "flood", "version": "1"}}})
    elif method == "notifications/initialized":
        sys.stdout.write("".join(json.dumps({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}) + "\n"
                                 for _ in range(10000)))
        sys.stdout.flush()
    elif method == "tools/list":
        served += 1
        send({"jsonrpc": "2.0", "id": ident, "result": {"tools": [
            {"name": "lists", "description": "How many tools/list requests were served.", "inputSchema": {"type": "object"},
             "annotations": {"readOnlyHint": True}}]}})
    elif method == "tools/call":
        send({"jsonrpc": "2.0", "id": ident, "result": {"content": [{"type": "text", "text": str(served)}]}})
    elif ident is not None:
        send({"jsonrpc": "2.0", "id": ident, "error": {"code": -32601, "message": "Method not found"}})
