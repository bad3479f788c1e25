"""Answers of durable approvals (issue 31 corners): "always" holds for the rest of the run
through every continuation, and two answers of one waiting run (two servers at the same
moment: both find the same last run) are never collapsed into one silently: the same
answers again get the continuation already enqueued, other answers are refused naming it."""

from __future__ import annotations

import asyncio
import importlib.util
from collections.abc import Iterator

import pytest
from durable_support import (
    Rig,
    answer,
    bash,
    durable_runtime,
    queue_here,
    shown_in,
    trace,
    worker_rig,
)

from rho_adapters.fakes.wire import call, tool_reply
from rho_domain.errors import SessionStateError
from rho_domain.ports.durable import CancelledRun
from rho_entry.durable.queueing import enqueue_prompt, open_queue

if importlib.util.find_spec("dbos") is None:  # found, not imported: dbos costs 0.65 s
    pytest.skip("the durable extra (dbos) is not installed", allow_module_level=True)

SCRIPTS = {
    # a1 is answered "always"; a2 (bash again) must not be asked; a3 is a write, asked
    "always": [
        bash("echo one > one.txt", "a1"),
        bash("echo two > two.txt", "a2"),
        tool_reply(call("write", {"path": "three.txt", "content": "3\n"}, "a3")),
        bash("echo four > four.txt", "a4"),  # after a3's continuation: still always
        answer("all four"),
    ],
    # t1 is approved "always" through a handle or `queue approve --always`; t2 is not asked
    # (each its own files: the module's tests share one worker and its directory)
    "twice": [
        bash("echo one > handle-one.txt", "t1"),
        bash("echo two > handle-two.txt", "t2"),
        answer("both echoed"),
    ],
    "twice-cli": [
        bash("echo one > cli-one.txt", "t1"),
        bash("echo two > cli-two.txt", "t2"),
        answer("both echoed"),
    ],
    "both": [
        tool_reply(
            call("write", {"path": "b1.txt", "content": "1\n"}, "b1"),
            call("write", {"path": "b2.txt", "content": "2\n"}, "b2"),
        ),
        answer("both written"),
    ],
    "statuses": [answer("nothing to do")],
    "requeue": [bash("echo r > requeue.txt", "q1"), answer("echoed")],
    "statuses-ask": [bash("echo s > statuses.txt", "s1")],
}


def _of(rig: Rig, call_id: str) -> dict[str, str]:
    """``digests=`` of an answer of ``call_id``: its call as the scripts have it (what an
    approver is shown)."""
    calls = {c.id: c for script in SCRIPTS.values() for r in script for c in r.tool_calls}
    return {call_id: shown_in(rig, calls[call_id].name, calls[call_id].arguments)}


TWICE_CLI = '{"command": "echo one > cli-one.txt"}'


@pytest.fixture(scope="module")
def rig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rig]:
    with worker_rig(tmp_path_factory.mktemp("answers"), "answers", SCRIPTS) as rig:
        yield rig


def test_always_allows_the_tool_in_every_later_continuation_of_the_run(rig: Rig) -> None:
    async def drive() -> tuple[str, list[str]]:
        queue = open_queue(rig.db)
        try:
            run = await enqueue_prompt(queue, "always: go")
            seen = [await queue.wait(run.run_id, 40)]
            first = await queue.answer(
                run.run_id, {"a1": True}, reasons={}, always=("bash",), digests=_of(rig, "a1")
            )
            seen.append(await queue.wait(first, 40))  # a3, a write, is asked; a2 was not
            second = await queue.answer(first, {"a3": True}, reasons={}, digests=_of(rig, "a3"))
            seen.append(await queue.wait(second, 40))  # a4, bash: still always
            return run.session_id, seen
        finally:
            queue.close()

    session_id, seen = asyncio.run(drive())
    assert seen == ["awaiting_approval", "awaiting_approval", "completed"]
    work = rig.work
    assert [(work / n).read_text() for n in ("one.txt", "two.txt", "three.txt", "four.txt")] == [
        "one\n",
        "two\n",
        "3\n",
        "four\n",
    ]
    events = trace(rig.store, session_id)
    asked = [e["call"]["id"] for e in events if e["kind"] == "approval_requested"]
    assert asked == ["a1", "a3"]
    resolved = [(e["call_id"], e["always"]) for e in events if e["kind"] == "approval_resolved"]
    assert resolved == [("a1", True), ("a3", False)]


def test_statuses_reads_many_runs_at_once_as_status_reads_each(rig: Rig) -> None:
    """What ``eval bird --durable`` polls: a completed run, one awaiting approval, one queued
    where no worker consumes, and an id no queue had, each as ``status`` gives it, once."""

    async def drive() -> tuple[list[str], dict[str, str | None], dict[str, str | None]]:
        queue = open_queue(rig.db)
        idle = open_queue(rig.db, queue="nobody-consumes-this")
        try:
            done = await enqueue_prompt(queue, "statuses: done")
            asks = await enqueue_prompt(queue, "statuses-ask: echo")
            stays = await enqueue_prompt(idle, "statuses: never run")
            assert await queue.wait(done.run_id, 40) == "completed"
            assert await queue.wait(asks.run_id, 40) == "awaiting_approval"
            ids = [asks.run_id, "no-such-run", stays.run_id, done.run_id, asks.run_id]
            together = dict(await queue.statuses(ids))
            return ids, together, {i: await queue.status(i) for i in ids}
        finally:
            queue.close()
            idle.close()

    ids, together, each = asyncio.run(drive())
    assert list(together) == list(dict.fromkeys(ids))
    assert together == each
    assert list(together.values()) == ["awaiting_approval", None, "queued", "completed"]


def test_two_answers_of_one_waiting_run_never_collapse_silently(rig: Rig) -> None:
    async def drive() -> tuple[str, str, str, str, str]:
        queue = open_queue(rig.db)
        other = open_queue(rig.db)  # the second server: its own client
        try:
            run = await enqueue_prompt(queue, "both: write")
            assert await queue.wait(run.run_id, 40) == "awaiting_approval"
            first = await queue.answer(run.run_id, {"b1": True}, reasons={}, digests=_of(rig, "b1"))
            again = await other.answer(
                run.run_id, {"b1": True}, reasons={}, digests=_of(rig, "b1")
            )  # a retry
            with pytest.raises(SessionStateError) as refused:
                await other.answer(run.run_id, {"b2": False}, reasons={"b2": "not that"})
            waits = await queue.wait(first, 40)  # b2 is still to be answered: it asks again
            last = await other.answer(first, {"b2": True}, reasons={}, digests=_of(rig, "b2"))
            return first, again, str(refused.value), waits, await queue.wait(last, 40)
        finally:
            queue.close()
            other.close()

    first, again, refused, waits, final = asyncio.run(drive())
    assert again == first
    assert f"already answered (b1: yes); its continuation {first} runs" in refused
    assert "not this one (b2: no (not that))" in refused
    assert (waits, final) == ("awaiting_approval", "completed")
    assert (rig.work / "b1.txt").read_text() == "1\n"
    assert (rig.work / "b2.txt").read_text() == "2\n"


def _asked_once_and_ran_twice(rig: Rig, session_id: str, files: str) -> None:
    """The second bash call ran without asking: only t1 was asked, answered always."""
    written = [(rig.work / f"{files}-{n}.txt").read_text() for n in ("one", "two")]
    assert written == ["one\n", "two\n"]
    events = trace(rig.store, session_id)
    assert [e["call"]["id"] for e in events if e["kind"] == "approval_requested"] == ["t1"]
    resolved = [(e["call_id"], e["always"]) for e in events if e["kind"] == "approval_resolved"]
    assert resolved == [("t1", True)]
    assert [e["status"] for e in events if e["kind"] == "run_end"] == [
        "awaiting_approval",
        "completed",
    ]


def test_a_handle_approves_always_and_the_second_call_runs_without_asking(rig: Rig) -> None:
    from rho_entry import dispatch_prompt

    async def use_the_runtime() -> tuple[str, list[str]]:
        async with durable_runtime(rig) as runtime:
            handle = await dispatch_prompt(runtime, "twice: echo", durable=True)
            seen = [await handle.wait(40)]
            with pytest.raises(SessionStateError, match="does not wait for t9"):
                await handle.approve("t9", always=True)
            await handle.approve("t1", always=True)
            seen.append(await handle.wait(40))
            return handle.session_id, seen

    session_id, seen = asyncio.run(use_the_runtime())
    assert seen == ["awaiting_approval", "completed"]
    _asked_once_and_ran_twice(rig, session_id, "handle")


def test_queue_approve_always_from_another_process_allows_the_tool_for_the_run(rig: Rig) -> None:
    # `rho-agent queue` here, in this process (the worker is the other one);
    # test_durable_approvals.py runs `queue approve` in a process of its own
    root, db, store = rig.root, rig.db, str(rig.store)
    run_id, session_id = queue_here(root, db, "enqueue", "twice-cli: echo").split()
    assert queue_here(root, db, "wait", run_id, "--timeout", "40") == "awaiting_approval"
    continued = queue_here(
        root,
        db,
        "--store",
        store,
        "approve",
        run_id,
        f"t1@{shown_in(rig, 'bash', TWICE_CLI)}",
        "--always",
    )
    assert continued == f"{run_id}~1"
    assert queue_here(root, db, "wait", continued, "--timeout", "40") == "completed"
    _asked_once_and_ran_twice(rig, session_id, "cli")


def test_an_answer_after_its_queued_continuation_was_cancelled_is_taken(rig: Rig) -> None:
    """A continuation cancelled while queued (a server's cancel, ``cancel_queued``) never
    ran, so its call still waits; answering the run again returned that cancelled
    continuation (the same answers: its id, as if taken) and nothing ever ran."""

    async def drive() -> tuple[str, str, CancelledRun | None, str | None]:
        queue = open_queue(rig.db)
        idle = open_queue(rig.db, queue="requeue-idle")  # no worker: continuations wait
        try:
            run = await enqueue_prompt(queue, "requeue: echo")
            assert await queue.wait(run.run_id, 40) == "awaiting_approval"
            digests = _of(rig, "q1")
            first = await idle.answer(run.run_id, {"q1": True}, reasons={}, digests=digests)
            cancelled = await idle.cancel_queued(run.session_id)
            again = await idle.answer(run.run_id, {"q1": True}, reasons={}, digests=digests)
            status = await idle.status(again)
            left = await idle.cancel_queued(run.session_id)  # leave nothing queued
            assert left == CancelledRun(run_id=again, taken=False)
            return first, again, cancelled, status
        finally:
            queue.close()
            idle.close()

    first, again, cancelled, status = asyncio.run(drive())
    assert cancelled == CancelledRun(run_id=first, taken=False)
    assert (again, status) == (first.replace("~1", "~2"), "queued")
