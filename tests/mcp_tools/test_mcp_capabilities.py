"""A server that declares no ``tools`` capability (MCP's lifecycle: a server with tools
declares it) is not asked ``tools/list``: it starts with no tools and its instructions, where
asking made it refuse an unknown method and fail its start."""

from __future__ import annotations

import asyncio
import json

import pytest
from mcp_support import ScriptedTransport

from rho_adapters.mcp.client import McpClient
from rho_adapters.mcp.transport import Message


def _server(capabilities: object, asked: list[str]) -> ScriptedTransport:
    def answer(request: Message) -> str:
        asked.append(str(request["method"]))
        if request["method"] == "initialize":
            result: Message = {
                "protocolVersion": "2025-11-25",
                "capabilities": capabilities,
                "instructions": "Use the prompts.",
            }
            return json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result})
        if request["method"] == "tools/list":  # as a server without tools answers
            error = {"code": -32601, "message": "Method not found"}
            return json.dumps({"jsonrpc": "2.0", "id": request["id"], "error": error})
        return json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": {}})

    return ScriptedTransport(answer)


@pytest.mark.parametrize(
    "capabilities", [{}, {"prompts": {}, "resources": {}}, {"tools": None}, {"tools": True}, []]
)
def test_a_server_without_the_tools_capability_is_not_asked_for_tools(
    capabilities: object,
) -> None:
    asked: list[str] = []

    async def main() -> list[Message]:
        client = McpClient("docs", _server(capabilities, asked), on_list_changed=lambda: None)
        await client.start(timeout=5)
        try:
            return await client.list_tools(timeout=5)
        finally:
            await client.aclose()

    assert asyncio.run(main()) == []
    assert "tools/list" not in asked
    assert "initialize" in asked


def test_a_server_with_the_tools_capability_is_asked() -> None:
    asked: list[str] = []

    async def main() -> None:
        client = McpClient("docs", _server({"tools": {}}, asked), on_list_changed=lambda: None)
        await client.start(timeout=5)
        try:
            with pytest.raises(Exception, match="Method not found"):
                await client.list_tools(timeout=5)
        finally:
            await client.aclose()

    asyncio.run(main())
    assert "tools/list" in asked
