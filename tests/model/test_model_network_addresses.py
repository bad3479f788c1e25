"""A model server's name with several addresses: a dead first one does not hold the run.

httpcore's default backend (anyio's ``connect_tcp``) races a host's addresses ("happy
eyeballs", RFC 8305: the next one 0.25 s after the previous has not answered); the model
clients' own backend (``network.AsyncioBackend``) must too, or a name whose first address
drops packets (a broken IPv6 route is the usual case) costs the whole connect timeout and
then fails. The dead address here is a real socket whose listen queue is full, so the
kernel drops further SYNs; the name resolves to it first, then to the live server.
"""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Iterator
from typing import Any

import httpcore
import pytest

from rho_adapters.fakes.loopback import LoopbackServer
from rho_adapters.fakes.wire import text_reply
from rho_adapters.model.network import AsyncioBackend

NAME = "model.internal"


@pytest.fixture
def dead_port() -> Iterator[int]:
    """A port that answers no SYN: a listener with a full queue (backlog 0, one pending)."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(0)
        port: int = listener.getsockname()[1]
        with socket.socket() as filler:
            filler.connect(("127.0.0.1", port))
            yield port


def resolving(monkeypatch: pytest.MonkeyPatch, addresses: list[tuple[str, int]]) -> list[str]:
    """Make the running loop resolve ``NAME`` to ``addresses``, in order (as DNS would)."""
    asked: list[str] = []
    loop = asyncio.get_running_loop()
    real = loop.getaddrinfo

    async def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host != NAME:
            return await real(host, port, *args, **kwargs)
        asked.append(host)
        return [
            (socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", address)
            for address in addresses
        ]

    monkeypatch.setattr(loop, "getaddrinfo", getaddrinfo)
    return asked


async def test_a_dead_first_address_gives_way_to_the_next(
    dead_port: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    with LoopbackServer([text_reply("hi")]) as server:
        live = int(server.base_url.rsplit(":", 1)[1].split("/")[0])
        asked = resolving(monkeypatch, [("127.0.0.1", dead_port), ("127.0.0.1", live)])
        started = time.monotonic()
        stream = await AsyncioBackend().connect_tcp(NAME, 0, timeout=5.0)
        took = time.monotonic() - started
        await stream.write(b"GET /v1/models HTTP/1.1\r\nhost: x\r\n\r\n")
        answer = await stream.read(65536, timeout=5.0)
        await stream.aclose()
    assert asked == [NAME]
    assert answer.startswith(b"HTTP/1.1 404")  # the live server answered
    assert took < 2.5, took  # the next address after ~0.25 s, not after the 5 s timeout


async def test_only_dead_addresses_end_at_the_connect_timeout(
    dead_port: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    resolving(monkeypatch, [("127.0.0.1", dead_port)])
    with pytest.raises(httpcore.ConnectTimeout):
        await AsyncioBackend().connect_tcp(NAME, 0, timeout=0.5)
