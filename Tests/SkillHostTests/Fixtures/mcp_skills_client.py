"""Reads `skillhost mcp`'s skill folders with the official MCP Python SDK: the skills extension in the capabilities,
skills/list and skills/get (sent as custom requests through the SDK's session), the files as resources.

Usage: python mcp_skills_client.py <skillhost binary>. Prints one JSON object with what it saw.
"""
import asyncio
import hashlib
import json
import os
import sys
from typing import Any, Literal

from pydantic import TypeAdapter

import mcp.types as types
from mcp import Client, StdioServerParameters


class SkillsList(types.Request[dict[str, Any] | None, Literal["skills/list"]]):
    method: Literal["skills/list"] = "skills/list"
    params: dict[str, Any] | None = None


class SkillsGet(types.Request[dict[str, Any], Literal["skills/get"]]):
    method: Literal["skills/get"] = "skills/get"
    name_param = "uri"


async def main() -> None:
    params = StdioServerParameters(command=sys.argv[1], args=["mcp"], env=dict(os.environ))
    async with Client(params, mode="legacy") as client:
        session = client.session
        capabilities = session.server_capabilities
        extensions = (capabilities.model_dump(by_alias=True).get("extensions") or {}) if capabilities else {}
        listed = await session.send_request(SkillsList(), TypeAdapter(dict))
        entry = listed["skills"][0]
        got = await session.send_request(SkillsGet(params={"uri": entry["uri"]}), TypeAdapter(dict))
        tools = await client.list_tools()
        activate = next(tool for tool in tools.tools if tool.name == "skill_activate")
        resources = await client.list_resources()
        uris = [str(resource.uri) for resource in resources.resources]
        verified = []
        for resource in entry["resources"]:
            read = await client.read_resource(resource["uri"])
            content = read.contents[0]
            data = content.text.encode() if hasattr(content, "text") else bytes(content.blob, "ascii")
            verified.append("sha256:" + hashlib.sha256(data).hexdigest() == resource["digest"])
        # What the list leaves out is not served either (a client refuses unlisted files; SEP-2640).
        unlisted = {}
        for uri in ["skill://greet/.hidden", "skill://greet/a/b/c/d/deep.md"]:
            try:
                await client.read_resource(uri)
                unlisted[uri] = "served"
            except Exception as error:
                unlisted[uri] = "refused"
        try:
            await session.send_request(SkillsGet(params={"uri": "skill://nope/SKILL.md"}), TypeAdapter(dict))
            missing = "no error"
        except Exception as error:  # the SDK raises for JSON-RPC errors
            missing = str(error)
        print(json.dumps({
            "extension": "io.modelcontextprotocol/skills" in extensions,
            "skills": [skill["frontmatter"]["name"] for skill in listed["skills"]],
            "frontmatter": entry["frontmatter"],
            "get_matches": got["skill"] == entry,
            "resources": uris,
            "verified": verified,
            "missing": missing,
            "unlisted": unlisted,
            "catalogue": "- greet: Greets people." in (activate.description or ""),
        }))


asyncio.run(main())
