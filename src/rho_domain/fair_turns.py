"""Turns of the event loop shared fairly among the sessions that want them (issue 33).

asyncio runs, in one turn of its loop, every callback ready when the turn starts. When many
sessions are woken at once (a burst of model answers read by the selector together, a store's
syncs finishing together in worker threads), each one's next step (parsing a stream to its
end, building and sending the next request: ~1 ms each) runs in that one turn, and the loop
answers nothing else until all of them are done: 1,000 sessions made turns of 20-80 ms.

``FairTurns`` bounds a turn's share of that work, as a fair scheduler would: a session's step
that begins after waiting for the outside world calls ``take_turn()`` first, which returns at
once while the current turn has spent less than ``BUDGET_SECONDS`` since its first admission
and nobody waits; otherwise the step waits in line (first come, first served) and later turns
let the line go on, a batch per turn, its size adapted so that a turn stays near the budget.
``pass_turn()`` always gives the loop up and comes back in line: a step that yields on
purpose. ``enter()`` is a new session's first step (its opening): it waits in a line of its
own, one a turn while the sessions under way fill every turn (the pace of the turnstile
before it), more with the room they leave: a burst of 1,000 dispatches does not open 1,000
sessions, each holding its objects for the collector to walk, ahead of the steps of the
sessions already running, and the loop still always has new work when they wait.

What waits holds no place in the loop's ready queue, so a timer or a new connection runs
within about one turn, and the work is only spread, never dropped: the loop stays busy as
long as anything waits, so a saturated loop does the same work in the same time.

One ``FairTurns`` per event loop (``fair_turns()``), made on first use; ``use_fair_turns``
puts another one (a budget of its own, a clock a test drives) on the running loop.
"""

from __future__ import annotations

import asyncio
import time
import weakref
from collections import deque
from collections.abc import Awaitable, Callable

BUDGET_SECONDS = 0.004
"""The work admitted in one turn of the loop, in seconds of its clock, before steps wait."""
_MAX_BATCH = 64

_by_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, FairTurns] = (
    weakref.WeakKeyDictionary()
)


class FairTurns:
    """The line of steps waiting for a share of the turns of one event loop (see the module
    docstring). ``clock`` is read at admissions and once per turn while steps wait."""

    __slots__ = (
        "_batch",
        "_budget",
        "_clock",
        "_line",
        "_loop",
        "_newcomers",
        "_opened",
        "_pending",
        "parked",
    )

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        *,
        budget: float = BUDGET_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._loop = loop
        self._budget = budget
        self._clock = clock
        # when this turn's first step was admitted (None: no step yet this turn)
        self._opened: float | None = None
        self._line: deque[asyncio.Future[None]] = deque()
        self._newcomers: deque[asyncio.Future[None]] = deque()
        self._batch = 4  # steps let go per turn from the line: adapted by _turn_over
        self._pending = False  # _turn_over is scheduled for the next turn
        self.parked = 0
        """Steps that waited in line so far (benchmarks, tests)."""

    async def take(self) -> None:
        """Return at once when this turn has room and nobody waits; otherwise wait in line
        for a later turn's share. Cancelled while waiting, it raises ``CancelledError`` and
        leaves the line."""
        if not self._line:
            opened = self._opened
            if opened is None:
                self._opened = self._clock()
                self._schedule()
                return
            if self._clock() - opened < self._budget:
                return
        await self._wait()

    async def pass_(self) -> None:
        """Give the loop up (at least one turn), then wait in line for a share."""
        await self._wait()

    async def enter(self) -> None:
        """Give the loop up, then wait in the newcomers' line (a new session's opening): one
        goes on a turn, more when the sessions under way leave room."""
        waiter = self._loop.create_future()
        self._newcomers.append(waiter)
        self.parked += 1
        self._schedule()
        await waiter

    async def _wait(self) -> None:
        waiter = self._loop.create_future()
        self._line.append(waiter)
        self.parked += 1
        self._schedule()
        await waiter

    def _schedule(self) -> None:
        if not self._pending:
            self._pending = True
            self._loop.call_soon(self._turn_over)

    def _turn_over(self) -> None:
        """A new turn: the last one's admissions are over; let the next batch go on."""
        self._pending = False
        now, opened = self._clock(), self._opened
        self._opened = None
        line, newcomers = self._line, self._newcomers
        if not line and not newcomers:
            return
        if opened is not None:  # the turn just over, from its first admission to now
            spent = now - opened
            if spent > self._budget:
                self._batch = max(1, self._batch // 2)
            elif spent < self._budget / 2:
                self._batch = min(_MAX_BATCH, self._batch + 1)
        let_go = _let_go(line, self._batch)
        if newcomers:  # one a turn, more with the room the line left
            _let_go(newcomers, max(1, self._batch - let_go) if not line else 1)
        # the batch runs in the next turn, counted as its first admissions; whoever comes
        # fresh then waits behind what is still in line
        self._opened = now
        self._schedule()


def _let_go(line: deque[asyncio.Future[None]], most: int) -> int:
    """Wake up to ``most`` of ``line``'s waiters, first come first; how many were woken (a
    cancelled one has left and does not count)."""
    woken = 0
    while line and woken < most:
        waiter = line.popleft()
        if not waiter.done():
            waiter.set_result(None)
            woken += 1
    return woken


def fair_turns() -> FairTurns:
    """The running loop's ``FairTurns`` (made on first use)."""
    loop = asyncio.get_running_loop()
    turns = _by_loop.get(loop)
    if turns is None:
        turns = _by_loop[loop] = FairTurns(loop)
    return turns


def use_fair_turns(turns: FairTurns) -> None:
    """Share the running loop's turns through ``turns`` from now on (its own budget or
    clock). Steps already waiting in the former line finish there."""
    _by_loop[asyncio.get_running_loop()] = turns


def take_turn() -> Awaitable[None]:
    """``fair_turns().take()``: at once while this turn has room, else in line."""
    return fair_turns().take()


def enter() -> Awaitable[None]:
    """``fair_turns().enter()``: a new session's opening, one a turn or the room left."""
    return fair_turns().enter()


def pass_turn() -> Awaitable[None]:
    """``fair_turns().pass_()``: give the loop up, and come back in line."""
    return fair_turns().pass_()
