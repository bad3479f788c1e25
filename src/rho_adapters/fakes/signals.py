"""ManualSignals: cancel, pause, directives and export requests driven from the test itself."""

from __future__ import annotations

import asyncio
from collections import defaultdict

from rho_domain.ports.signals import Directive, SignalSource


class ManualSignals(SignalSource):
    """In-memory SignalSource. Call ``cancel``, ``pause``, ``resume`` and ``add_directive``
    (optionally for a specific session id; default: every session)."""

    def __init__(self) -> None:
        self._cancelled: set[str] = set()
        self._paused: set[str] = set()
        self._directives: dict[str, list[str]] = defaultdict(list)
        self._events: dict[str, asyncio.Event] = defaultdict(asyncio.Event)
        self.cleared: list[str] = []
        self.exports: dict[str, str] = {}  # request id -> the export the session gave
        self._export_requests: dict[str, list[str]] = defaultdict(list)

    def cancel(self, session_id: str = "*") -> None:
        """Ask ``session_id`` (``*``: every session) to stop."""
        self._cancelled.add(session_id)
        for key, event in self._events.items():
            if session_id in ("*", key):
                event.set()

    @property
    def paused_ids(self) -> frozenset[str]:
        """The sessions paused now (``*``: every session)."""
        return frozenset(self._paused)

    def pause(self, session_id: str = "*") -> None:
        """Pause ``session_id`` (``*``: every session) at its next checkpoint."""
        self._paused.add(session_id)

    def resume(self, session_id: str = "*") -> None:
        """Lift a pause."""
        self._paused.discard(session_id)

    def add_directive(self, text: str, session_id: str = "*") -> None:
        """Queue an operator directive for ``session_id`` (``*``: every session)."""
        self._directives[session_id].append(text)

    def request_export(self, session_id: str, request_id: str | None = None) -> str:
        """Ask ``session_id`` for a context export under ``request_id`` (one is made when not
        given); its answer appears in ``exports``. Returns the request id."""
        if request_id is None:
            taken = len(self.exports) + sum(map(len, self._export_requests.values()))
            request_id = f"export_{taken}"
        self._export_requests[session_id].append(request_id)
        return request_id

    def withdraw_export(self, session_id: str, request_id: str) -> None:
        """Take back an unanswered request of ``session_id``."""
        waiting = self._export_requests.get(session_id, [])
        if request_id in waiting:
            waiting.remove(request_id)

    async def export_requests(self, session_id: str) -> tuple[str, ...]:
        """See ``SignalSource.export_requests``."""
        return tuple(self._export_requests.get(session_id, ()))

    async def answer_export(self, session_id: str, request_id: str, text: str) -> None:
        """See ``SignalSource.answer_export``."""
        self.exports[request_id] = text
        waiting = self._export_requests.get(session_id, [])
        if request_id in waiting:
            waiting.remove(request_id)

    async def cancel_requested(self, session_id: str) -> bool:
        """True when a cancel for the session (or for ``*``) is pending."""
        return bool({session_id, "*"} & self._cancelled)

    async def clear_cancel(self, session_id: str) -> None:
        """See ``SignalSource.clear_cancel``."""
        self.cleared.append(session_id)
        self._cancelled -= {session_id, "*"}
        self._events[session_id].clear()

    async def clear_pause(self, session_id: str) -> None:
        """See ``SignalSource.clear_pause``."""
        self._paused -= {session_id, "*"}

    async def wait_for_cancel(self, session_id: str) -> None:
        """See ``SignalSource.wait_for_cancel``."""
        event = self._events[session_id]
        if await self.cancel_requested(session_id):
            return
        await event.wait()

    async def is_paused(self, session_id: str) -> bool:
        """See ``SignalSource.is_paused``."""
        return bool({session_id, "*"} & self._paused)

    async def directives(self, session_id: str, *, after: int) -> tuple[Directive, ...]:
        """See ``SignalSource.directives``."""
        texts = self._directives.get(session_id) or self._directives.get("*", [])
        return tuple(Directive(offset=i, text=t) for i, t in enumerate(texts) if i >= after)
