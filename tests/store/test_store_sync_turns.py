"""Syncs that finish together go on a turn's share at a time (issue 33).

A file store's append at a run boundary waits for its fsync in a worker thread; the threads
of many sessions finish together (a busy loop reads their completions in one turn), and
without a share (``fair_turns.take_turn``) each session's next step (the next request's
body, its send) ran in that one turn. Here the loop is held until every sync is over, so
all their completions arrive together; the steps' cost is a fake clock each session moves on.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rho_adapters.store import FileSessionStore
from rho_domain import events as ev
from rho_domain.config import AgentConfig
from rho_domain.fair_turns import FairTurns, use_fair_turns
from rho_domain.ports.store import SessionRecord

SESSIONS = 12
STEP = 0.001


class _Recording(concurrent.futures.ThreadPoolExecutor):
    """The loop's default executor, keeping the futures of what it was given."""

    def __init__(self) -> None:
        super().__init__(max_workers=4)
        self.given: list[concurrent.futures.Future[Any]] = []

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
        future = super().submit(fn, *args, **kwargs)
        self.given.append(future)
        return future


async def test_appends_whose_syncs_finish_together_go_on_a_budgets_worth_a_turn(
    tmp_path: Path,
) -> None:
    loop = asyncio.get_running_loop()
    now = [0.0]
    use_fair_turns(FairTurns(loop, budget=0.0035, clock=lambda: now[0]))
    store = FileSessionStore(tmp_path / "sessions", heartbeat=3600)
    ids = [f"s{i}" for i in range(SESSIONS)]
    for sid in ids:
        await store.create(SessionRecord(id=sid, created_at=time.time(), config=AgentConfig()))
    executor = _Recording()
    loop.set_default_executor(executor)
    turn = [0]

    def tick() -> None:
        turn[0] += 1
        ticker[0] = loop.call_soon(tick)

    ticker = [loop.call_soon(tick)]
    went_on_in: list[int] = []

    async def boundary(sid: str) -> None:
        await store.append(sid, [ev.RunStarted(at=1.0, run_id="r1", prompt="look")])
        went_on_in.append(turn[0])
        now[0] += STEP  # the session's next step

    try:
        appends = [asyncio.ensure_future(boundary(sid)) for sid in ids]
        for _ in range(1000):  # until every append waits for its sync
            if len(executor.given) == SESSIONS:
                break
            await asyncio.sleep(0)
        concurrent.futures.wait(executor.given)  # the loop held: every sync ends meanwhile
        await asyncio.gather(*appends)
    finally:
        ticker[0].cancel()
        for sid in ids:
            await store.release(sid)
        executor.shutdown()
    per_turn = [went_on_in.count(t) for t in sorted(set(went_on_in))]
    assert max(per_turn) <= 4, per_turn  # without the share: all twelve in one turn
