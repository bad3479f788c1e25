"""How many connections ``rho-agent serve`` holds, and how long one may take to ask.

uvicorn runs no app code before a request's head (its line and headers) is complete, and it
gives that head no deadline: a client that opened a connection and sent ``GET / HTTP/1.1``
a byte a minute (or nothing) held it, its socket and buffers for good, and thousands of them
used up the process's file descriptors before ``max_streams`` or ``max_runs`` saw anything.
``head_deadline`` closes a connection whose request head has not arrived ``head_seconds``
after its first byte could (the connection opening, or the previous response ending: a kept
connection trickling its next head is the same attack), and ``uvicorn_limits`` sets
uvicorn's ``limit_concurrency`` so that past a bound every request is answered 503 at once.
"""

from __future__ import annotations

import asyncio
from typing import Any

from rho_entry.server.settings import ServerSettings

__all__ = ["CONNECTION_HEADROOM", "head_deadline", "uvicorn_limits"]

CONNECTION_HEADROOM = 64
"""Connections beyond ``max_runs + max_streams``: a dashboard's and the CLI's short requests
(lists, answers, cancels) while every run and stream is busy."""


def uvicorn_limits(settings: ServerSettings) -> dict[str, Any]:
    """The keyword arguments of ``uvicorn.Config`` that bound connections: the protocol class
    with the head deadline and ``limit_concurrency`` (connections or requests in progress
    past which uvicorn answers 503 without calling the app)."""
    return {
        "http": head_deadline(settings.body_seconds),
        "limit_concurrency": settings.max_runs + settings.max_streams + CONNECTION_HEADROOM,
    }


def head_deadline(head_seconds: float) -> type[asyncio.Protocol]:
    """The HTTP protocol uvicorn picks (h11 or httptools), closing a connection whose
    next request head has not arrived within ``head_seconds``."""
    from uvicorn.protocols.http.auto import AutoHTTPProtocol

    base: Any = AutoHTTPProtocol

    class HeadDeadline(base):  # type: ignore[misc]
        _head_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:
            super().connection_made(transport)
            self._await_head()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self._head_timer is None and _between_requests(self):
                self._await_head()  # the next head on a kept connection has its deadline too

        def connection_lost(self, exc: Exception | None) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
            super().connection_lost(exc)

        def _await_head(self) -> None:
            waited_since = self.cycle  # a new request replaces the cycle
            loop = asyncio.get_running_loop()
            self._head_timer = loop.call_later(head_seconds, self._head_late, waited_since)

        def _head_late(self, waited_since: object) -> None:
            self._head_timer = None
            if not _between_requests(self):
                return  # a request in progress: its end arms the next head's deadline
            if self.cycle is waited_since:
                self.transport.close()
            else:  # a request came and went meanwhile: its successor's deadline starts now
                self._await_head()

    return HeadDeadline


def _between_requests(protocol: Any) -> bool:
    """No request in progress: none arrived yet, or the last one has been answered."""
    cycle = protocol.cycle
    return cycle is None or bool(cycle.response_complete)
