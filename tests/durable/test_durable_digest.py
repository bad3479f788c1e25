"""A durable approval answers the call its answerer was shown: the answer on the queue carries
the call's digest, and the worker that resumes the session from the store checks it against
the call the trace holds then. A trace rewritten between the showing and the worker's run
(as whoever can write the store could), or an approval without a digest (queued by an older
version, or forged into the queue), runs nothing: the call waits again. Before the digest,
each of these ran the rewritten command."""

from __future__ import annotations

import asyncio
import importlib.util
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from durable_support import (
    Rig,
    answer,
    bash,
    durable_runtime,
    queue_here,
    rho,
    shown_in,
    trace,
    worker_rig,
)

from rho_domain.errors import CallChanged
from rho_entry.durable.queueing import open_queue

if importlib.util.find_spec("dbos") is None:  # found, not imported: dbos costs 0.65 s
    pytest.skip("the durable extra (dbos) is not installed", allow_module_level=True)

SCRIPTS = {
    "cli": [bash("echo shown > cli.txt", "d1"), answer("done")],
    "stale": [bash("echo shown > stale.txt", "d1"), answer("done")],
    "old": [bash("echo shown > old.txt", "d1"), answer("done")],
    "handle": [bash("echo shown > handle.txt", "d1"), answer("done")],
    "escape": [bash("echo shown > esc.txt", "d1"), answer("done")],
}


@pytest.fixture(scope="module")
def rig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rig]:
    with worker_rig(tmp_path_factory.mktemp("digest"), "worker-digest", SCRIPTS) as rig:
        yield rig


def _shown(rig: Rig, command: str) -> str:
    """The digest an approver is shown for ``bash`` running ``command``."""
    return shown_in(rig, "bash", f'{{"command": "{command}"}}')


def _rewrite(store: Path, session_id: str, old: str, new: str) -> None:
    """Replace the session's trace as a writer of the store would (a new file)."""
    path = store / session_id / "trace.jsonl"
    text = path.read_text(encoding="utf-8")
    assert old in text
    swapped = path.with_name("trace.new")
    swapped.write_text(text.replace(old, new), encoding="utf-8")
    os.replace(swapped, path)


def _waiting(rig: Rig, prompt: str) -> tuple[str, str]:
    run_id, session_id = queue_here(rig.root, rig.db, "enqueue", prompt).split()
    assert queue_here(rig.root, rig.db, "wait", run_id, "--timeout", "40") == "awaiting_approval"
    return run_id, session_id


def test_queue_approve_refuses_a_call_rewritten_since_it_was_shown(rig: Rig) -> None:
    run_id, session_id = _waiting(rig, "cli: make it")
    digest = _shown(rig, "echo shown > cli.txt")
    _rewrite(rig.store, session_id, "echo shown > cli.txt", "echo pwned > cli.txt")
    store = str(rig.store)

    refused = rho(
        *("queue", "--durable-db", rig.db, "--store", store),
        *("approve", run_id, f"d1@{digest}"),
        cwd=Path.cwd(),
        home=rig.root / "home",
    )
    assert refused.returncode == 1, refused.stdout
    assert "'d1' changed since it was shown" in refused.stderr
    assert "echo pwned > cli.txt" in refused.stderr
    unnamed = rho(
        *("queue", "--durable-db", rig.db, "--store", store, "approve", run_id, "d1"),
        cwd=Path.cwd(),
        home=rig.root / "home",
    )
    assert unnamed.returncode == 1
    now = _shown(rig, "echo pwned > cli.txt")
    assert f"approve {run_id} d1@{now}" in unnamed.stderr  # the call as it waits, to read
    assert queue_here(rig.root, rig.db, "status", run_id) == "awaiting_approval"
    assert not (rig.work / "cli.txt").exists()


def _answered_on_the_queue(rig: Rig, prompt: str, digests: dict[str, str] | None) -> str:
    """Answer d1 of a run waiting for ``prompt`` on the queue directly (no check before the
    worker's), after its trace was rewritten; the continuation's status and session id."""
    run_id, session_id = _waiting(rig, prompt)
    name = prompt.split(":", 1)[0]
    _rewrite(rig.store, session_id, f"echo shown > {name}.txt", f"echo pwned > {name}.txt")

    async def drive() -> str:
        queue = open_queue(rig.db)
        try:
            continued = await queue.answer(run_id, {"d1": True}, reasons={}, digests=digests)
            return await queue.wait(continued, 40)
        finally:
            queue.close()

    assert asyncio.run(drive()) == "awaiting_approval"  # not taken: the call waits again
    assert not (rig.work / f"{name}.txt").exists()
    events = trace(rig.store, session_id)
    assert [e for e in events if e["kind"] == "approval_resolved"] == []
    ends = [e["status"] for e in events if e["kind"] == "run_end"]
    assert ends == ["awaiting_approval", "awaiting_approval"]  # the continuation ran: no call
    return session_id


def test_the_worker_refuses_an_answer_whose_call_changed(rig: Rig) -> None:
    _answered_on_the_queue(rig, "stale: make it", {"d1": _shown(rig, "echo shown > stale.txt")})
    assert "changed since it was shown" in rig.worker.log.read_text()


def test_the_worker_refuses_an_approval_without_a_digest(rig: Rig) -> None:
    _answered_on_the_queue(rig, "old: make it", None)
    assert "carries no digest" in rig.worker.log.read_text()


def test_a_handle_given_the_digest_it_showed_refuses_a_changed_call(rig: Rig) -> None:
    from rho_entry import dispatch_prompt

    async def use_the_runtime() -> tuple[str, str]:
        async with durable_runtime(rig) as runtime:
            handle = await dispatch_prompt(runtime, "handle: make it", durable=True)
            assert await handle.wait(40) == "awaiting_approval"
            shown = _shown(rig, "echo shown > handle.txt")
            _rewrite(rig.store, handle.session_id, "echo shown", "echo pwned")
            with pytest.raises(CallChanged, match="'d1' changed since it was shown"):
                await handle.approve("d1", digests={"d1": shown})
            return handle.session_id, await handle.status() or ""

    session_id, status = asyncio.run(use_the_runtime())
    assert status == "awaiting_approval"  # nothing was put on the queue
    assert not (rig.work / "handle.txt").exists()
    assert [e for e in trace(rig.store, session_id) if e["kind"] == "approval_resolved"] == []


def test_a_rewritten_call_is_shown_escaped_by_the_queue_command(rig: Rig) -> None:
    """``rho-agent queue`` printed its errors as they came, and the refusal of a changed call
    quotes the call as the trace holds it now: whoever rewrote the trace wrote what the
    terminal obeyed (a title, a line erased, text reordered by a bidi override)."""
    run_id, session_id = _waiting(rig, "escape: make it")
    digest = _shown(rig, "echo shown > esc.txt")
    planted = "echo pwned > esc.txt \\u001b[2K\\u001b]0;owned\\u0007\\u202e"
    _rewrite(rig.store, session_id, "echo shown > esc.txt", planted)
    refused = rho(
        *("queue", "--durable-db", rig.db, "--store", str(rig.store)),
        *("approve", run_id, f"d1@{digest}"),
        cwd=Path.cwd(),
        home=rig.root / "home",
    )
    assert refused.returncode == 1, refused.stdout
    assert "'d1' changed since it was shown" in refused.stderr
    assert "echo pwned > esc.txt \\x1b[2K\\x1b]0;owned\\x07\\u202e" in refused.stderr
    assert "\x1b" not in refused.stderr
    assert "\u202e" not in refused.stderr
    assert not (rig.work / "esc.txt").exists()
