"""Hostile MCP replies met in process (no server started): what a server chooses must not
choose how much memory we hold, nor how long a request waits for an answer that cannot come."""

from __future__ import annotations

import asyncio
import json
import tracemalloc

import pytest
from mcp_support import ScriptedTransport

from rho_adapters.mcp.client import MAX_PAGES, McpClient
from rho_adapters.mcp.jsonrpc import Message
from rho_domain.errors import McpProtocolError

HELLO = {"protocolVersion": "2025-06-18", "capabilities": {}}


def answered(request: Message, result: dict[str, object]) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result})


def test_page_cursors_that_never_repeat_are_not_held_whole() -> None:
    # redmcp23: the listing's loop check held every cursor a server gave, whole: 100 pages
    # of distinct 10 MB cursors grew the agent to 998 MB (max RSS; 63 MB with digests).
    # Here 100 of 200 KB: 20 MB traced at the peak before, a few cursors' worth now.
    pages = 0

    def answer(request: Message) -> str:
        nonlocal pages
        if request["method"] == "initialize":
            return answered(request, HELLO)
        pages += 1
        cursor = f"{pages}" + "c" * 200_000
        return answered(request, {"tools": [], "nextCursor": cursor})

    async def main() -> None:
        client = McpClient("h", ScriptedTransport(answer), on_list_changed=lambda: None)
        await client.start(timeout=10)
        with pytest.raises(McpProtocolError, match="tools/list pages do not end"):
            await client.list_tools(timeout=10)

    tracemalloc.start()
    try:
        asyncio.run(main())
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert pages == MAX_PAGES
    assert peak < 5_000_000  # bytes: 21 MB before
