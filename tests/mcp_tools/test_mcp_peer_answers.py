"""Answers a server shapes off the protocol, read by the client in this process (a scripted
transport: no server process): an id that is not ours answers nothing, a call's ``content``
that is not a list of blocks is the server's protocol error, not our crash."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable

import pytest

from rho_adapters.mcp.client import McpClient
from rho_adapters.mcp.jsonrpc import Message, RpcPeer
from rho_domain.errors import McpProtocolError, McpTimeout


class ScriptedTransport:
    """Answers each request with ``answer(request)`` (a JSON text, or None for no answer)."""

    def __init__(self, answer: Callable[[Message], str | None]) -> None:
        self.answer = answer
        self.deliver: Callable[[str], None] = lambda _: None

    async def start(self, deliver: Callable[[str], None], closed: Callable[[str], None]) -> None:
        self.deliver = deliver

    async def send(self, message: Message) -> None:
        if "id" in message and (text := self.answer(message)) is not None:
            self.deliver(text)

    def negotiated(self, version: str) -> None:
        return None

    async def aclose(self) -> None:
        return None


def test_a_response_whose_id_is_true_answers_no_request() -> None:
    # JSON's true decodes to True, which a dict finds as the key 1: our first request
    def answer(request: Message) -> str:
        return json.dumps({"jsonrpc": "2.0", "id": True, "result": {"forged": 1}})

    async def main() -> RpcPeer:
        peer = RpcPeer("h", ScriptedTransport(answer), on_notification=lambda m, p: None)
        await peer.start()
        with pytest.raises(McpTimeout, match="could not be read meanwhile"):
            await peer.request("initialize", {}, timeout=0.05, setting="startup_timeout")
        return peer

    peer = asyncio.run(main())
    assert peer.malformed == 1


@pytest.mark.parametrize(
    ("content", "kind"),
    [(5, "a number"), (True, "a boolean"), ("text", "a string"), ({"type": "text"}, "an object")],
)
def test_a_call_whose_content_is_not_a_list_is_the_servers_protocol_error(
    content: object, kind: str
) -> None:
    def answer(request: Message) -> str:
        if request["method"] == "initialize":
            result: Message = {"protocolVersion": "2025-11-25", "capabilities": {}}
        else:
            result = {"content": content}
        return json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result})

    async def main() -> None:
        client = McpClient("h", ScriptedTransport(answer), on_list_changed=lambda: None)
        await client.start(timeout=5)
        with pytest.raises(McpProtocolError) as refused:
            await client.call_tool("plain", {}, timeout=5)
        assert str(refused.value) == (
            f"MCP server 'h' answered tools/call 'plain' with content that is {kind}, not a "
            "list of blocks"
        )

    asyncio.run(main())
