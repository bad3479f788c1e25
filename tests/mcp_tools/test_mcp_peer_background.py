"""What an MCP connection sends without waiting (a cancel notification after a timeout, an
answer to the server's own request) is made only when it is sent: closed before its turn,
it leaves no coroutine that was never awaited (Python warns of one at the collector's pass;
it showed in the suite's summary after ``test_an_answer_too_deep_to_decode_...``)."""

from __future__ import annotations

import asyncio
import gc
import warnings
from collections.abc import Callable

import pytest

from rho_adapters.mcp.jsonrpc import RpcPeer
from rho_adapters.mcp.transport import Message
from rho_domain.errors import McpTimeout


class SilentTransport:
    """A transport that takes every message and never answers."""

    def __init__(self) -> None:
        self.sent: list[Message] = []

    async def start(
        self, on_message: Callable[[str], None], on_closed: Callable[[str], None]
    ) -> None:
        return None

    async def send(self, message: Message) -> None:
        self.sent.append(message)

    answers_in_reply = False  # a request left unanswered waits for its deadline

    def negotiated(self, version: str) -> None:
        return None

    async def aclose(self) -> None:
        return None


async def _timed_out_then_closed(transport: SilentTransport) -> None:
    peer = RpcPeer("quiet", transport, on_notification=lambda method, params: None)
    with pytest.raises(McpTimeout):
        await peer.request("tools/list", None, timeout=0.01, setting="call_timeout")
    await peer.aclose()  # before the cancel notification's task had a turn


def test_a_notification_closed_before_its_turn_leaves_no_unawaited_coroutine() -> None:
    transport = SilentTransport()
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        asyncio.run(_timed_out_then_closed(transport))
        gc.collect()
    unawaited = [str(w.message) for w in seen if "never awaited" in str(w.message)]
    assert unawaited == []
    assert [m.get("method") for m in transport.sent] == ["tools/list"]


async def _timed_out_and_given_a_turn(transport: SilentTransport) -> None:
    peer = RpcPeer("quiet", transport, on_notification=lambda method, params: None)
    with pytest.raises(McpTimeout):
        await peer.request("tools/list", None, timeout=0.01, setting="call_timeout")
    for _ in range(3):
        await asyncio.sleep(0)
    await peer.aclose()


def test_a_notification_given_its_turn_is_still_sent() -> None:
    transport = SilentTransport()
    asyncio.run(_timed_out_and_given_a_turn(transport))
    assert [m.get("method") for m in transport.sent] == [
        "tools/list",
        "notifications/cancelled",
    ]
    assert transport.sent[1]["params"]["requestId"] == transport.sent[0]["id"]
