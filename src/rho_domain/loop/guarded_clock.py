"""The Clock as a session reaches it: a clock that fails is said once in the trace, and the
run keeps its times on the event loop's own clock.

A clock port whose member raised was handled three ways, none of them said: ``now()``
raising ended the run ``error`` with a bare "OSError: ..." naming no clock; ``monotonic()``
raising at the run's start let the OSError out of ``Session.run`` (no result, no trace); and
``sleep()`` failing (``cancel_watch.kept_sleep`` since round 21) was slept on the loop's time
with nothing in the trace or the log, so a run's timings silently stopped being the clock's.

A clock that lies was not met at all: ``now()`` returning NaN (or an infinity, or a time past
year 9999) wrote every event of the run with that time, and the codec refuses such a line, so
the whole trace read back as nothing; ``monotonic()`` returning NaN or going backwards made
every duration and the wall-time budget meaningless (NaN passes every limit). Such a reading
is a failure like a raise.

``GuardedClock`` takes the first failure of any member as the clock's end for this session:
from then on every member answers from the running event loop's time (``loop.time()``,
monotonic), continued from the clock's last good readings so that durations never go
backwards and timestamps keep moving (a clock that failed before its ``now()`` ever answered
continues from its ``fallback``'s, the system clock that ``wiring.build_ports`` gives: from 0
its events were dated 1970); and each session's ``Journal.emit`` records the
failure once, as an ``ErrorOccurred`` with ``error_type`` ``ClockError``, before its next
event (a durable run executed again says it once it no longer retraces its trace, and passes
over the one its trace holds: a clock's failure is no step of the run to replay). A cancel of
the sleeper still cancels; ``KeyboardInterrupt`` still stops.

One guard per clock, shared by the sessions that use it (a runtime's thousand sessions share
one clock: a guard each would be a thousand more objects for every collection to walk).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import weakref
from typing import Any

from rho_domain.plugged import described, failure_of, plugged_name
from rho_domain.ports.clock import Clock
from rho_domain.shown_numbers import a_time, shown

CLOCK_FAILED = "ClockError"  # the ``error_type`` of the trace's event saying so
_log = logging.getLogger(__name__)
_GUARDS: weakref.WeakKeyDictionary[Clock, GuardedClock] = weakref.WeakKeyDictionary()


def _loop_time() -> float | None:
    """The running event loop's monotonic time, or None outside one."""
    try:
        return asyncio.get_running_loop().time()
    except RuntimeError:
        return None


class GuardedClock(Clock):
    """``clock``, or, once one of its members failed, the event loop's time (module
    docstring). ``failure`` says what failed (None while none did), for each journal to
    record once."""

    __slots__ = (
        "_base",
        "_last_monotonic",
        "_last_now",
        "_now_read",
        "_read",
        "clock",
        "failed",
        "failure",
        "fallback",
    )

    def __init__(self, clock: Clock, *, fallback: Clock | None = None) -> None:
        self.clock = clock
        self.failed = False
        self.failure: str | None = None
        # where the times start when the clock failed before now() ever answered (None:
        # from 0, 1970); the composition root gives the system clock
        self.fallback = fallback
        self._last_now = 0.0
        self._now_read = False  # now() has answered once: the times continue from it
        self._last_monotonic = 0.0
        self._read = False  # monotonic() has answered once: a later reading may not be less
        self._base: float | None = None  # the loop time the fallback counts from

    @classmethod
    def of(cls, clock: Clock, *, fallback: Clock | None = None) -> GuardedClock:
        """``clock``'s guard, made once per clock (a clock that cannot be a weak key, unhashable
        or without ``__weakref__``, gets one each time); ``fallback`` (kept once given) is
        where its times start if it fails before its ``now()`` ever answered."""
        if isinstance(clock, GuardedClock):
            guard = clock
        else:
            try:
                guard = _GUARDS[clock]
            except (KeyError, TypeError):
                guard = cls(clock)
            with contextlib.suppress(TypeError):
                _GUARDS[clock] = guard
        if guard.fallback is None:
            guard.fallback = fallback
        return guard

    def __getattr__(self, name: str) -> Any:
        # a fake's own members (``advance``, ``sleeps``) stay reachable to its tests
        return getattr(self.clock, name)

    def _fail(self, member: str, exc: BaseException | None = None, lie: str = "") -> None:
        """The clock ends here: it raised ``exc`` in ``member``, or answered ``lie``."""
        if self.failed:
            return
        self.failed = True
        self._base = _loop_time()
        start = "the clock's last good reading"
        if not self._now_read:  # a clock that never told the time: from 0 was dated 1970
            start = self._fallback_start()
        what = f"raised {described(exc)} in {member}()" if exc is not None else lie
        self.failure = (
            f"the clock {plugged_name(self.clock)} {what}: from here on this session's times "
            f"come from the event loop's clock, counted from {start}; "
            "fix the clock (the Clock port's now, monotonic and sleep must not raise, and "
            "must answer times: monotonic never going back)"
        )
        _log.warning("%s", self.failure)

    def _fallback_start(self) -> str:
        """Start the times at the fallback's reading; say where they start. A fallback that
        failed too was passed over unsaid, the times dated 1970 while the failure said
        they counted from the clock's last good reading, which it never gave."""
        if self.fallback is None:
            return "0 (dated 1970-01-01: the clock never told the time, and has no fallback)"
        try:
            reading = self.fallback.now()
        except Exception as exc:  # noqa: BLE001 - said in the failure, not raised
            failed = f"raised {described(exc)}"
        else:
            if a_time(reading):
                self._last_now = reading
                return f"the fallback clock {plugged_name(self.fallback)}'s time"
            failed = f"answered {reading!r}"
        return (
            "0 (dated 1970-01-01: the clock never told the time, and its fallback "
            f"{plugged_name(self.fallback)} {failed} in now())"
        )

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
                reading = self.clock.now()
            except Exception as exc:  # noqa: BLE001 - said in the trace, not raised
                self._fail("now", exc)
            else:
                if a_time(reading):
                    self._last_now = reading
                    self._now_read = True
                    return reading
                self._fail("now", lie=f"answered now() with {reading!r}, not a time")
        return self._last_now + self._elapsed()

    def monotonic(self) -> float:
        """See ``Clock.monotonic``."""
        if not self.failed:
            try:
                reading = self.clock.monotonic()
            except Exception as exc:  # noqa: BLE001 - said in the trace, not raised
                self._fail("monotonic", exc)
            else:
                if not shown(reading):
                    self._fail("monotonic", lie=f"answered monotonic() with {reading!r}")
                elif self._read and reading < self._last_monotonic:
                    self._fail(
                        "monotonic",
                        lie=f"answered monotonic() with {reading!r} after {self._last_monotonic!r}"
                        " (it went back)",
                    )
                else:
                    self._read = True
                    self._last_monotonic = reading
                    return reading
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
