"""A durable run's signals: its session's, and a cancel asked of the run on the queue.

A run a worker has taken may not have opened its session when a cancel comes, and a run
clears its session's stop signal as it starts, so a cancel sent as that signal alone was
lost. ``RunQueue.cancel_queued`` records the cancel of a taken run on the queue, then the
canceller requests the stop signal too. This source reads the record right after the run
cleared the stop signal (``clear_cancel``, the run's start) and answers ``wait_for_cancel``
at once when it holds one: either the record was there to read, or it came after that read,
and then the stop signal requested after it came after the clearing, and is heard.

A store without signals (neither files nor PostgreSQL: a library's own ``SessionStore``) has
no stop signal to hear: the record is then read again every ``poll`` seconds while the run
goes on, so a cancel reaches a run that had started there too (it ran to its end before),
and at once when the cancel is recorded in this process (its bell: ``cancel_bells``).
"""

from __future__ import annotations

import asyncio
import contextlib

from rho_domain.ports.durable import CancelAsked
from rho_domain.ports.signals import Directive, SignalSource


class RunSignals(SignalSource):
    """``inner`` (the store's signals for the session; None: a store without them), and
    ``asked`` (the queue's record of a cancel of this run: ``RunQueue.cancel_asked``), read
    every ``poll`` seconds while the run goes on when ``inner`` is None."""

    def __init__(
        self,
        inner: SignalSource | None,
        asked: CancelAsked,
        *,
        poll: float = 1.0,
        run_id: str | None = None,
    ) -> None:
        self.inner = inner
        self.asked = asked
        self.poll = poll  # how often the record is read again when ``inner`` is None
        self.run_id = run_id  # whose bell a cancel recorded in this process rings
        self._read = False  # the record read once, after the run's start cleared the signal
        self._cancelled = False

    async def clear_cancel(self, session_id: str) -> None:
        """The session's stop signal consumed, then the queue's record read (once)."""
        if self.inner is not None:
            await self.inner.clear_cancel(session_id)
        if not self._read:
            self._cancelled = await self.asked()
            self._read = True

    async def clear_pause(self, session_id: str) -> None:
        """See ``SignalSource.clear_pause``."""
        if self.inner is not None:
            await self.inner.clear_pause(session_id)

    async def wait_for_cancel(self, session_id: str) -> None:
        """At once when the queue holds a cancel of this run; else the stop signal's wait."""
        if not self._read:
            self._cancelled = await self.asked()
            self._read = True
        if self._cancelled:
            return
        if self.inner is None:
            await self._read_until_asked()
        else:
            await self.inner.wait_for_cancel(session_id)

    async def _read_until_asked(self) -> None:
        """The queue's record read every ``poll`` seconds, and at once when a cancel of the
        run is recorded in this process (listened for before each read: one rung between a
        read and the wait is not missed). A record written elsewhere is a database row, which
        no Event follows."""
        from rho_adapters.durable import cancel_bells

        bell = cancel_bells.listen(self.run_id) if self.run_id is not None else asyncio.Event()
        try:
            while not await self.asked():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(bell.wait(), self.poll)
                bell.clear()
        finally:
            if self.run_id is not None:
                cancel_bells.unlisten(self.run_id, bell)

    async def is_paused(self, session_id: str) -> bool:
        """See ``SignalSource.is_paused``."""
        return self.inner is not None and await self.inner.is_paused(session_id)

    async def directives(self, session_id: str, *, after: int) -> tuple[Directive, ...]:
        """See ``SignalSource.directives``."""
        if self.inner is None:
            return ()
        return await self.inner.directives(session_id, after=after)

    async def export_requests(self, session_id: str) -> tuple[str, ...]:
        """See ``SignalSource.export_requests``."""
        return () if self.inner is None else await self.inner.export_requests(session_id)

    async def answer_export(self, session_id: str, request_id: str, text: str) -> None:
        """See ``SignalSource.answer_export``."""
        if self.inner is not None:
            await self.inner.answer_export(session_id, request_id, text)
