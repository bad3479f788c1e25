"""The runtime's own session (issue 29, item 10; seed 003: ``create_runtime()`` creates a
session and ``run_prompt()`` / ``dispatch_prompt()`` execute prompts through it): prompts
without ``session_id`` continue one conversation, stored or in memory; ``new_session=True``
and explicit ids keep working."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from rho_adapters.fakes import FunctionModel, MemoryExecutor, call, text, tools
from rho_adapters.fakes.scripted_model import Turn
from rho_adapters.store import FileSessionStore, read_trace
from rho_domain import events as ev
from rho_domain.errors import ConfigError, SessionStateError
from rho_domain.messages import UserMessage
from rho_domain.model import ModelRequest
from rho_entry import (
    AgentConfig,
    RunStatus,
    close_runtime,
    create_runtime,
    dispatch_prompt,
    run_prompt,
    start_runtime,
)


def _recalls(request: ModelRequest) -> Turn:
    """Answers with every user message it was sent: the conversation it sees."""
    said = [str(m.content) for m in request.messages if isinstance(m, UserMessage)]
    return text(" | ".join(said))


@pytest.mark.parametrize("stored", [True, False])
async def test_prompts_without_an_id_continue_the_runtimes_own_session(
    tmp_path: Path, stored: bool
) -> None:
    store = FileSessionStore(tmp_path / "sessions") if stored else None
    runtime = create_runtime(
        AgentConfig(working_dir=str(tmp_path)), store=store, model=FunctionModel(_recalls)
    )
    own = runtime.session_id  # created with the runtime: known before any prompt
    await start_runtime(runtime)
    first = await run_prompt(runtime, "my name is Ada")
    second = await run_prompt(runtime, "what is my name?")
    handle = await dispatch_prompt(runtime, "and again?")
    third = await handle
    await close_runtime(runtime)
    assert {first.session_id, second.session_id, third.session_id, handle.session_id} == {own}
    assert second.text == "my name is Ada | what is my name?"
    assert third.text == "my name is Ada | what is my name? | and again?"
    assert third.session_usage.output_tokens > second.session_usage.output_tokens
    if store is not None:
        (directory,) = (tmp_path / "sessions").iterdir()
        assert directory.name == own
        events = read_trace(directory / "trace.jsonl").events
        assert [e.prompt for e in events if isinstance(e, ev.RunStarted)] == [
            "my name is Ada",
            "what is my name?",
            "and again?",
        ]


async def test_new_session_and_explicit_ids_keep_working(tmp_path: Path) -> None:
    store = FileSessionStore(tmp_path / "sessions")
    runtime = create_runtime(
        AgentConfig(working_dir=str(tmp_path)), store=store, model=FunctionModel(_recalls)
    )
    await start_runtime(runtime)
    mine = await run_prompt(runtime, "one")
    apart = await run_prompt(runtime, "two", new_session=True)
    assert apart.session_id not in (mine.session_id, runtime.session_id)
    assert apart.text == "two"  # a conversation of its own
    continued = await run_prompt(runtime, "three", session_id=apart.session_id)
    assert continued.text == "two | three"
    back = await run_prompt(runtime, "four")
    assert (back.session_id, back.text) == (runtime.session_id, "one | four")
    with pytest.raises(ConfigError, match=r"session_id= .* or new_session=True, not both"):
        await run_prompt(runtime, "x", session_id=apart.session_id, new_session=True)
    await close_runtime(runtime)
    assert len(list((tmp_path / "sessions").iterdir())) == 2


async def test_a_busy_own_session_is_refused_with_what_to_do(tmp_path: Path) -> None:
    gate = asyncio.Event()

    async def waits(request: ModelRequest) -> Turn:
        await gate.wait()
        return text("done")

    runtime = create_runtime(AgentConfig(working_dir=str(tmp_path)), model=FunctionModel(waits))
    await start_runtime(runtime)
    running = await dispatch_prompt(runtime, "first")
    with pytest.raises(SessionStateError, match="new_session=True"):
        _ = await dispatch_prompt(runtime, "second")
    beside = await dispatch_prompt(runtime, "beside", new_session=True)
    gate.set()
    assert (await running).status is RunStatus.COMPLETED
    assert (await beside).status is RunStatus.COMPLETED
    await close_runtime(runtime)


async def test_a_call_waiting_in_the_own_session_is_continued_by_prompt_none(
    tmp_path: Path,
) -> None:
    write = call("write", {"path": "a.md", "content": "# A"})
    answers = iter([tools(write), text("written")])
    executor = MemoryExecutor()
    runtime = create_runtime(
        AgentConfig(profile="developer", working_dir=str(tmp_path)),
        model=FunctionModel(lambda request: next(answers)),
        executor=executor,
    )
    await start_runtime(runtime)
    waiting = await run_prompt(runtime, "write a.md")
    assert waiting.status is RunStatus.AWAITING_APPROVAL
    handle = await dispatch_prompt(runtime, None)  # the own session: its waiting call
    await handle
    assert [p.call.id for p in handle.pending_approvals] == [write.id]
    handle.approve(write.id)
    assert (await handle.wait_done()).text == "written"
    assert executor.files["a.md"] == b"# A"
    await close_runtime(runtime)
