"""Durable approvals: a run that needs one ends ``awaiting_approval`` and holds no worker
slot (a worker of concurrency 1 runs another run meanwhile); a third process answers with
``rho-agent queue approve RUN all`` and the session continues on the worker, which runs the
approved write."""

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
    queue_command,
    queue_here,
    trace,
    worker_rig,
)

from rho_adapters.fakes.wire import call, tool_reply
from rho_entry.durable.queueing import enqueue_prompt, open_queue

if importlib.util.find_spec("dbos") is None:  # found, not imported: dbos costs 0.65 s
    pytest.skip("the durable extra (dbos) is not installed", allow_module_level=True)

SCRIPTS = {
    "ask": [bash("echo approved > made.txt", "a1"), answer("made it")],
    "ask-api": [bash("echo approved > api.txt", "a1"), answer("made it")],
    "other": [tool_reply(call("list", {"path": "."}, "o1")), answer("listed meanwhile")],
}


@pytest.fixture(scope="module")
def rig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rig]:
    with worker_rig(
        tmp_path_factory.mktemp("approvals"), "worker-ask", SCRIPTS, concurrency=1
    ) as rig:
        yield rig


def test_an_approval_answered_from_a_third_process_wakes_the_run(rig: Rig) -> None:
    root, db, store = rig.root, rig.db, rig.store
    # enqueue and wait in this process; the answer from a process of its own
    run_id, session_id = queue_here(root, db, "enqueue", "ask: make it").split()
    assert queue_here(root, db, "wait", run_id, "--timeout", "40") == "awaiting_approval"
    assert not (rig.work / "made.txt").exists()

    async def other() -> str:  # the waiting run holds no slot of the one the worker has
        queue = open_queue(db)
        try:
            run = await enqueue_prompt(queue, "other: meanwhile")
            return await queue.wait(run.run_id, 40)
        finally:
            queue.close()

    assert asyncio.run(other()) == "completed"
    assert not (rig.work / "made.txt").exists()
    continued = queue_command(root, db, "--store", str(store), "approve", run_id, "all")
    assert continued == f"{run_id}~1"
    assert queue_here(root, db, "wait", continued, "--timeout", "40") == "completed"
    assert (rig.work / "made.txt").read_text() == "approved\n"
    events = trace(store, session_id)
    resolved = [e for e in events if e["kind"] == "approval_resolved"]
    assert [(e["call_id"], e["approved"]) for e in resolved] == [("a1", True)]
    assert [e["status"] for e in events if e["kind"] == "run_end"] == [
        "awaiting_approval",
        "completed",
    ]
    assert [e["run_id"] for e in events if e["kind"] == "run_start"] == [run_id, continued]


def test_dispatch_prompt_durable_waits_and_approves_through_its_handle(rig: Rig) -> None:
    from rho_entry import dispatch_prompt

    async def use_the_runtime() -> tuple[str, str, str, tuple[str, ...]]:
        async with durable_runtime(rig) as runtime:
            handle = await dispatch_prompt(runtime, "ask-api: from the API", durable=True)
            first = await handle.wait(40)
            waiting = await handle.pending_approvals()
            await handle.approve()  # every waiting call
            return handle.session_id, first, await handle.wait(40), waiting

    session_id, first, then, waiting = asyncio.run(use_the_runtime())
    assert (first, then, waiting) == ("awaiting_approval", "completed", ("a1",))
    assert (rig.work / "api.txt").read_text() == "approved\n"
    assert [e["status"] for e in trace(rig.store, session_id) if e["kind"] == "run_end"] == [
        "awaiting_approval",
        "completed",
    ]
