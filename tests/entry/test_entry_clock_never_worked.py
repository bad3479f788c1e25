"""A clock given to a session that fails before it ever tells the time: the session's times
are the system clock's from there on, not counted from 0.

Before, the guard that takes over a failed clock (``GuardedClock``) continued from the
clock's last good ``now()``, which a clock that never worked never gave: every event of the
run, and the session's record, was dated 1970 (``at`` 0.0 and on), so ``ps`` and the
dashboard sorted it last and showed its age as 56 years."""

from __future__ import annotations

from pathlib import Path

from rho_adapters.fakes import FakeClock, MemoryExecutor, ScriptedModel, text
from rho_adapters.fakes.memory_store import MemorySessionStore
from rho_domain import events as ev
from rho_entry import Agent, AgentConfig, Session

YEAR_2020 = 1_577_836_800.0


class _NoTime(FakeClock):
    """A clock whose ``now()`` has never worked (its time source is gone)."""

    def now(self) -> float:
        raise OSError("no time source")


async def test_a_clock_that_never_worked_dates_the_run_by_the_system_clock(
    tmp_path: Path,
) -> None:
    store = MemorySessionStore()
    async with Session(
        Agent(AgentConfig(model="scripted", profile="eval", working_dir=str(tmp_path))),
        model=ScriptedModel([text("done")]),
        executor=MemoryExecutor(),
        clock=_NoTime(),
        store=store,
    ) as session:
        result = await session.run("go")
    assert result.ok, result.error
    events = store.events(result.session_id)
    said = [e for e in events if isinstance(e, ev.ErrorOccurred)]
    assert [e.error_type for e in said] == ["ClockError"]
    assert min(e.at for e in events) > YEAR_2020, [e.at for e in events]


async def test_a_fallback_that_fails_too_is_said_where_the_times_start() -> None:
    """A fallback clock that also failed was passed over unsaid: the times counted from 0
    (1970) while the failure said they counted from the clock's last good reading, which
    the clock never gave. Each case now says where its times start."""
    from rho_domain.loop.guarded_clock import GuardedClock

    said = []
    for fallback in (_NoTime(), None, FakeClock(start=YEAR_2020 + 5)):
        guard = GuardedClock(_NoTime(), fallback=fallback)
        guard.now()
        said.append((guard.failure or "").split("counted from ", 1)[1].split("; fix", 1)[0])
    assert said == [
        "0 (dated 1970-01-01: the clock never told the time, and its fallback "
        "test_entry_clock_never_worked._NoTime raised OSError: no time source in now())",
        "0 (dated 1970-01-01: the clock never told the time, and has no fallback)",
        "the fallback clock rho_adapters.fakes.clock.FakeClock's time",
    ]
