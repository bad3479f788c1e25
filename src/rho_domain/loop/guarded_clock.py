"""The Clock as a session reaches it: a clock that fails is said once in the trace, and the
run keeps its times on the event loop's own clock.

A clock port whose member raised was handled three ways, none of them said: ``now()``
raising ended the run ``error`` with a bare "OSError: ..." naming no clock; ``monotonic()``
raising at the run's start let the OSError out of ``Session.run`` (no result, no trace); and
``sleep()`` failing (``cancel_watch.kept_sleep`` since round 21) was slept on the loop's time
with nothing in the trace or the log, so a run's timings silently stopped being the clock's.

``GuardedClock`` takes the first failure of any member as the clock's end for this session:
from then on every member answers from the running event loop's time (``loop.time()``,
monotonic), continued from the clock's last good readings so that durations never go
backwards and timestamps keep moving; and ``Journal.emit`` records the failure once, as an
``ErrorOccurred`` with ``error_type`` ``ClockError``, before the next event. A cancel of the
sleeper still cancels; ``KeyboardInterrupt`` still stops.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from rho_domain.plugged import described, failure_of, plugged_name
from rho_domain.ports.clock import Clock

CLOCK_FAILED = "ClockError"  # the ``error_type`` of the trace's event saying so
_log = logging.getLogger(__name__)


def _loop_time() -> float | None:
    """The running event loop's monotonic time, or None outside one."""
    try:
        return asyncio.get_running_loop().time()
    except RuntimeError:
        return None


class GuardedClock(Clock):
    """``clock``, or, once one of its members failed, the event loop's time (module
    docstring). ``unsaid`` holds what to record of the failure until the journal took it."""

    __slots__ = ("_base", "_last_monotonic", "_last_now", "clock", "failed", "unsaid")

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.failed = False
        self.unsaid: str | None = None
        self._last_now = 0.0
        self._last_monotonic = 0.0
        self._base: float | None = None  # the loop time the fallback counts from

    @classmethod
    def of(cls, clock: Clock) -> GuardedClock:
        """``clock`` guarded once (a child session is handed its parent's guard)."""
        return clock if isinstance(clock, GuardedClock) else cls(clock)

    def __getattr__(self, name: str) -> Any:
        # a fake's own members (``advance``, ``sleeps``) stay reachable to its tests
        return getattr(self.clock, name)

    def _fail(self, member: str, exc: BaseException) -> None:
        if self.failed:
            return
        self.failed = True
        self._base = _loop_time()
        self.unsaid = (
            f"the clock {plugged_name(self.clock)} raised {described(exc)} in {member}(): "
            "from here on this session's times come from the event loop's clock, counted "
            "from the clock's last good reading; fix the clock (the Clock port's now, "
            "monotonic and sleep must not raise)"
        )
        _log.warning("%s", self.unsaid)

    def _elapsed(self) -> float:
        now = _loop_time()
        if now is None or self._base is None:
            self._base = self._base if self._base is not None else now
            return 0.0
        return max(now - self._base, 0.0)

    def now(self) -> float:
        """See ``Clock.now``."""
        if not self.failed:
            try:
                self._last_now = self.clock.now()
            except Exception as exc:  # noqa: BLE001 - said in the trace, not raised
                self._fail("now", exc)
            else:
                return self._last_now
        return self._last_now + self._elapsed()

    def monotonic(self) -> float:
        """See ``Clock.monotonic``."""
        if not self.failed:
            try:
                self._last_monotonic = self.clock.monotonic()
            except Exception as exc:  # noqa: BLE001 - said in the trace, not raised
                self._fail("monotonic", exc)
            else:
                return self._last_monotonic
        return self._last_monotonic + self._elapsed()

    async def sleep(self, seconds: float) -> None:
        """See ``Clock.sleep``; a failure there (an ``Exception``, or a ``CancelledError``
        nothing asked for) sleeps the rest on the loop's time."""
        if self.failed:
            await asyncio.sleep(max(seconds, 0.0))
            return
        started = self.monotonic()
        try:
            await self.clock.sleep(seconds)
        except BaseException as exc:
            if failure_of(exc, "the clock") is exc and not isinstance(exc, Exception):
                raise  # asked for (the sleeper is being cancelled), or KeyboardInterrupt
            self._fail("sleep", exc)
            await asyncio.sleep(max(seconds - (self.monotonic() - started), 0.0))
