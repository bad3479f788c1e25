"""An "always" on the queue comes with an approval and holds only when that approval is
taken: the worker that refuses an approval (its call changed since it was shown, or it
carries no digest) does not take the "always" queued with it either. Before, the worker
refused the approval of ``d1`` (rewritten in the store after the showing) but still allowed
its tool for the rest of the run, so the call, asked again at once, was approved by that
"always" and the rewritten command ran: the digest's binding undone by ``--always``."""

from __future__ import annotations

import asyncio
import importlib.util
import os
from collections.abc import Iterator

import pytest
from durable_support import Rig, answer, bash, queue_here, shown_in, trace, worker_rig

from rho_entry.durable.queueing import open_queue

if importlib.util.find_spec("dbos") is None:  # found, not imported: dbos costs 0.65 s
    pytest.skip("the durable extra (dbos) is not installed", allow_module_level=True)

SCRIPTS = {
    "changed": [bash("echo shown > changed.txt", "d1"), answer("done")],
    "unbound": [bash("echo shown > unbound.txt", "d1"), answer("done")],
    "taken": [bash("echo shown > taken.txt", "d1"), answer("done")],
}


@pytest.fixture(scope="module")
def rig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rig]:
    with worker_rig(tmp_path_factory.mktemp("always"), "worker-always", SCRIPTS) as rig:
        yield rig


def _shown(rig: Rig, command: str) -> str:
    return shown_in(rig, "bash", f'{{"command": "{command}"}}')


def _continue(rig: Rig, name: str, *, rewrite: bool, digest: str | None) -> tuple[str, str]:
    """Approve d1 of a run waiting for ``name: make it`` with "always", on the queue (no
    check before the worker's); the continuation's status and the session."""
    run_id, session_id = queue_here(rig.root, rig.db, "enqueue", f"{name}: make it").split()
    assert queue_here(rig.root, rig.db, "wait", run_id, "--timeout", "40") == "awaiting_approval"
    if rewrite:
        path = rig.store / session_id / "trace.jsonl"
        text = path.read_text(encoding="utf-8")
        path.with_name("trace.new").write_text(text.replace("echo shown", "echo pwned"))
        os.replace(path.with_name("trace.new"), path)

    async def drive() -> str:
        queue = open_queue(rig.db)
        try:
            digests = None if digest is None else {"d1": digest}
            continued = await queue.answer(
                run_id, {"d1": True}, reasons={}, always=("bash",), digests=digests
            )
            return await queue.wait(continued, 40)
        finally:
            queue.close()

    return asyncio.run(drive()), session_id


def test_always_with_an_approval_of_a_changed_call_is_not_taken(rig: Rig) -> None:
    status, session_id = _continue(
        rig, "changed", rewrite=True, digest=_shown(rig, "echo shown > changed.txt")
    )
    assert status == "awaiting_approval"  # the call waits again, asked anew
    assert not (rig.work / "changed.txt").exists()  # 'echo pwned' ran before
    events = trace(rig.store, session_id)
    assert [e for e in events if e["kind"] == "tool_start"] == []


def test_always_with_an_approval_without_a_digest_is_not_taken(rig: Rig) -> None:
    status, _ = _continue(rig, "unbound", rewrite=False, digest=None)
    assert status == "awaiting_approval"
    assert not (rig.work / "unbound.txt").exists()


def test_always_with_a_taken_approval_holds(rig: Rig) -> None:
    status, _ = _continue(rig, "taken", rewrite=False, digest=_shown(rig, "echo shown > taken.txt"))
    assert status == "completed"
    assert (rig.work / "taken.txt").read_text() == "shown\n"
