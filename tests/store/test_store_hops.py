"""What a file-backed session's store work costs the event loop: its four trips to a worker
thread (create, the two run boundaries' syncs, close) are the executor's own futures, with no
task of their own (issue 33: 1,000 sessions' run ends land in the same turns of the loop, and
each callback and task there is the loop's work while the others wait)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine
from contextvars import Context
from pathlib import Path
from typing import Any

from test_store_fsyncs import run_events

from rho_adapters.store import FileSessionStore
from rho_domain.config import AgentConfig
from rho_domain.ports.store import SessionRecord


class CountingLoop(asyncio.SelectorEventLoop):
    """An event loop that counts the callbacks scheduled on it and the tasks made on it."""

    def __init__(self) -> None:
        super().__init__()
        self.scheduled = 0
        self.tasks: list[str] = []
        self.set_task_factory(self._task)  # type: ignore[arg-type]  # typeshed's is narrower

    def call_soon(  # type: ignore[override]  # typeshed's is generic over the arguments
        self, callback: Callable[..., object], *args: Any, context: Context | None = None
    ) -> asyncio.Handle:
        self.scheduled += 1
        return super().call_soon(callback, *args, context=context)

    def call_soon_threadsafe(  # type: ignore[override]  # as call_soon
        self, callback: Callable[..., object], *args: Any, context: Context | None = None
    ) -> asyncio.Handle:
        self.scheduled += 1
        return super().call_soon_threadsafe(callback, *args, context=context)

    def _task(
        self, loop: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, Any], **kwargs: Any
    ) -> asyncio.Task[Any]:
        self.tasks.append(getattr(coro, "__qualname__", repr(coro)))
        return asyncio.Task(coro, loop=loop, **kwargs)


def run_on(loop: CountingLoop, work: Callable[[], Coroutine[Any, Any, None]]) -> None:
    try:
        loop.run_until_complete(work())
    finally:
        loop.run_until_complete(loop.shutdown_default_executor())
        loop.close()


def test_a_sessions_store_work_makes_no_task_and_three_callbacks_a_trip(tmp_path: Path) -> None:
    loop = CountingLoop()
    store = FileSessionStore(tmp_path / "sessions", heartbeat=3600)
    counted: dict[str, Any] = {}

    async def one_session(session_id: str) -> None:
        start, middle, end = run_events("r1", "look")
        await store.create(
            SessionRecord(id=session_id, created_at=time.time(), config=AgentConfig())
        )
        await store.append(session_id, start)  # synced in a worker thread
        for event in middle:
            await store.append(session_id, [event])  # written on the loop's thread
        await store.append(session_id, [end])  # synced
        await store.release(session_id)

    async def work() -> None:
        await one_session("s0")  # the first: the executor's threads start
        loop.scheduled, loop.tasks[:] = 0, []
        await one_session("s1")
        counted["scheduled"], counted["tasks"] = loop.scheduled, list(loop.tasks)

    run_on(loop, work)
    assert counted["tasks"] == []  # was two: the syncs' to_thread coroutines wrapped for shield
    # four trips, three callbacks each (the thread's answer, the future's cancel check, the
    # waiter's wake-up), and a sync's shield two more
    assert counted["scheduled"] <= 4 * 3 + 2 * 2  # was 20
    trace = (tmp_path / "sessions" / "s1" / "trace.jsonl").read_text().splitlines()
    assert len(trace) == 5
    assert '"pid": null' in (tmp_path / "sessions" / "s1" / "meta.json").read_text()
