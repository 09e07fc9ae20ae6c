"""The 2025-11-25 session form of `skillhost mcp --http`, by raw HTTP: a session, its GET stream resumed with
Last-Event-ID, DELETE; and HTTPS when the server was given a certificate.

Usage: python mcp_http_sessions.py <endpoint URL> <plugins folder> <plugin to drop in> [<https endpoint URL>].
Prints one JSON object.
"""
import json
import os
import shutil
import sys
import time

import httpx2

URL, FOLDER, PLUGIN = sys.argv[1:4]
HTTPS = sys.argv[4] if len(sys.argv) > 4 else None
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
report = {}
with httpx2.Client(timeout=60) as http:
    init = http.post(URL, headers=HEADERS, json={
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}})
    session = init.headers.get("mcp-session-id")
    report["session_minted"] = bool(session) and len(session) == 32
    with_session = {**HEADERS, "Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"}
    http.post(URL, headers=with_session, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
    # A change while no GET stream is open is kept as event 1.
    target = os.path.join(FOLDER, "resumed.so")
    shutil.copy(PLUGIN, target + ".partial")
    os.rename(target + ".partial", target)
    for _ in range(600):
        listed = http.post(URL, headers=with_session, json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        if any(tool["name"] == "twice64" for tool in listed.json()["result"]["tools"]):
            break
        time.sleep(0.1)
    replayed = None
    with http.stream("GET", URL, headers={**with_session, "Accept": "text/event-stream", "Last-Event-ID": "0"}) as stream:
        report["get_status"] = stream.status_code
        lines = []
        deadline = time.monotonic() + 120  # keep-alive comments arrive forever: a missing event must not hang
        for line in stream.iter_lines():
            lines.append(line)
            if line.startswith("data:"):
                replayed = lines
                break
            if time.monotonic() > deadline:
                break
    report["replayed"] = replayed
    # resources/subscribe: the state of the notes plugin (loaded from the served folder, so in a worker).
    subscribed = http.post(URL, headers=with_session, json={
        "jsonrpc": "2.0", "id": 5, "method": "resources/subscribe", "params": {"uri": "skillhost://state/notes"}})
    report["subscribe"] = subscribed.json().get("result")
    http.post(URL, headers=with_session, json={
        "jsonrpc": "2.0", "id": 6, "method": "tools/call",
        "params": {"name": "notes_add", "arguments": {"title": "milk"}}})
    updated = None
    with http.stream("GET", URL, headers={**with_session, "Accept": "text/event-stream", "Last-Event-ID": "1"}) as stream:
        deadline = time.monotonic() + 120
        for line in stream.iter_lines():
            if line.startswith("data:") and "resources/updated" in line:
                updated = line
                break
            if time.monotonic() > deadline:
                break
    report["resource_updated"] = updated
    report["unknown_session"] = http.post(URL, headers={**with_session, "Mcp-Session-Id": "0" * 32},
                                          json={"jsonrpc": "2.0", "id": 3, "method": "tools/list"}).status_code
    report["delete"] = http.delete(URL, headers=with_session).status_code
    base = URL.rsplit("/mcp", 1)[0]
    metadata = http.get(base + "/.well-known/oauth-protected-resource/mcp")
    report["metadata"] = [metadata.status_code, metadata.json()]
    report["after_delete"] = http.post(URL, headers=with_session,
                                       json={"jsonrpc": "2.0", "id": 4, "method": "tools/list"}).status_code
if HTTPS:
    with httpx2.Client(timeout=60, verify=False) as https:
        answer = https.post(HTTPS, headers={**HEADERS, "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call",
                                            "Mcp-Name": "calculator"},
                            json={"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                  "params": {"name": "calculator", "arguments": {"expression": "6*7"},
                                             "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                                                       "io.modelcontextprotocol/clientCapabilities": {}}}})
        report["https"] = answer.json()["result"]["content"][0]["text"]
print(json.dumps(report), flush=True)
