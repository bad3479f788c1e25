"""httpcore's network backend for the model clients, on asyncio's own transports.

httpcore's pool, left to choose, takes its AnyIO backend: every socket read of a streamed
response (about one per delta) goes through anyio's stream layer, a cancel scope and an
exception-mapping context manager. ``AsyncioBackend`` connects on the running loop instead,
and each connection is an ``AsyncioStream`` (``asyncio_stream``, named here too), whose reads
return what the loop already received.

Contract, as httpcore's own backends keep it (``httpcore/_backends/anyio.py``, ``sync.py``):
a timeout raises ``ConnectTimeout``; an ``OSError`` (refused, reset, unknown host, a refused
certificate) or a port out of range raises ``ConnectError`` with the OS's message (every
address tried when a host has several: ``Multiple exceptions: ...``).
"""

from __future__ import annotations

import asyncio
import typing

import httpcore

from rho_adapters.model.asyncio_stream import (
    HOLD_LIMIT,
    READ_LIMIT,
    AsyncioStream,
    Receiver,
    socket_readable,
)

__all__ = [
    "HAPPY_EYEBALLS_DELAY",
    "HOLD_LIMIT",
    "READ_LIMIT",
    "AsyncioBackend",
    "AsyncioStream",
    "socket_readable",
]

HAPPY_EYEBALLS_DELAY = 0.25
"""Seconds before the next address of a host is tried beside one that has not answered (RFC
8305), as anyio's ``connect_tcp`` (httpcore's default backend) does: a host whose first
address drops packets (a broken IPv6 route) does not cost the whole connect timeout."""


class AsyncioBackend(httpcore.AsyncNetworkBackend):
    """Connections as ``AsyncioStream``s on the running asyncio loop."""

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: typing.Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        """A TCP connection to ``host:port`` (its addresses raced, ``HAPPY_EYEBALLS_DELAY``
        apart; asyncio sets TCP_NODELAY), then ``socket_options``."""
        if not 0 <= port <= 65535:  # before the race: its bookkeeping expects OSErrors
            raise httpcore.ConnectError(f"connect(): port must be 0-65535, got {port}")
        loop = asyncio.get_running_loop()
        local = None if local_address is None else (local_address, 0)
        connect = loop.create_connection(
            Receiver, host, port, local_addr=local, happy_eyeballs_delay=HAPPY_EYEBALLS_DELAY
        )
        return await _connected(connect, timeout, socket_options)

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: typing.Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        """A connection to the Unix socket at ``path``."""
        connect = asyncio.get_running_loop().create_unix_connection(Receiver, path)
        return await _connected(connect, timeout, socket_options)

    async def sleep(self, seconds: float) -> None:
        """Wait ``seconds`` on the running loop (httpcore pauses between connect retries)."""
        await asyncio.sleep(seconds)


async def _connected(
    connect: typing.Awaitable[tuple[asyncio.Transport, Receiver]],
    timeout: float | None,
    socket_options: typing.Iterable[httpcore.SOCKET_OPTION] | None,
) -> AsyncioStream:
    try:
        async with asyncio.timeout(timeout):
            transport, receiver = await connect
    except TimeoutError as exc:
        raise httpcore.ConnectTimeout(f"could not connect within {timeout:g} s") from exc
    except (OSError, OverflowError) as exc:  # refused, unreachable, unknown host, bad port
        raise httpcore.ConnectError(str(exc) or type(exc).__name__) from exc
    sock = transport.get_extra_info("socket")
    for option in socket_options or ():
        sock.setsockopt(*option)
    return AsyncioStream(transport, receiver)
