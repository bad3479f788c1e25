"""A forked parent never continues its parent's waiting sub-agent (note42 left it untested).

A parent waits on its delegate call d1 while the sub-agent waits for the approval of a write.
A fork cannot take the waiting batch (a fork point inside a tool batch is refused); a copy of
the parent's session under another id (a duplicated directory) carries the call, and its
approval is refused by the child's stored parent id: the approval belongs to the original
parent's human, and the child stays untouched for it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from rho_adapters.fakes import MemoryExecutor, ScriptedModel, call, text, tools
from rho_adapters.store import FileSessionStore
from rho_domain.config import AgentConfig
from rho_domain.errors import SessionStateError
from rho_domain.messages import ToolResultMessage
from rho_domain.run import RunStatus
from rho_entry import Agent, Session

CHILD_WRITE = {"path": "n.txt", "content": "the sub-agent's write"}
FORK_ID = "f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0"


async def _waiting_parent(
    store: FileSessionStore, tmp_path: Path, executor: MemoryExecutor
) -> Session:
    parent = Session(
        Agent(AgentConfig(profile="developer", working_dir=str(tmp_path))),
        model=ScriptedModel(
            [
                tools(call("delegate", {"instruction": "write n.txt"}, id="d1")),
                tools(call("write", CHILD_WRITE, id="w1")),
            ]
        ),
        executor=executor,
        store=store,
        interrupt_on_approval=False,
    )
    assert (await parent.run("go")).status is RunStatus.AWAITING_APPROVAL
    await parent.close()
    return parent


def _child_id(root: Path, parent_id: str) -> str:
    for line in (root / parent_id / "trace.jsonl").read_text().splitlines():
        event = json.loads(line)
        if event["kind"] == "approval_requested" and event.get("child_session_id"):
            return str(event["child_session_id"])
    raise AssertionError("the parent waits on no sub-agent")


async def test_a_fork_cannot_take_the_waiting_batch(tmp_path: Path) -> None:
    store = FileSessionStore(tmp_path / "sessions")
    parent = await _waiting_parent(store, tmp_path, MemoryExecutor())
    reopened = await Session.resume(
        parent.id,
        store=store,
        overrides={"profile": "developer"},
        model=ScriptedModel([]),
        executor=MemoryExecutor(),
    )
    try:
        last = len(reopened.state.messages)
        with pytest.raises(SessionStateError, match="inside a tool batch"):
            await reopened.fork(at=last)
    finally:
        await reopened.close()


async def test_a_copied_parent_cannot_approve_the_original_parents_child(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    store = FileSessionStore(root)
    executor = MemoryExecutor()
    parent = await _waiting_parent(store, tmp_path, executor)
    child = _child_id(root, parent.id)
    # The parent's session duplicated under another id, as a copy of its directory is.
    shutil.copytree(root / parent.id, root / FORK_ID)
    meta = json.loads((root / FORK_ID / "meta.json").read_text())
    meta["id"] = FORK_ID
    (root / FORK_ID / "meta.json").write_text(json.dumps(meta))
    child_trace = (root / child / "trace.jsonl").read_bytes()
    forked = await Session.resume(
        FORK_ID,
        store=store,
        overrides={"profile": "developer"},
        model=ScriptedModel([text("child: done"), text("fork: done")]),
        executor=executor,
    )
    forked.resolve_approval("d1", True)
    try:
        await forked.run()
    finally:
        await forked.close()
    (answer,) = [
        m.content
        for m in forked.state.messages
        if isinstance(m, ToolResultMessage) and m.call_id == "d1"
    ]
    assert f"session {child} is not a sub-agent of session {FORK_ID}" in answer
    assert "n.txt" not in executor.files
    assert (root / child / "trace.jsonl").read_bytes() == child_trace
