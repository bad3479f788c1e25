r"""A network backend for the model clients' pool: a request's head and body in one send.

httpcore writes an HTTP/1.1 request in two socket sends, the head and then the body. On
loopback each send runs the receiving side's TCP path and wakes the server in the sender's
time slice (~0.3-0.6 ms of the event loop each under load, measured in
``bench/bench_overhead.py``'s profile: two of them per model call), and the server reads the
request in two wakeups too.

``OneSendBackend`` wraps httpcore's own backend; its streams keep a write that ends an HTTP
head (``\r\n\r\n``, at most ``HOLD_LIMIT`` bytes) and send it together with the next write.
Nothing is ever kept past the next ``read``, ``write``, ``start_tls`` or ``aclose``: a request
without a body (an empty last write) or one whose body goes in several writes leaves at the
next write, and a response is never awaited with its request still held, so what the server
receives and when it can answer is unchanged; only the number of sends is. A send that fails
raises on the write that sends it, as httpcore's own stream does (httpcore reads the
response after a ``WriteError`` while sending a request, whichever write raised it).

``get_extra_info("is_readable")`` (the pool's check that a kept-alive connection was not
closed by the server, at every request) polls the stream's socket, found once: httpcore's
AnyIO stream looked it up through anyio's typed attributes each time, which builds a table
of every attribute and asks the socket for its peer name (a system call) on the way.
"""

from __future__ import annotations

import select
import socket
import ssl
import typing

import httpcore

HOLD_LIMIT = 65536
"""The longest write kept for the next one: a request head, never a large body."""

_HEAD_END = b"\r\n\r\n"


def socket_readable(sock: socket.socket) -> bool:
    """Whether ``sock`` has something to read (for a kept-alive connection: the server closed
    it, or sent what nobody asked for), without reading or waiting. A socket without a file
    descriptor counts as readable: its next read returns the end. The check httpcore's own
    streams make, written here because httpcore keeps it private."""
    fd = sock.fileno()
    if fd < 0:
        return True
    if not hasattr(select, "poll"):  # Windows
        readable, _, _ = select.select([fd], [], [], 0)
        return bool(readable)
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    return bool(poller.poll(0))


class OneSendStream(httpcore.AsyncNetworkStream):
    """A stream that sends a held request head with the write after it (module docstring)."""

    def __init__(self, inner: httpcore.AsyncNetworkStream) -> None:
        self._inner = inner
        self._held = b""
        self._socket: typing.Any = None
        self.sends = 0  # how many sends reached the inner stream (tests, diagnostics)

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        """Hold a request head for the next write; send anything else (after what is held)."""
        if not self._held and buffer.endswith(_HEAD_END) and len(buffer) <= HOLD_LIMIT:
            self._held = buffer
            return
        await self._send(buffer, timeout)

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        """Send what is held, then read."""
        if self._held:
            await self._send(b"", timeout)
        return await self._inner.read(max_bytes, timeout)

    async def _send(self, data: bytes, timeout: float | None) -> None:
        """Send what is held, then ``data``, in one write to the inner stream."""
        data, self._held = self._held + data, b""
        if data:
            self.sends += 1
            await self._inner.write(data, timeout)

    async def aclose(self) -> None:
        """Close the inner stream; a held write is dropped with it."""
        self._held = b""  # a request abandoned before its response was read
        await self._inner.aclose()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.AsyncNetworkStream:
        """The inner stream's TLS stream, wrapped alike."""
        if self._held:
            await self._send(b"", timeout)
        tls = await self._inner.start_tls(ssl_context, server_hostname, timeout)
        return OneSendStream(tls)

    def get_extra_info(self, info: str) -> typing.Any:
        """The inner stream's, but ``is_readable`` polls the socket found once."""
        if info == "is_readable":
            if self._socket is None:
                self._socket = self._inner.get_extra_info("socket")
            if self._socket is not None:
                return socket_readable(self._socket)
        return self._inner.get_extra_info(info)


class OneSendBackend(httpcore.AsyncNetworkBackend):
    """``inner`` (default: httpcore's AnyIO backend, what its pool picks under asyncio, the
    one event loop the model clients run on) with ``OneSendStream`` streams."""

    def __init__(self, inner: httpcore.AsyncNetworkBackend | None = None) -> None:
        self._inner = inner if inner is not None else httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: typing.Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        """The inner backend's stream, wrapped."""
        stream = await self._inner.connect_tcp(
            host, port, timeout=timeout, local_address=local_address, socket_options=socket_options
        )
        return OneSendStream(stream)

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: typing.Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        """The inner backend's stream, wrapped."""
        stream = await self._inner.connect_unix_socket(
            path, timeout=timeout, socket_options=socket_options
        )
        return OneSendStream(stream)

    async def sleep(self, seconds: float) -> None:
        """The inner backend's sleep."""
        await self._inner.sleep(seconds)
