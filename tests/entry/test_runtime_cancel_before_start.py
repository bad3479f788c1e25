"""A handle cancelled before its run began: the prompt is recorded, the run ends cancelled.

Before (round 24), ``RunControl.start`` forgot the cancel (a stale cancel must not stop a later
run) and the handle wrote nothing: the prompt was lost and a stored session stayed ``created``
(a server's dashboard row went from ``running`` back to ``created`` after its 202 to a
cancel), and a handle cancelled before its task's first step was never done (``await handle``
hung). Each moment is held by a gate, never by time: the task not begun, waiting for a slot,
and the session opening (a store whose ``open`` waits).
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from rho_adapters.fakes import FunctionModel, MemorySessionStore, text
from rho_adapters.fakes.scripted_model import Turn
from rho_domain import events as ev
from rho_domain.messages import UserMessage
from rho_domain.model import ModelRequest
from rho_domain.ports.store import SessionRecord
from rho_domain.run import RunStatus
from rho_entry import AgentConfig, AgentHandle, create_runtime, dispatch_prompt

HANG = 60  # a bound against a hang only (the handle that was never done), never a speed


class OpeningStore(MemorySessionStore):
    """A memory store whose ``open`` waits for ``gate``: the handle's session is opening."""

    def __init__(self) -> None:
        super().__init__()
        self.opening = asyncio.Event()
        self.gate = asyncio.Event()

    async def open(self, session_id: str) -> tuple[SessionRecord, tuple[ev.Event, ...]]:
        self.opening.set()
        await self.gate.wait()
        return await super().open(session_id)


def recorded(store: MemorySessionStore, handle: AgentHandle) -> list[tuple[str, object]]:
    """The session's stored events as (kind, what each says of the cancel)."""
    said: list[tuple[str, object]] = []
    for event in store.events(handle.session_id):
        if isinstance(event, ev.RunStarted):
            said.append((event.kind, event.prompt))
        elif isinstance(event, ev.Interrupted):
            said.append((event.kind, event.detail))
        elif isinstance(event, ev.RunEnded):
            said.append((event.kind, event.status))
        else:
            said.append((event.kind, None))
    return said


def cancelled_at_start(prompt: str) -> list[tuple[str, object]]:
    return [
        ("run_start", prompt),
        ("interruption", "before the run's first step"),
        ("run_end", RunStatus.CANCELLED),
    ]


async def test_a_prompt_cancelled_before_its_run_began_is_recorded(tmp_path: Path) -> None:
    gate = asyncio.Event()

    async def answer(request: ModelRequest) -> Turn:
        await gate.wait()
        return text("done")

    model = FunctionModel(answer)
    store = OpeningStore()
    config = AgentConfig(working_dir=str(tmp_path))
    runtime = create_runtime(config, model=model, store=store, max_concurrent=1)
    async with runtime:
        # not begun: cancelled in the same step as its dispatch (its task never ran)
        store.gate.set()
        unbegun = await dispatch_prompt(runtime, "never begun", new_session=True)
        unbegun.cancel()
        assert (await asyncio.wait_for(unbegun.wait_done(), HANG)).status is RunStatus.CANCELLED
        # queued: waiting for the one slot, which a run holds
        running = await dispatch_prompt(runtime, "first", new_session=True)
        queued = await dispatch_prompt(runtime, "second", new_session=True)
        await asyncio.sleep(0)  # its task begins and waits for the slot
        queued.cancel()
        assert (await asyncio.wait_for(queued.wait_done(), HANG)).status is RunStatus.CANCELLED
        gate.set()
        assert (await running).status is RunStatus.COMPLETED
        # opening: a stored session (as a server stores one) whose open is held
        store.gate.clear()
        stored = SessionRecord(id="stored-1", created_at=time.time(), config=config)
        await store.create(stored)
        await store.release(stored.id)
        opening = await dispatch_prompt(runtime, "while opening", session_id=stored.id)
        await store.opening.wait()
        opening.cancel()
        store.gate.set()
        assert (await asyncio.wait_for(opening.wait_done(), HANG)).status is RunStatus.CANCELLED
        # a reopening without a prompt asks nothing the store does not hold: nothing written
        # (the stored session's events, asserted below, are the cancelled run's alone)
        store.gate.clear()
        store.opening.clear()
        reopened = await dispatch_prompt(runtime, None, session_id=stored.id)
        await store.opening.wait()
        reopened.cancel()
        store.gate.set()
        assert (await asyncio.wait_for(reopened.wait_done(), HANG)).status is RunStatus.CANCELLED

    assert recorded(store, unbegun) == cancelled_at_start("never begun")
    assert recorded(store, queued) == cancelled_at_start("second")
    assert recorded(store, opening) == cancelled_at_start("while opening")
    asked = [m.content for r in model.requests for m in r.messages if isinstance(m, UserMessage)]
    assert asked == ["first"]  # nothing else reached the model
    listed = {info.id: info for info in await store.list()}
    for handle in (unbegun, queued, opening):
        assert listed[handle.session_id].status == "cancelled"
    assert listed[opening.session_id].first_prompt == "while opening"
