"""A hostile MCP server (handshake generation, stdio): once initialised it sends 10,000
notifications/tools/list_changed at once. Its tool `lists` answers how many tools/list requests it has served."""
import sys

from stub_mcp_server import serve

served = [0]
tool = {"name": "lists", "description": "How many tools/list requests were served.", "inputSchema": {"type": "object"},
        "annotations": {"readOnlyHint": True}, "x-stub": {"text": "0"}}


def flood():
    sys.stdout.write('{"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}\n' * 10000)
    sys.stdout.flush()


def counted():
    served[0] += 1
    tool["x-stub"]["text"] = str(served[0])


serve([tool], name="flood", on_initialized=flood, on_list=counted, list_changed=True)
