"""``fair_turns``: a turn of the loop admits a budget's worth of steps, the rest wait in line
and later turns let them go on, first come first; new sessions enter with the room left.

Turns are counted by a callback that schedules itself again each turn; the steps' cost is a
fake clock each step moves on, so nothing here depends on the machine's speed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import pytest
from domain_support import make_session

from rho_adapters.fakes import call, text, tools
from rho_domain import events as ev
from rho_domain.fair_turns import FairTurns, enter, fair_turns, pass_turn, take_turn, use_fair_turns
from rho_domain.tools.base import READ_ONLY, ToolContext, ToolHandler, ToolOutput, ToolPolicy

STEP = 0.001  # what each step "costs", on the fake clock


class _Turns:
    """A turn counter: a callback that runs once a turn and schedules itself again."""

    def __init__(self) -> None:
        self.now = 0
        self._loop = asyncio.get_running_loop()
        self._handle = self._loop.call_soon(self._tick)

    def _tick(self) -> None:
        self.now += 1
        self._handle = self._loop.call_soon(self._tick)

    def stop(self) -> None:
        self._handle.cancel()


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _line(budget: float = 0.0035) -> tuple[FairTurns, _Clock]:
    clock = _Clock()
    turns = FairTurns(asyncio.get_running_loop(), budget=budget, clock=clock)
    use_fair_turns(turns)
    return turns, clock


async def _steps(
    n: int, wait: Callable[[], Awaitable[None]], clock: _Clock, seen: list[tuple[int, int]]
) -> None:
    """``n`` steps woken together, each waiting with ``wait``, then costing ``STEP``."""
    counter = _Turns()

    async def step(i: int) -> None:
        await wait()
        seen.append((counter.now, i))
        clock.now += STEP

    try:
        await asyncio.gather(*(step(i) for i in range(n)))
    finally:
        counter.stop()


def _per_turn(seen: list[tuple[int, int]]) -> list[int]:
    counts: dict[int, int] = {}
    for turn, _ in seen:
        counts[turn] = counts.get(turn, 0) + 1
    return [counts[t] for t in sorted(counts)]


async def test_one_turn_admits_a_budgets_worth_and_the_line_goes_on_first_come_first() -> None:
    turns, clock = _line()
    seen: list[tuple[int, int]] = []
    await _steps(20, take_turn, clock, seen)
    per_turn = _per_turn(seen)
    # 3.5 ms of budget at 1 ms a step: 4 in the first turn, then batches of at most 4
    assert per_turn[0] == 4
    assert max(per_turn) <= 4
    assert sum(per_turn) == 20
    assert [i for _, i in seen] == list(range(20))  # first come, first served
    assert turns.parked == 16


async def test_a_turn_that_ran_long_halves_the_batch_let_go() -> None:
    _, clock = _line()
    seen: list[tuple[int, int]] = []
    counter = _Turns()

    async def costly(i: int) -> None:
        await take_turn()
        seen.append((counter.now, i))
        clock.now += 0.01  # each step overruns the whole budget

    try:
        await asyncio.gather(*(costly(i) for i in range(12)))
    finally:
        counter.stop()
    per_turn = _per_turn(seen)
    assert per_turn[0] == 1  # the first step spent the turn's budget
    assert per_turn[1:4] == [2, 1, 1]  # the first batch (2: 4 halved), then 1 a turn


async def test_a_step_in_a_quiet_turn_goes_on_at_once() -> None:
    turns, clock = _line()
    for _ in range(3):  # one admission a turn, each in a turn of its own: no waiting
        await take_turn()
        clock.now += STEP
        await asyncio.sleep(0)
        await asyncio.sleep(0)
    assert turns.parked == 0


async def test_pass_turn_always_gives_the_loop_up() -> None:
    _line()
    ran: list[str] = []

    async def other() -> None:
        ran.append("other")

    task = asyncio.ensure_future(other())
    await pass_turn()
    assert ran == ["other"]
    await task


async def test_a_step_cancelled_while_waiting_leaves_the_line() -> None:
    turns, _ = _line(budget=0.0)  # one step a turn
    waiting = [asyncio.ensure_future(take_turn()) for _ in range(3)]
    await asyncio.sleep(0)  # the first goes on, the other two wait
    assert turns.parked == 2
    waiting[1].cancel()
    await asyncio.gather(waiting[0], waiting[2])
    with pytest.raises(asyncio.CancelledError):
        await waiting[1]


async def test_newcomers_go_on_one_a_turn_while_the_sessions_under_way_fill_the_turns() -> None:
    _, clock = _line()
    counter = _Turns()
    order: list[tuple[int, str]] = []

    async def newcomer() -> None:
        await enter()
        order.append((counter.now, "new"))
        clock.now += STEP

    async def under_way() -> None:
        for _ in range(3):  # three steps, each back in line after the last
            await pass_turn()
            order.append((counter.now, "run"))
            clock.now += STEP

    try:
        # eight sessions under way fill the line (at most 4 steps a turn) for six turns;
        # four newcomers, there as early, go on one a turn meanwhile, not all first
        await asyncio.gather(*(newcomer() for _ in range(4)), *(under_way() for _ in range(8)))
    finally:
        counter.stop()
    runs = sorted({t for t, name in order if name == "run"})
    news = [t for t, name in order if name == "new"]
    assert len(news) == len(set(news)) == 4  # one a turn
    assert all(t <= runs[-1] for t in news)  # none waited for the line to empty
    assert [name for _, name in order][:4] == ["run"] * 4  # the steps under way first


def test_each_loop_has_its_own_line() -> None:
    async def get() -> FairTurns:
        turns = fair_turns()
        assert fair_turns() is turns
        return turns

    assert asyncio.run(get()) is not asyncio.run(get())


class _Gate(ToolHandler):
    """A read that waits for ``opened``: every session's result comes back at once."""

    name = "gate"
    description = "Wait for the gate."
    parameters: Mapping[str, Any] = {"type": "object", "properties": {}}

    def __init__(self, opened: asyncio.Event) -> None:
        self.opened = opened
        self.waiting = 0

    def policy_for(self, arguments: Mapping[str, Any]) -> ToolPolicy:
        return READ_ONLY

    async def handle(self, arguments: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
        self.waiting += 1
        await self.opened.wait()
        return ToolOutput(content="open")


async def test_tool_results_that_come_back_together_go_on_a_budgets_worth_a_turn() -> None:
    _, clock = _line()
    opened = asyncio.Event()
    counter = _Turns()
    ended_in: list[int] = []

    def listener(event: ev.Event) -> None:
        if isinstance(event, ev.ToolEnded):  # recording the result, then the next request
            ended_in.append(counter.now)
            clock.now += STEP

    gate = _Gate(opened)
    sessions = [make_session([tools(call("gate")), text("done")], tools=[gate]) for _ in range(12)]
    try:
        runs = [asyncio.ensure_future(s.run("go", on_event=listener)) for s in sessions]
        for _ in range(1000):  # until every session waits in its tool
            if gate.waiting == 12:
                break
            await asyncio.sleep(0)
        opened.set()
        results = await asyncio.gather(*runs)
    finally:
        counter.stop()
    assert [r.text for r in results] == ["done"] * 12
    per_turn = [ended_in.count(t) for t in sorted(set(ended_in))]
    assert max(per_turn) <= 4, per_turn  # without the share: all twelve in one turn
