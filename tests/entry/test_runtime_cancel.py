"""Cancelling handles and closing runtimes: real tool processes die, sessions stay resumable."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

from runtime_support import processes_with, state_now, status_now

from rho_adapters.fakes import FunctionModel, ScriptedModel, call, text, tools
from rho_adapters.fakes.scripted_model import Turn
from rho_adapters.store import FileSessionStore, read_trace
from rho_domain import events as ev
from rho_domain.messages import ToolResultMessage
from rho_domain.model import ModelRequest
from rho_domain.run import RunStatus
from rho_entry import (
    AgentConfig,
    HandleStatus,
    Session,
    close_runtime,
    create_runtime,
    dispatch_prompt,
    start_runtime,
)


async def until(condition: object, what: str) -> None:
    """Wait for an outside process to get somewhere (bounded, never asserted on time)."""
    for _ in range(1000):
        if condition():  # type: ignore[operator]
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"gave up waiting for {what}")


def sleeper() -> tuple[str, Turn]:
    """A unique long sleep (its argument marks the process) and the turn that runs it."""
    marker = f"300.{random.randrange(10**6):06d}"
    return marker, tools(call("bash", {"command": f"sleep {marker}"}))


async def test_cancel_kills_the_running_tool(tmp_path: Path) -> None:
    marker, turn = sleeper()
    runtime = create_runtime(
        AgentConfig(profile="eval", working_dir=str(tmp_path)), model=ScriptedModel([turn])
    )
    await start_runtime(runtime)
    handle = await dispatch_prompt(runtime, "sleep")
    await until(lambda: processes_with(marker), "the tool's process to start")
    assert handle.status is HandleStatus.RUNNING
    handle.cancel()
    result = await asyncio.wait_for(handle.wait(), 60)  # the sleep would take 300 s
    assert result.status is RunStatus.CANCELLED
    assert status_now(handle) is HandleStatus.CANCELLED
    assert processes_with(marker) == []
    await close_runtime(runtime)


async def test_cancelling_a_queued_handle_never_runs_it(tmp_path: Path) -> None:
    gate = asyncio.Event()

    async def slow(request: ModelRequest) -> Turn:
        await gate.wait()
        return text("done")

    model = FunctionModel(slow)
    runtime = create_runtime(AgentConfig(working_dir=str(tmp_path)), model=model, max_concurrent=1)
    async with runtime:
        running = await dispatch_prompt(runtime, "first", new_session=True)
        queued = await dispatch_prompt(runtime, "second", new_session=True)
        await asyncio.sleep(0)
        assert queued.status is HandleStatus.QUEUED
        queued.cancel()
        assert (await queued).status is RunStatus.CANCELLED
        gate.set()
        assert (await running).status is RunStatus.COMPLETED
    assert len(model.requests) == 1


async def test_close_runtime_leaves_every_session_resumable(tmp_path: Path) -> None:
    store = FileSessionStore(tmp_path / "sessions")
    markers, turns = zip(*(sleeper() for _ in range(3)), strict=True)

    def script(request: ModelRequest) -> Turn:
        prompt = request.messages[-1]
        index = int(str(prompt.content)[-1])  # type: ignore[union-attr]
        turn: Turn = turns[index]
        return turn

    runtime = create_runtime(
        AgentConfig(profile="eval", working_dir=str(tmp_path)),
        model=FunctionModel(script),
        store=store,
    )
    await start_runtime(runtime)
    handles = [await dispatch_prompt(runtime, f"task {i}", new_session=True) for i in range(3)]
    for marker in markers:
        await until(lambda m=marker: processes_with(m), "every tool to start")
    await close_runtime(runtime, deadline=10)
    assert [h.status for h in handles] == [HandleStatus.CANCELLED] * 3
    assert all(processes_with(m) == [] for m in markers)
    for handle in handles:
        trace = read_trace(store.session_dir(handle.session_id) / "trace.jsonl").events
        assert isinstance(trace[-1], ev.RunEnded)
        assert trace[-1].status is RunStatus.CANCELLED
        resumed = await Session.resume(  # the resumer names the profile again
            handle.session_id,
            store=store,
            overrides={"profile": "eval"},
            model=ScriptedModel([text("picked up")]),
        )
        result = await resumed.run("go on")
        await resumed.close()
        assert result.text == "picked up"
        results = [m for m in resumed.state.messages if isinstance(m, ToolResultMessage)]
        assert len(results) == 1
        assert results[0].is_error


async def test_draining_lets_running_handles_finish(tmp_path: Path) -> None:
    gate = asyncio.Event()

    async def slow(request: ModelRequest) -> Turn:
        await gate.wait()
        return text("finished in time")

    runtime = create_runtime(AgentConfig(working_dir=str(tmp_path)), model=FunctionModel(slow))
    await start_runtime(runtime)
    handle = await dispatch_prompt(runtime, "work")
    closing = asyncio.ensure_future(close_runtime(runtime, deadline=30, drain=True))
    await asyncio.sleep(0)
    assert runtime.state == "closing"
    assert not closing.done()
    gate.set()
    await closing
    assert (await handle).text == "finished in time"
    assert state_now(runtime) == "closed"
