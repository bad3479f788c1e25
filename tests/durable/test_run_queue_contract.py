"""One ``RunQueue`` contract, run on the fake (``MemoryRunQueue``) and on the DBOS queue.

The DBOS rig is the real ``DbosRunQueue`` on a PostgreSQL database of its own (the process's
shared server, ``pg_rig``), consumed by a real ``DbosWorker`` in this process whose runner
holds each run it takes until the test finishes it: ``take`` is a worker taking the next run
(concurrency one, so in the queue's order), ``finish`` the status its run ends with. The
fake's ``take`` and ``finish`` play the same worker, so what a test asserts of one it
asserts of the other: the fake cannot drift from the queue.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import importlib.util
import queue
import sys
import uuid
from collections.abc import AsyncIterator, Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "store"))  # the shared server
from pg_rig import pg_server_url

from rho_adapters.fakes import MemoryRunQueue
from rho_domain.errors import SessionStateError
from rho_domain.ports.durable import (
    CancelAsked,
    CancelledRun,
    DurableSteps,
    QueuedRun,
    RunQueue,
)
from rho_domain.run import new_id

__all__ = ["pg_server_url"]  # the session-scoped server fixture, used through ``dbos_rig``

T = TypeVar("T")
QUEUE = "contract"
VERSION = "v-contract"


class HeldRunner:
    """A worker's runner that hands each run it is given to the test and returns the status
    the test finishes it with (threads: DBOS runs workflows on a loop of its own)."""

    def __init__(self) -> None:
        self.arrived: queue.Queue[QueuedRun] = queue.Queue()
        self.ends: dict[str, concurrent.futures.Future[str]] = {}
        self.asked: dict[str, CancelAsked] = {}

    async def __call__(self, run: QueuedRun, steps: DurableSteps, asked: CancelAsked) -> str:
        end: concurrent.futures.Future[str] = concurrent.futures.Future()
        self.ends[run.run_id], self.asked[run.run_id] = end, asked
        self.arrived.put(run)
        return await asyncio.wrap_future(end)


class Rig:
    """A queue and the worker a test plays through it."""

    def __init__(self, run_queue: RunQueue, held: HeldRunner | None = None) -> None:
        self.queue = run_queue
        self.held = held

    async def take(self) -> QueuedRun:
        """The next run a worker takes (fails when none comes)."""
        if self.held is None:
            fake = self.queue
            assert isinstance(fake, MemoryRunQueue)
            taken = await fake.take()
            assert taken is not None, "no run waits on the queue"
            return taken
        try:
            return await asyncio.to_thread(self.held.arrived.get, timeout=30)
        except queue.Empty:
            raise AssertionError("the worker took no run within 30 s") from None

    async def finish(self, run_id: str, status: str) -> None:
        """The taken run ends with ``status``; returns once the queue says so."""
        if self.held is None:
            fake = self.queue
            assert isinstance(fake, MemoryRunQueue)
            await fake.finish(run_id, status)
        else:
            self.held.ends[run_id].set_result(status)
        assert await self.queue.wait(run_id, 30) == status

    @contextlib.asynccontextmanager
    async def busy(self) -> AsyncIterator[None]:
        """The worker holds a run of its own meanwhile (concurrency one): what is enqueued
        stays queued, however soon an idle worker would take it; finished at the end."""
        blocker = _run("blocker")
        await self.queue.enqueue(blocker)
        assert (await self.take()).run_id == blocker.run_id
        yield
        await self.finish(blocker.run_id, "completed")

    async def worker_reads_cancel(self, run_id: str) -> bool:
        """What the worker's run reads of a cancel asked of it (its ``asked``)."""
        if self.held is None:
            return await self.queue.cancel_asked(run_id)
        return await self.held.asked[run_id]()

    async def drain(self) -> None:
        """Nothing left queued or held: the next test's worker slot is free."""
        while True:
            if self.held is None:
                return
            for run_id, end in list(self.held.ends.items()):
                if not end.done():
                    end.set_result("completed")
                    await self.queue.wait(run_id, 30)
            waiting = await self._queued()
            if not waiting and all(end.done() for end in self.held.ends.values()):
                return
            client: Any = getattr(self.queue, "client")  # noqa: B009 - the DBOS rig's
            await client.cancel_workflows_async(waiting)

    async def _queued(self) -> list[str]:
        client: Any = getattr(self.queue, "client")  # noqa: B009 - the DBOS rig's
        found = await client.list_workflows_async(
            queue_name=QUEUE, status=["ENQUEUED"], load_input=False, load_output=False
        )
        return [str(w.workflow_id) for w in found]


@pytest.fixture(scope="module")
def dbos_rig(pg_server_url: str) -> Iterator[Rig]:
    """The DBOS queue in a database of its own, and a held worker of concurrency one."""
    import psycopg

    from rho_adapters.durable.worker import DbosWorker, WorkerOptions
    from rho_entry.durable.queueing import open_queue

    name = f"contract_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(pg_server_url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    url = f"{pg_server_url.rsplit('/', 1)[0]}/{name}"
    held = HeldRunner()
    options = WorkerOptions(
        url=url,
        queue=QUEUE,
        concurrency=1,
        app_version=VERSION,
        executor_id=f"contract-{name}",
        poll_interval=0.05,
        heartbeat=0.5,
        dead_after=30,
    )
    worker = DbosWorker(options, held)
    _blocking(worker.start())
    run_queue = open_queue(url, queue=QUEUE, version=VERSION)
    try:
        yield Rig(run_queue, held)
    finally:
        for end in held.ends.values():
            if not end.done():
                end.set_result("completed")
        _blocking(worker.stop())
        run_queue.close()
        with psycopg.connect(pg_server_url, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE {name} WITH (FORCE)")


@pytest.fixture(params=["memory", "dbos"])
def rig(request: pytest.FixtureRequest) -> Iterator[Rig]:
    if request.param == "memory":
        yield Rig(MemoryRunQueue(QUEUE))
        return
    if importlib.util.find_spec("dbos") is None:  # found, not imported: dbos costs 0.65 s
        pytest.skip("the durable extra (dbos) is not installed")
    made: Rig = request.getfixturevalue("dbos_rig")
    yield made
    _blocking(made.drain())


def _blocking(work: Coroutine[Any, Any, T]) -> T:
    """``work`` run to its end on a loop of its own, in a thread: the worker outlives the
    loop of any one test, and a fixture may be set up while a test's loop runs."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, work).result()


def _run(prompt: str | None = "go", session_id: str | None = None, **settings: str) -> QueuedRun:
    return QueuedRun(
        run_id=new_id(), session_id=session_id or new_id(), prompt=prompt, settings=settings
    )


async def test_a_run_is_queued_taken_and_finished(rig: Rig) -> None:
    run = _run(model="m1")
    async with rig.busy():
        await rig.queue.enqueue(run)
        assert await rig.queue.status(run.run_id) == "queued"
    assert await rig.take() == run  # its payload whole, settings included
    assert await rig.queue.status(run.run_id) == "running"
    await rig.finish(run.run_id, "completed")
    unknown = new_id()
    assert await rig.queue.statuses([run.run_id, unknown, run.run_id]) == {
        run.run_id: "completed",
        unknown: None,
    }
    assert await rig.queue.status(unknown) is None


async def test_runs_are_taken_in_the_order_they_were_queued(rig: Rig) -> None:
    runs = [_run(f"run {n}") for n in range(3)]
    for run in runs:
        await rig.queue.enqueue(run)
    for run in runs:
        assert (await rig.take()).run_id == run.run_id
        await rig.finish(run.run_id, "completed")


async def test_the_same_run_queued_twice_is_taken_once(rig: Rig) -> None:
    run, other = _run(), _run()
    await rig.queue.enqueue(run)
    await rig.queue.enqueue(run)  # no error: the same run
    await rig.queue.enqueue(other)
    assert (await rig.take()).run_id == run.run_id
    await rig.finish(run.run_id, "completed")
    assert (await rig.take()).run_id == other.run_id  # not the first one again
    await rig.finish(other.run_id, "completed")


async def test_one_run_of_a_session_at_a_time_while_queued_or_running(rig: Rig) -> None:
    first = _run()
    second = _run(session_id=first.session_id)
    async with rig.busy():
        await rig.queue.enqueue(first)
        with pytest.raises(SessionStateError) as queued:
            await rig.queue.enqueue(second)
    assert (await rig.take()).run_id == first.run_id
    with pytest.raises(SessionStateError) as running:
        await rig.queue.enqueue(second)
    for refusal in (queued, running):
        said = str(refusal.value)
        assert f"session {first.session_id} has a run queued or in progress" in said
        assert f"on the queue {QUEUE!r}; run {second.run_id} was not queued" in said
    assert await rig.queue.status(second.run_id) is None
    await rig.finish(first.run_id, "awaiting_approval")  # a waiting run has ended
    await rig.queue.enqueue(second)
    assert (await rig.take()).run_id == second.run_id
    await rig.finish(second.run_id, "completed")


async def test_a_queued_run_cancelled_never_runs_and_frees_its_session(rig: Rig) -> None:
    run = _run()
    again = _run(session_id=run.session_id)
    async with rig.busy():
        await rig.queue.enqueue(run)
        assert await rig.queue.cancel_queued(run.session_id) == CancelledRun(
            run_id=run.run_id, taken=False
        )
        assert await rig.queue.status(run.run_id) == "cancelled"
        assert await rig.queue.wait(run.run_id, 30) == "cancelled"
        assert not await rig.queue.cancel_asked(run.run_id)
        await rig.queue.enqueue(again)  # at once: the session is free
    assert (await rig.take()).run_id == again.run_id  # the cancelled one was never taken
    await rig.finish(again.run_id, "completed")


async def test_a_taken_run_cancelled_has_the_cancel_recorded_for_it(rig: Rig) -> None:
    run, bystander = _run(), _run()
    await rig.queue.enqueue(run)
    assert await rig.take() == run
    await rig.queue.enqueue(bystander)
    assert not await rig.worker_reads_cancel(run.run_id)
    cancelled = await rig.queue.cancel_queued(run.session_id)
    assert cancelled == CancelledRun(run_id=run.run_id, taken=True)
    assert await rig.queue.cancel_asked(run.run_id)
    assert await rig.worker_reads_cancel(run.run_id)  # what its worker's run reads
    assert not await rig.queue.cancel_asked(bystander.run_id)
    assert await rig.queue.status(run.run_id) == "running"  # it ends itself, cancelled
    await rig.finish(run.run_id, "cancelled")
    assert not await rig.queue.cancel_asked(run.run_id)  # forgotten with its run
    assert (await rig.take()).run_id == bystander.run_id
    await rig.finish(bystander.run_id, "completed")


async def test_cancel_with_nothing_on_the_queue_is_none(rig: Rig) -> None:
    assert await rig.queue.cancel_queued(new_id()) is None
    run = _run()
    await rig.queue.enqueue(run)
    await rig.take()
    await rig.finish(run.run_id, "completed")
    assert await rig.queue.cancel_queued(run.session_id) is None
    assert not await rig.queue.cancel_asked(new_id())


async def _waiting(rig: Rig, **settings: str) -> QueuedRun:
    run = _run(**settings)
    await rig.queue.enqueue(run)
    await rig.take()
    await rig.finish(run.run_id, "awaiting_approval")
    return run


async def test_an_answer_queues_the_continuation_with_the_answers(rig: Rig) -> None:
    run = await _waiting(rig, model="m1")
    continuation = await rig.queue.answer(
        run.run_id,
        {"a1": True, "a2": False},
        reasons={"a2": "not that"},
        always=("bash",),
        digests={"a1": "d1"},
    )
    assert continuation == f"{run.run_id}~1"
    taken = await rig.take()
    assert (taken.run_id, taken.session_id, taken.prompt) == (continuation, run.session_id, None)
    assert taken.settings == {
        "model": "m1",
        "answer:a1": "yes",
        "answer:a2": "no",
        "reason:a2": "not that",
        "digest:a1": "d1",
        "always:bash": "yes",
    }
    await rig.finish(continuation, "awaiting_approval")
    # "always" is carried into the next continuation; answers belong to one run
    later = await rig.queue.answer(continuation, {"a3": True}, reasons={}, digests={"a3": "d3"})
    assert later == f"{run.run_id}~2"
    taken = await rig.take()
    assert taken.settings == {
        "model": "m1",
        "answer:a3": "yes",
        "digest:a3": "d3",
        "always:bash": "yes",
    }
    await rig.finish(later, "completed")


async def test_a_run_is_answered_once(rig: Rig) -> None:
    run = await _waiting(rig)
    first = await rig.queue.answer(run.run_id, {"a1": True}, reasons={}, digests={"a1": "d"})
    again = await rig.queue.answer(run.run_id, {"a1": True}, reasons={}, digests={"a1": "d"})
    assert again == first
    with pytest.raises(SessionStateError) as other:
        await rig.queue.answer(run.run_id, {"a1": False}, reasons={"a1": "no"})
    assert str(other.value) == (
        f"run {run.run_id} was already answered (a1: yes); its continuation {first} runs "
        f"with that answer, not this one (a1: no (no)). Answer again once {first} waits for "
        "approval."
    )
    assert (await rig.take()).run_id == first
    await rig.finish(first, "completed")


async def test_an_answer_after_its_continuation_was_cancelled_queues_the_next(rig: Rig) -> None:
    run = await _waiting(rig)
    digests = {"a1": "d"}
    async with rig.busy():
        first = await rig.queue.answer(run.run_id, {"a1": True}, reasons={}, digests=digests)
        cancelled = await rig.queue.cancel_queued(run.session_id)
        assert cancelled == CancelledRun(run_id=first, taken=False)
        again = await rig.queue.answer(run.run_id, {"a1": True}, reasons={}, digests=digests)
        assert again == f"{run.run_id}~2"
        assert await rig.queue.status(again) == "queued"
    assert (await rig.take()).run_id == again
    await rig.finish(again, "completed")


async def test_only_a_waiting_run_is_answered(rig: Rig) -> None:
    unknown = new_id()
    with pytest.raises(SessionStateError) as never:
        await rig.queue.answer(unknown, {"a1": True}, reasons={})
    assert str(never.value) == f"run {unknown} does not wait for approval (its status is unknown)"
    run = _run()
    async with rig.busy():
        await rig.queue.enqueue(run)
        with pytest.raises(SessionStateError) as queued:
            await rig.queue.answer(run.run_id, {"a1": True}, reasons={})
    assert str(queued.value) == (
        f"run {run.run_id} does not wait for approval (its status is queued)"
    )
    await rig.take()
    await rig.finish(run.run_id, "completed")
    with pytest.raises(SessionStateError, match=r"\(its status is completed\)"):
        await rig.queue.answer(run.run_id, {"a1": True}, reasons={})


async def test_wait_names_a_run_that_did_not_settle(rig: Rig) -> None:
    run = _run()
    async with rig.busy():
        await rig.queue.enqueue(run)
        with pytest.raises(TimeoutError) as late:
            await rig.queue.wait(run.run_id, 0.01)
    assert str(late.value) == f"run {run.run_id} is still queued after 0 s"
    await rig.take()
    await rig.finish(run.run_id, "max_turns")
