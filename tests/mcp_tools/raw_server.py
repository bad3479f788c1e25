"""A deliberately rough MCP server over stdio, written by hand to misbehave on request.

It logs every line it receives to the file ``$RAW_LOG`` (one JSON message per line) and
lists its tools over two pages. Its tools misbehave or answer in rarer forms: ``noise``
prints non-JSON lines before its answer, ``broken`` answers with neither ``result`` nor
``error``, ``stuck`` never answers (and starts a grandchild that sleeps; both pids are
logged), ``rich`` answers an image, a resource and a link, ``structured`` structured content
only.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

LOG = os.environ.get("RAW_LOG", os.devnull)
TOOLS = [
    {"name": "noise", "description": "Noise, then an answer.", "inputSchema": {"type": "object"}},
    {"name": "broken", "description": "A malformed answer.", "inputSchema": {"type": "object"}},
    {"name": "stuck", "description": "Never answers.", "inputSchema": {"type": "object"}},
    {"name": "odd.name/tool", "description": "A name models refuse.", "inputSchema": {}},
    {"name": "rich", "description": "Blocks that are not text.", "inputSchema": {}},
    {"name": "structured", "description": "Structured content only.", "inputSchema": {}},
]


def send(message: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main() -> None:
    for line in sys.stdin:
        with open(LOG, "a", encoding="utf-8") as log:
            log.write(line)
        message = json.loads(line)
        method, request_id = message.get("method"), message.get("id")
        if request_id is None:
            continue
        if method == "initialize":
            send(
                {
                    "jsonrpc": "2.0",
                    "id": request_id,
                    "result": {
                        "protocolVersion": "2025-06-18",
                        "capabilities": {"tools": {}},
                        "serverInfo": {"name": "raw", "version": "0"},
                    },
                }
            )
        elif method == "tools/list":
            second = (message.get("params") or {}).get("cursor") == "page2"
            page = TOOLS[2:] if second else TOOLS[:2]
            result: dict[str, object] = {"tools": page}
            if not second:
                result["nextCursor"] = "page2"
            send({"jsonrpc": "2.0", "id": request_id, "result": result})
        elif method == "tools/call":
            name = message["params"]["name"]
            if name == "noise":
                sys.stdout.write("starting up...\n{not json either\n")
                send(
                    {
                        "jsonrpc": "2.0",
                        "id": request_id,
                        "result": {"content": [{"type": "text", "text": "quiet now"}]},
                    }
                )
            elif name == "rich":
                send(
                    {
                        "jsonrpc": "2.0",
                        "id": request_id,
                        "result": {
                            "content": [
                                {"type": "image", "mimeType": "image/png", "data": "AAAA" * 25},
                                {
                                    "type": "resource",
                                    "resource": {"uri": "file:///a.txt", "text": "A"},
                                },
                                {"type": "resource_link", "uri": "file:///b.txt", "name": "b"},
                            ],
                            "structuredContent": {"ignored": "content blocks were given"},
                        },
                    }
                )
            elif name == "structured":
                send(
                    {
                        "jsonrpc": "2.0",
                        "id": request_id,
                        "result": {"content": [], "structuredContent": {"open": 3, "closed": 9}},
                    }
                )
            elif name == "broken":
                send({"jsonrpc": "2.0", "id": request_id})
            elif name == "stuck":
                child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
                with open(LOG, "a", encoding="utf-8") as log:
                    log.write(json.dumps({"grandchild": child.pid, "server": os.getpid()}) + "\n")
            else:
                send(
                    {
                        "jsonrpc": "2.0",
                        "id": request_id,
                        "result": {"content": [{"type": "text", "text": f"{name} ran"}]},
                    }
                )


if __name__ == "__main__":
    main()
