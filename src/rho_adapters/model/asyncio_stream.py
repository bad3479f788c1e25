r"""One model-client connection on asyncio's own transports: ``AsyncioStream``.

A small ``asyncio.Protocol`` (``Receiver``) keeps what the loop received, so a read that finds
data returns it at once (no copy), and only a read that has to wait arms a timer for its
timeout. Contract, as httpcore's own streams keep it: a timeout raises ``ReadTimeout`` /
``WriteTimeout``; an ``OSError`` raises ``ReadError`` / ``WriteError`` with the OS's message;
the end of the stream is ``b""``.

A request's head and body go in one send: a write that ends an HTTP head (``\r\n\r\n``, at
most ``HOLD_LIMIT`` bytes) is kept and sent with the next write, and nothing is kept past the
next ``read``, ``write``, ``start_tls`` or ``aclose``, so what the server receives and when is
unchanged (on loopback each send wakes the server in the sender's time slice).
``get_extra_info("is_readable")`` (the pool's check that an idle connection was not closed by
the server) is true when the protocol holds data or saw the end, or the socket polls readable.
Connections are made by ``network.AsyncioBackend``.
"""

from __future__ import annotations

import asyncio
import select
import ssl
import typing
from collections import deque

import httpcore

HOLD_LIMIT = 65536
"""The longest write kept for the next one: a request head, never a large body."""
READ_LIMIT = 262144
"""Bytes received and not yet read above which the socket is not read (flow control)."""

_HEAD_END = b"\r\n\r\n"


def socket_readable(sock: typing.Any) -> bool:
    """Whether ``sock`` has something to read (no fd: its next read is the end), without
    reading or waiting: httpcore's own check (``httpcore._utils``, private there)."""
    fd = sock.fileno()
    if fd < 0:
        return True
    if not hasattr(select, "poll"):  # Windows
        readable, _, _ = select.select([fd], [], [], 0)
        return bool(readable)
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    return bool(poller.poll(0))


class Receiver(asyncio.Protocol):
    """What the loop received on one connection, and the one read waiting for more."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.chunks: deque[bytes] = deque()
        self.size = 0
        self.ended = False  # the peer sent its end, or the connection is gone
        self.error: BaseException | None = None
        self.waiter: asyncio.Future[None] | None = None
        self.paused = False
        self.drained: asyncio.Future[None] | None = None  # set while writing is paused

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        """The connection's transport, kept for flow control."""
        self.transport = typing.cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        """Keep ``data``; stop reading the socket above ``READ_LIMIT`` unread bytes."""
        self.chunks.append(data)
        self.size += len(data)
        if self.size > READ_LIMIT and not self.paused and self.transport is not None:
            self.paused = True
            self.transport.pause_reading()
        self._wake()

    def eof_received(self) -> None:
        """The peer's end: the next read that finds nothing returns ``b""``."""
        self.ended = True
        self._wake()
        # None: the transport closes itself (a client has nothing more to send then)

    def connection_lost(self, exc: Exception | None) -> None:
        """The connection is gone (``exc``: why); a waiting read or write wakes."""
        self.ended = True
        self.error = exc
        self._wake()
        if self.drained is not None and not self.drained.done():
            self.drained.set_result(None)

    def pause_writing(self) -> None:
        """The transport's buffer is full: writes wait for ``resume_writing``."""
        self.drained = asyncio.get_running_loop().create_future()

    def resume_writing(self) -> None:
        """The transport's buffer drained: a waiting write goes on."""
        if self.drained is not None and not self.drained.done():
            self.drained.set_result(None)
        self.drained = None

    def _wake(self) -> None:
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def take(self, max_bytes: int) -> bytes:
        """At most ``max_bytes`` of what was received (``chunks`` is not empty)."""
        chunks = self.chunks
        if len(chunks) == 1 and len(chunks[0]) <= max_bytes:
            data = chunks.popleft()
        else:
            data = b"".join(chunks)
            chunks.clear()
            if len(data) > max_bytes:
                chunks.append(data[max_bytes:])
                data = data[:max_bytes]
        self.size -= len(data)
        if self.paused and self.size <= READ_LIMIT // 2 and self.transport is not None:
            self.paused = False
            self.transport.resume_reading()
        return data


def _expire(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_exception(TimeoutError())


class AsyncioStream(httpcore.AsyncNetworkStream):
    """One connection: a transport and its ``Receiver`` (module docstring)."""

    def __init__(self, transport: asyncio.Transport, receiver: Receiver) -> None:
        self._transport = transport
        self._receiver = receiver
        self._held = b""
        self._socket: typing.Any = None
        self.sends = 0  # how many sends reached the transport (tests, diagnostics)

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        """Up to ``max_bytes`` received bytes, waiting at most ``timeout`` for the first;
        ``b""`` at the end. Sends a held request head first."""
        if self._held:
            await self._send(b"", timeout)
        receiver = self._receiver
        if not receiver.chunks and not receiver.ended:
            loop = asyncio.get_running_loop()
            waiter = receiver.waiter = loop.create_future()
            timer = loop.call_later(timeout, _expire, waiter) if timeout is not None else None
            try:
                await waiter
            except TimeoutError as exc:
                raise httpcore.ReadTimeout(f"no data for {timeout:g} s") from exc
            finally:
                receiver.waiter = None
                if timer is not None:
                    timer.cancel()
        if receiver.chunks:
            return receiver.take(max_bytes)
        if receiver.error is not None:
            raise httpcore.ReadError(str(receiver.error) or type(receiver.error).__name__)
        return b""

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        """Hold a request head for the next write; send anything else (after what is held)."""
        if not self._held and buffer.endswith(_HEAD_END) and len(buffer) <= HOLD_LIMIT:
            self._held = buffer
            return
        await self._send(buffer, timeout)

    async def _send(self, data: bytes, timeout: float | None) -> None:
        """Send what is held, then ``data``, in one write; wait while the transport's buffer
        is over its high-water mark."""
        data, self._held = self._held + data, b""
        if not data:
            return
        receiver = self._receiver
        if self._transport.is_closing():
            detail = receiver.error or "the connection is closed"
            raise httpcore.WriteError(str(detail))
        self.sends += 1
        self._transport.write(data)
        if self._transport.is_closing() and receiver.error is None and not receiver.ended:
            # asyncio closes the transport when the send fails and reports the error later
            raise httpcore.WriteError("the connection broke while sending")
        drained = receiver.drained
        if drained is not None:
            try:
                async with asyncio.timeout(timeout):
                    await asyncio.shield(drained)
            except TimeoutError as exc:
                raise httpcore.WriteTimeout(f"could not send for {timeout:g} s") from exc

    async def aclose(self) -> None:
        """Close the connection (a held write is dropped with it); TLS without waiting for
        the peer's close_notify, as httpcore's AnyIO backend does."""
        self._held = b""  # a request abandoned before its response was read
        if self._transport.get_extra_info("ssl_object") is not None:
            self._transport.abort()
        else:
            self._transport.close()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.AsyncNetworkStream:
        """The connection under TLS; a refused handshake or certificate is ``ConnectError``,
        no handshake within ``timeout`` ``ConnectTimeout`` (the connection closed either way)."""
        if self._held:
            await self._send(b"", timeout)
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(timeout):
                transport = await loop.start_tls(
                    self._transport,
                    self._receiver,
                    ssl_context,
                    server_hostname=server_hostname,
                    # ours fires first: asyncio's own would abort with another error
                    ssl_handshake_timeout=None if timeout is None else timeout + 1,
                )
        except TimeoutError as exc:
            self._transport.abort()
            raise httpcore.ConnectTimeout(f"no TLS handshake within {timeout:g} s") from exc
        except OSError as exc:  # ssl.SSLError is one
            self._transport.abort()
            raise httpcore.ConnectError(str(exc)) from exc
        if transport is None:  # the loop lost the connection during the handshake
            raise httpcore.ConnectError("the connection closed during the TLS handshake")
        self._receiver.transport = transport
        return AsyncioStream(transport, self._receiver)

    def get_extra_info(self, info: str) -> typing.Any:
        """``ssl_object``, ``client_addr``, ``server_addr``, ``socket`` and ``is_readable``
        (module docstring); None for anything else."""
        if info == "is_readable":
            receiver = self._receiver
            if receiver.chunks or receiver.ended:
                return True
            if self._socket is None:
                self._socket = self._transport.get_extra_info("socket")
            return self._socket is None or socket_readable(self._socket)
        name = _EXTRA.get(info)
        return None if name is None else self._transport.get_extra_info(name)


_EXTRA = {
    "ssl_object": "ssl_object",
    "client_addr": "sockname",
    "server_addr": "peername",
    "socket": "socket",
}
