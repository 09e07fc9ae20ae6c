"""A Streamable HTTP MCP server of the 2025-11-25 form only (sessions, no server/discover), on the standard library.

Prints "listening on 127.0.0.1:<port>". Tool: echo(text). Requests after initialize must name the session.
"""
import json
import sys
import signal

# Whatever mask the test runner's thread had, SIGTERM and SIGINT must reach this server so it can be stopped.
signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SESSIONS = set()
TOOLS = [{"name": "legacy_echo", "description": "Echoes its text.", "annotations": {"readOnlyHint": True},
          "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}},
         # Hostile answers: an SSE data line that never ends, and a body announced as 1 GB. Each writes at most
         # 1 GB (to loopback), stopping when the client hangs up.
         {"name": "flood_sse", "description": "Answers with an endless event.", "annotations": {"readOnlyHint": True},
          "inputSchema": {"type": "object"}},
         {"name": "huge_length", "description": "Announces a 1 GB answer.", "annotations": {"readOnlyHint": True},
          "inputSchema": {"type": "object"}}]
GIGABYTE = 1 << 30


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, status, body=None, headers=()):
        data = json.dumps(body).encode() if body is not None else b""
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        if body is not None:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self.answer(405)

    def do_DELETE(self):
        SESSIONS.discard(self.headers.get("Mcp-Session-Id"))
        self.answer(200)

    def do_POST(self):
        message = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        method, ident = message.get("method"), message.get("id")
        if method == "initialize":
            session = uuid.uuid4().hex
            SESSIONS.add(session)
            self.answer(200, {"jsonrpc": "2.0", "id": ident, "result": {
                "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                "serverInfo": {"name": "legacy-http", "version": "1.0"}}}, [("Mcp-Session-Id", session)])
            return
        if method == "server/discover":
            self.answer(400, {"jsonrpc": "2.0", "id": ident, "error": {"code": -32600, "message": "no session"}})
            return
        if self.headers.get("Mcp-Session-Id") not in SESSIONS:
            self.answer(400 if "Mcp-Session-Id" not in self.headers else 404)
            return
        if ident is None:
            self.answer(202)
        elif method == "tools/list":
            self.answer(200, {"jsonrpc": "2.0", "id": ident, "result": {"tools": TOOLS}})
        elif method == "tools/call" and message["params"]["name"] in ("flood_sse", "huge_length"):
            self.send_response(200)
            if message["params"]["name"] == "flood_sse":
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                self.wfile.write(b"event: message\ndata: ")
            else:
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(GIGABYTE))
                self.end_headers()
            chunk = b"x" * 65536
            try:
                for _ in range(GIGABYTE // len(chunk)):
                    self.wfile.write(chunk)
            except (BrokenPipeError, ConnectionResetError):
                pass
            self.close_connection = True
        elif method == "tools/call":
            text = message["params"]["arguments"]["text"]
            self.answer(200, {"jsonrpc": "2.0", "id": ident, "result": {"content": [{"type": "text", "text": text}]}})
        else:
            self.answer(200, {"jsonrpc": "2.0", "id": ident, "error": {"code": -32601, "message": "Method not found"}})


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(f"listening on 127.0.0.1:{server.server_address[1]}", file=sys.stderr, flush=True)
server.serve_forever()
