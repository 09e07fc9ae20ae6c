"""A minimal MCP server of the handshake generation only (no server/discover), for client tests.

Tools: `echo_text(text)` returns the text; `crash()` makes the process exit with status 3."""
from stub_mcp_server import serve

serve([
    {"name": "echo_text", "description": "Echoes text back.",
     "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
     "annotations": {"readOnlyHint": True, "idempotentHint": True, "openWorldHint": False}},
    {"name": "crash", "description": "Exits the server.", "inputSchema": {"type": "object"}, "x-stub": {"exit": 3}},
], name="legacy")
