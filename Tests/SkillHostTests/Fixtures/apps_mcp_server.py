"""An MCP server with views (MCP Apps), some hostile: `show_small` has a good view, `show_big` one of 50 MB,
`show_typed` one of the wrong type, `refresh` is only for views, `model_only` only for models. Its tool `announced`
answers whether the client said, in initialize, that it renders MCP Apps."""
import json

from stub_mcp_server import serve

announced = {"text": "no"}
PAGE = "<!doctype html><title>small</title><p>small</p>"


def ui(uri, visibility=None):
    meta = {"ui": {"resourceUri": uri}}
    if visibility:
        meta["ui"]["visibility"] = visibility
    return meta


def tool(name, meta=None, stub=None):
    entry = {"name": name, "description": f"The {name} tool.", "inputSchema": {"type": "object"},
             "annotations": {"readOnlyHint": True}, "x-stub": stub or {"text": name}}
    if meta:
        entry["_meta"] = meta
    return entry


tools = [
    tool("show_small", ui("ui://apps/small")), tool("show_big", ui("ui://apps/big")),
    tool("show_typed", ui("ui://apps/typed")), tool("refresh", {"ui": {"visibility": ["app"]}}),
    tool("model_only", {"ui": {"visibility": ["model"]}}), tool("announced", stub=announced),
]
resources = {
    "ui://apps/small": [{"uri": "ui://apps/small", "mimeType": "text/html;profile=mcp-app", "text": PAGE,
                         "_meta": {"ui": {"csp": {"connectDomains": ["https://api.example.com"]}, "prefersBorder": True}}}],
    "ui://apps/big": [{"uri": "ui://apps/big", "mimeType": "text/html;profile=mcp-app", "text": "x" * (50 << 20)}],
    "ui://apps/typed": [{"uri": "ui://apps/typed", "mimeType": "text/html", "text": PAGE}],
}


def initialize(params):
    extension = params.get("capabilities", {}).get("extensions", {}).get("io.modelcontextprotocol/ui", {})
    announced["text"] = "yes" if "text/html;profile=mcp-app" in extension.get("mimeTypes", []) else "no"


serve(tools, name="apps", resources=resources, on_initialize=initialize)
