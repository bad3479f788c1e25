"""Answers of durable approvals (issue 31 corners): "always" holds for the rest of the run
through every continuation, and two answers of one waiting run (two servers at the same
moment: both find the same last run) are never collapsed into one silently: the same
answers again get the continuation already enqueued, other answers are refused naming it."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from durable_support import Worker, answer, bash, trace

from rho_adapters.fakes.loopback import LoopbackServer
from rho_adapters.fakes.wire import call, tool_reply
from rho_domain.errors import SessionStateError
from rho_entry.durable.queueing import enqueue_prompt, open_queue

pytest.importorskip("dbos")

SCRIPTS = {
    # a1 is answered "always"; a2 (bash again) must not be asked; a3 is a write, asked
    "always": [
        bash("echo one > one.txt", "a1"),
        bash("echo two > two.txt", "a2"),
        tool_reply(call("write", {"path": "three.txt", "content": "3\n"}, "a3")),
        bash("echo four > four.txt", "a4"),  # after a3's continuation: still always
        answer("all four"),
    ],
    "both": [
        tool_reply(
            call("write", {"path": "b1.txt", "content": "1\n"}, "b1"),
            call("write", {"path": "b2.txt", "content": "2\n"}, "b2"),
        ),
        answer("both written"),
    ],
}


@pytest.fixture(scope="module")
def server() -> Iterator[LoopbackServer]:
    from durable_support import scripted

    with LoopbackServer([], rules=[scripted(SCRIPTS)]) as running:
        yield running


def test_always_allows_the_tool_in_every_later_continuation_of_the_run(
    tmp_path: Path, server: LoopbackServer
) -> None:
    db = str(tmp_path / "runs.sqlite")
    worker = Worker(tmp_path, "worker-always", db=db, base_url=server.base_url, profile="developer")

    async def drive() -> tuple[str, list[str]]:
        queue = open_queue(db)
        try:
            run = await enqueue_prompt(queue, "always: go")
            seen = [await queue.wait(run.run_id, 40)]
            first = await queue.answer(run.run_id, {"a1": True}, reasons={}, always=("bash",))
            seen.append(await queue.wait(first, 40))  # a3, a write, is asked; a2 was not
            second = await queue.answer(first, {"a3": True}, reasons={})
            seen.append(await queue.wait(second, 40))  # a4, bash: still always
            return run.session_id, seen
        finally:
            queue.close()

    try:
        worker.wait_ready()
        session_id, seen = asyncio.run(drive())
    finally:
        worker.stop()
    assert seen == ["awaiting_approval", "awaiting_approval", "completed"]
    work = tmp_path / "work"
    assert [(work / n).read_text() for n in ("one.txt", "two.txt", "three.txt", "four.txt")] == [
        "one\n",
        "two\n",
        "3\n",
        "four\n",
    ]
    events = trace(tmp_path / "store", session_id)
    asked = [e["call"]["id"] for e in events if e["kind"] == "approval_requested"]
    assert asked == ["a1", "a3"]
    resolved = [(e["call_id"], e["always"]) for e in events if e["kind"] == "approval_resolved"]
    assert resolved == [("a1", True), ("a3", False)]


def test_two_answers_of_one_waiting_run_never_collapse_silently(
    tmp_path: Path, server: LoopbackServer
) -> None:
    db = str(tmp_path / "runs.sqlite")
    worker = Worker(tmp_path, "worker-both", db=db, base_url=server.base_url, profile="developer")

    async def drive() -> tuple[str, str, str, str, str]:
        queue = open_queue(db)
        other = open_queue(db)  # the second server: its own client
        try:
            run = await enqueue_prompt(queue, "both: write")
            assert await queue.wait(run.run_id, 40) == "awaiting_approval"
            first = await queue.answer(run.run_id, {"b1": True}, reasons={})
            again = await other.answer(run.run_id, {"b1": True}, reasons={})  # a retry
            with pytest.raises(SessionStateError) as refused:
                await other.answer(run.run_id, {"b2": False}, reasons={"b2": "not that"})
            waits = await queue.wait(first, 40)  # b2 is still to be answered: it asks again
            last = await other.answer(first, {"b2": True}, reasons={})
            return first, again, str(refused.value), waits, await queue.wait(last, 40)
        finally:
            queue.close()
            other.close()

    try:
        worker.wait_ready()
        first, again, refused, waits, final = asyncio.run(drive())
    finally:
        worker.stop()
    assert again == first
    assert f"already answered (b1: yes); its continuation {first} runs" in refused
    assert "not this one (b2: no (not that))" in refused
    assert (waits, final) == ("awaiting_approval", "completed")
    work = tmp_path / "work"
    assert (work / "b1.txt").read_text() == "1\n"
    assert (work / "b2.txt").read_text() == "2\n"
