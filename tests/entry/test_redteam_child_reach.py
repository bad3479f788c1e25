"""A delegate call continues its own sub-agent only: the child a parent's trace names is a
session of the store, so a rewritten trace could name any session waiting for an approval."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from rho_adapters.fakes import MemoryExecutor, ScriptedModel, call, text, tools
from rho_adapters.store import FileSessionStore
from rho_domain.config import AgentConfig
from rho_domain.messages import ToolResultMessage
from rho_domain.run import RunStatus
from rho_entry import Agent, Session

VICTIM_WRITE = {"path": "victim.txt", "content": "the victim's unseen write"}


async def _waiting(
    store: FileSessionStore, tmp_path: Path, executor: MemoryExecutor, turns: list[Any]
) -> Session:
    session = Session(
        Agent(AgentConfig(profile="developer", working_dir=str(tmp_path))),
        model=ScriptedModel(turns),
        executor=executor,
        store=store,
        interrupt_on_approval=False,
    )
    assert (await session.run("go")).status is RunStatus.AWAITING_APPROVAL
    await session.close()
    return session


async def test_a_trace_naming_another_session_as_its_child_continues_nothing(
    tmp_path: Path,
) -> None:
    root = tmp_path / "sessions"
    store = FileSessionStore(root)
    executor = MemoryExecutor()
    # Another session of the store (another task, another user's on a server), waiting for
    # its own human to approve its write w1.
    victim = await _waiting(
        store, tmp_path, executor, [tools(call("write", VICTIM_WRITE, id="w1"))]
    )
    parent = await _waiting(
        store, tmp_path, executor,
        [tools(call("delegate", {"instruction": "write"}, id="d1")),
         tools(call("write", {"path": "n.txt", "content": "x"}, id="w1"))],
    )  # fmt: skip
    # The parent's trace rewritten to name the victim as its child (and show the victim's
    # call, so the digest the answerer approves is the victim's).
    trace = root / parent.id / "trace.jsonl"
    edited = []
    for line in trace.read_text().splitlines():
        event = json.loads(line)
        if event["kind"] == "approval_requested" and event.get("child_session_id"):
            event["child_session_id"] = victim.id
            event["child_call"]["arguments"] = json.dumps(VICTIM_WRITE)
        edited.append(json.dumps(event))
    trace.write_text("\n".join(edited) + "\n")
    victim_trace = (root / victim.id / "trace.jsonl").read_bytes()
    resumed = await Session.resume(
        parent.id,
        store=store,
        overrides={"profile": "developer"},
        model=ScriptedModel([text("child: done"), text("parent: done")]),
        executor=executor,
    )
    resumed.resolve_approval("d1", True)
    try:
        await resumed.run()
    finally:
        await resumed.close()
    (answer,) = [
        m.content
        for m in resumed.state.messages
        if isinstance(m, ToolResultMessage) and m.call_id == "d1"
    ]
    assert f"session {victim.id} is not a sub-agent of session {parent.id}" in answer
    assert "victim.txt" not in executor.files
    assert (root / victim.id / "trace.jsonl").read_bytes() == victim_trace


class _Store(FileSessionStore):
    """Its ``open`` of the session ``failing`` names raises an unasked CancelledError."""

    failing = ""

    async def open(self, session_id: str) -> Any:
        if session_id == self.failing:
            raise asyncio.CancelledError("elsewhere")
        return await super().open(session_id)


async def test_an_unasked_cancel_from_the_store_reopening_a_child_is_the_store_s_failure(
    tmp_path: Path,
) -> None:
    """Before: ``SubAgents.resume`` awaited the store's ``open`` (and ``release``) bare: a
    CancelledError nothing asked for left the parent's run as a cancel of its caller (out of
    ``Session.run``, no result). Now the delegate call's error, naming the store."""
    store = _Store(tmp_path / "sessions")
    executor = MemoryExecutor()
    parent = await _waiting(
        store, tmp_path, executor,
        [tools(call("delegate", {"instruction": "write"}, id="d1")),
         tools(call("write", {"path": "n.txt", "content": "x"}, id="w1"))],
    )  # fmt: skip
    resumed = await Session.resume(
        parent.id,
        store=store,
        overrides={"profile": "developer"},
        model=ScriptedModel([text("parent: done")]),
        executor=executor,
    )
    child = next(p.name for p in store.root.iterdir() if p.name != parent.id)
    store.failing = child
    resumed.resolve_approval("d1", True)
    try:
        result = await resumed.run()
    finally:
        await resumed.close()
    assert result.status is RunStatus.COMPLETED  # the delegate call failed, the run went on
    (answer,) = [
        m.content
        for m in resumed.state.messages
        if isinstance(m, ToolResultMessage) and m.call_id == "d1"
    ]
    said = "the sub-agent could not continue: the store test_redteam_child_reach._Store raised"
    assert answer.startswith(f"{said} CancelledError(elsewhere) although nothing cancelled it")
