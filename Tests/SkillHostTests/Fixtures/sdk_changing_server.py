"""A stdio MCP server on the official SDK 2.x whose tools change: calling grow() adds the tool extra() and tells
subscriptions/listen subscribers (the only way a 2026-07-28 server announces it)."""
from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("changing")


def extra() -> str:
    """Appears after grow()."""
    return "extra!"


@server.tool(annotations={"readOnlyHint": True, "destructiveHint": False})
async def grow(ctx: Context) -> str:
    """Adds the tool extra."""
    server.add_tool(extra, annotations=None)
    await ctx.notify_tools_changed()
    return "grown"


server.run()
