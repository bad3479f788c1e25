"""WireTransport: a scripted OpenAI-compatible server as an httpx transport.

Each request gets the next scripted ``Reply`` (``fakes.wire``), or a rule's answer first,
rendered by ``fakes.wire_render``: an SSE stream when the request asked for ``stream: true``,
one JSON completion otherwise, an error body for an error reply; a stream's faults break,
stall or cut the body as the client reads it. Every request is recorded (``requests``,
``headers``, ``urls``, ``other_requests``). See ``fakes.wire`` for building the script.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterable, Sequence
from typing import Any

import httpx

from rho_adapters.fakes.wire import Exchange, Reply, Rule, WireScriptExhausted, answer
from rho_adapters.fakes.wire_render import (
    Drop,
    Piece,
    Stall,
    render_error,
    render_json,
    render_stream,
)
from rho_domain.ports.clock import Clock


class _Body(httpx.AsyncByteStream):
    def __init__(self, pieces: list[Piece], read_timeout: float | None, clock: Clock | None):
        self._pieces, self._timeout, self._clock = pieces, read_timeout, clock

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for piece in self._pieces:
            if isinstance(piece, Drop):
                raise httpx.RemoteProtocolError("peer closed connection (injected drop)")
            if isinstance(piece, Stall):
                wait = piece.seconds if piece.seconds is not None else self._timeout
                await self._sleep(wait if wait is not None else 3600.0)
                if piece.seconds is None or (self._timeout and piece.seconds >= self._timeout):
                    raise httpx.ReadTimeout("no data within the read timeout (injected stall)")
                continue
            yield piece

    async def _sleep(self, seconds: float) -> None:
        if self._clock is not None:
            await self._clock.sleep(seconds)
        else:
            await asyncio.sleep(seconds)


class WireTransport(httpx.AsyncBaseTransport):
    """Answers each request with the next reply. ``clock`` makes stalls instant and
    deterministic (a FakeClock advances by the client's read timeout, then the read times out).
    ``repeat=True`` cycles the script forever (benchmarks)."""

    def __init__(
        self,
        replies: Iterable[Reply],
        *,
        clock: Clock | None = None,
        repeat: bool = False,
        rules: Sequence[Rule] = (),
    ) -> None:
        self.replies = list(replies)
        self.rules = list(rules)
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.urls: list[str] = []
        self.other_requests: list[str] = []
        self._clock, self._repeat, self._next = clock, repeat, 0

    def next_reply(self) -> Reply:
        """The next scripted reply; ``WireScriptExhausted`` when none is left."""
        if self._next >= len(self.replies):
            if not self._repeat or not self.replies:
                raise WireScriptExhausted(f"no reply scripted for request {self._next + 1}")
            self._next = 0
        reply = self.replies[self._next]
        self._next += 1
        return reply

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Answer one request from the script (recorded in ``requests``)."""
        body = json.loads(await request.aread() or b"{}")
        exchange = Exchange(method=request.method, path=request.url.path, body=body)
        reply = answer(self.rules, exchange)
        if not exchange.is_chat:
            self.other_requests.append(f"{request.method} {request.url.path}")
            if reply is None:
                return httpx.Response(404, json={"detail": "Not Found"})
        else:
            self.requests.append(body)
            self.headers.append(dict(request.headers))
            self.urls.append(str(request.url))
        reply = reply or self.next_reply()
        headers = dict(reply.headers)
        if reply.status >= 400:
            headers.setdefault("content-type", "application/json")
            return httpx.Response(reply.status, headers=headers, content=render_error(reply))
        if reply.raw is None and not body.get("stream"):
            headers.setdefault("content-type", "application/json")
            return httpx.Response(reply.status, headers=headers, content=render_json(reply))
        headers.setdefault("content-type", "text/event-stream")
        timeout = request.extensions.get("timeout", {}).get("read")
        stream = _Body(render_stream(reply), timeout, self._clock)
        return httpx.Response(reply.status, headers=headers, stream=stream)
