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

import ssl
import typing

import httpcore
from httpcore._utils import is_socket_readable  # the check httpcore's own streams make

HOLD_LIMIT = 65536
"""The longest write kept for the next one: a request head, never a large body."""

_HEAD_END = b"\r\n\r\n"


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
                return is_socket_readable(self._socket)
        return self._inner.get_extra_info(info)


class OneSendBackend(httpcore.AsyncNetworkBackend):
    """``inner`` (httpcore's choice of backend by default) with ``OneSendStream`` streams."""

    def __init__(self, inner: httpcore.AsyncNetworkBackend | None = None) -> None:
        if inner is None:
            from httpcore._backends.auto import AutoBackend  # the pool's own default

            inner = AutoBackend()
        self._inner = inner

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
