"""The runtime API as a service uses it: dispatch, await, status, approvals, back-pressure."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from runtime_support import status_now

from rho_adapters.fakes import (
    FunctionModel,
    MemoryExecutor,
    MemorySessionStore,
    ScriptedModel,
    call,
    text,
    tools,
)
from rho_adapters.fakes.scripted_model import Turn
from rho_adapters.store.directive_lines import add_directive
from rho_domain.errors import ConfigError, RuntimeClosed, RuntimeFull, SessionStateError
from rho_domain.messages import UserMessage
from rho_domain.model import ModelRequest
from rho_entry import (
    AgentConfig,
    ApprovalInterrupt,
    HandleStatus,
    RunStatus,
    SessionStore,
    close_runtime,
    create_runtime,
    dispatch_prompt,
    run_prompt,
    start_runtime,
)


def last_prompt(request: ModelRequest) -> str:
    users = [m.content for m in request.messages if isinstance(m, UserMessage)]
    return str(users[-1])


class GatedModel:
    """A FunctionModel whose answers wait for ``open()``; counts calls in flight."""

    def __init__(self) -> None:
        self.gate = asyncio.Event()
        self.in_flight = 0
        self.most_in_flight = 0
        self.model = FunctionModel(self._answer)

    async def _answer(self, request: ModelRequest) -> Turn:
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            await self.gate.wait()
        finally:
            self.in_flight -= 1
        return text(f"answer to {last_prompt(request)}")


async def settle() -> None:
    """Let every ready task run until nothing changes (no timing involved)."""
    for _ in range(50):
        await asyncio.sleep(0)


async def test_dispatch_returns_at_once_and_await_gives_the_result(tmp_path: Path) -> None:
    gated = GatedModel()
    runtime = create_runtime(AgentConfig(working_dir=str(tmp_path)), model=gated.model)
    await start_runtime(runtime)
    handle = await dispatch_prompt(runtime, "one")
    await settle()
    assert handle.status is HandleStatus.RUNNING
    assert runtime.get_handle(handle.session_id) is handle
    assert not handle.done
    gated.gate.set()
    result = await handle
    assert result.status is RunStatus.COMPLETED
    assert result.text == "answer to one"
    assert result.session_id == handle.session_id
    assert status_now(handle) is HandleStatus.COMPLETED
    assert handle.done
    assert runtime.handles == ()
    assert runtime.get_handle(handle.session_id) is None
    assert (await run_prompt(runtime, "two")).text == "answer to two"
    await close_runtime(runtime)


async def test_not_started_and_closed_runtimes_refuse_dispatches(tmp_path: Path) -> None:
    runtime = create_runtime(AgentConfig(working_dir=str(tmp_path)), model=ScriptedModel([]))
    with pytest.raises(RuntimeClosed, match="start_runtime"):
        _ = await dispatch_prompt(runtime, "too early")
    await start_runtime(runtime)
    await close_runtime(runtime)
    with pytest.raises(RuntimeClosed, match="closed"):
        _ = await dispatch_prompt(runtime, "too late")
    with pytest.raises(ConfigError, match="max_concurrent"):
        create_runtime(AgentConfig(working_dir=str(tmp_path)), max_concurrent=0)


async def test_concurrency_is_bounded_and_a_full_runtime_raises(tmp_path: Path) -> None:
    gated = GatedModel()
    runtime = create_runtime(
        AgentConfig(working_dir=str(tmp_path)),
        model=gated.model,
        max_concurrent=2,
        max_queued=1,
        when_full="raise",
    )
    await start_runtime(runtime)
    handles = [await dispatch_prompt(runtime, f"p{i}", new_session=True) for i in range(3)]
    await settle()
    assert [h.status for h in handles] == [
        HandleStatus.RUNNING,
        HandleStatus.RUNNING,
        HandleStatus.QUEUED,
    ]
    with pytest.raises(RuntimeFull, match="2 running and 1 queued"):
        # bounded: if the runtime waited instead of raising, the test fails rather than hangs
        _ = await asyncio.wait_for(dispatch_prompt(runtime, "one too many", new_session=True), 30)
    gated.gate.set()
    results = [await h for h in handles]
    assert [r.text for r in results] == ["answer to p0", "answer to p1", "answer to p2"]
    assert gated.most_in_flight == 2
    await close_runtime(runtime)


async def test_a_full_runtime_makes_dispatch_wait_for_room(tmp_path: Path) -> None:
    gated = GatedModel()
    runtime = create_runtime(
        AgentConfig(working_dir=str(tmp_path)), model=gated.model, max_concurrent=1, max_queued=0
    )
    await start_runtime(runtime)
    first = await dispatch_prompt(runtime, "first", new_session=True)
    waiting = asyncio.ensure_future(dispatch_prompt(runtime, "second", new_session=True))
    await settle()
    assert not waiting.done()  # back-pressure: the caller waits
    gated.gate.set()
    assert (await first).text == "answer to first"
    second = await waiting
    assert (await second).text == "answer to second"
    assert gated.most_in_flight == 1
    await close_runtime(runtime)


async def test_many_runtimes_and_handles_share_one_loop(tmp_path: Path) -> None:
    def echo(request: ModelRequest) -> Turn:
        return text(f"echo {last_prompt(request)}")

    runtimes = [
        create_runtime(
            AgentConfig(working_dir=str(tmp_path)), model=FunctionModel(echo), max_concurrent=3
        )
        for _ in range(3)
    ]
    for runtime in runtimes:
        await start_runtime(runtime)
    handles = [
        await dispatch_prompt(runtime, f"{r}-{i}", new_session=True)
        for r, runtime in enumerate(runtimes)
        for i in range(20)
    ]
    results = await asyncio.gather(*(h.wait() for h in handles))
    assert [res.text for res in results] == [f"echo {r}-{i}" for r in range(3) for i in range(20)]
    assert len({res.session_id for res in results}) == 60
    await asyncio.gather(*(close_runtime(runtime) for runtime in runtimes))


async def test_approvals_are_answered_through_the_handle(tmp_path: Path) -> None:
    executor = MemoryExecutor()
    write = call("write", {"path": "a.md", "content": "# A"})
    runtime = create_runtime(
        AgentConfig(profile="developer", working_dir=str(tmp_path)),
        model=ScriptedModel([tools(write), text("written")]),
        executor=executor,
        store=MemorySessionStore(),
    )
    async with runtime:
        handle = await dispatch_prompt(runtime, "write a.md")
        first = await handle
        assert first.status is RunStatus.AWAITING_APPROVAL
        assert handle.status is HandleStatus.AWAITING_APPROVAL
        assert [p.call.id for p in handle.pending_approvals] == [write.id]
        with pytest.raises(SessionStateError, match="no-such-call"):
            handle.approve("no-such-call")
        handle.approve(write.id)
        final = await handle
        assert final.status is RunStatus.COMPLETED
        assert final.text == "written"
        assert handle.pending_approvals == ()
        with pytest.raises(SessionStateError, match="completed"):
            handle.approve(write.id)
    assert executor.files == {"a.md": b"# A"}


async def test_a_denied_call_does_not_run(tmp_path: Path) -> None:
    executor = MemoryExecutor()
    write = call("write", {"path": "a.md", "content": "# A"})
    runtime = create_runtime(
        AgentConfig(profile="developer", working_dir=str(tmp_path)),
        model=ScriptedModel([tools(write)]),
        executor=executor,
    )
    async with runtime:
        handle = await dispatch_prompt(runtime, "write a.md")
        await handle
        handle.deny(write.id)
        assert (await handle.wait_done()).status is RunStatus.COMPLETED
    assert executor.files == {}


async def test_a_runtime_approval_callback_answers_every_session(tmp_path: Path) -> None:
    asked: list[str] = []

    async def approve_writes(tool_name: str, args: object) -> bool:
        asked.append(tool_name)
        return tool_name == "write"

    executor = MemoryExecutor()
    runtime = create_runtime(
        AgentConfig(profile="developer", working_dir=str(tmp_path)),
        model=ScriptedModel([tools(call("write", {"path": "a.md", "content": "x"})), text("done")]),
        executor=executor,
        approval_callback=approve_writes,
    )
    async with runtime:
        result = await run_prompt(runtime, "write")
    assert result.status is RunStatus.COMPLETED
    assert asked == ["write"]
    assert executor.files == {"a.md": b"x"}


async def test_continuing_a_stored_session_by_id(tmp_path: Path) -> None:
    store = MemorySessionStore()
    runtime = create_runtime(
        AgentConfig(working_dir=str(tmp_path)),
        model=FunctionModel(lambda r: text(f"seen {len(r.messages)} messages")),
        store=store,
    )
    async with runtime:
        first = await run_prompt(runtime, "hello")
        second = await run_prompt(runtime, "again", session_id=first.session_id)
        holding = await dispatch_prompt(runtime, "third", session_id=first.session_id)
        with pytest.raises(SessionStateError, match=r"in use .*get_handle\("):
            _ = await dispatch_prompt(runtime, "clash", session_id=first.session_id)
        await holding
    assert second.session_id == first.session_id
    assert second.text == "seen 3 messages"
    no_store = create_runtime(AgentConfig(working_dir=str(tmp_path)), model=ScriptedModel([]))
    async with no_store:
        with pytest.raises(ConfigError, match="needs a store"):
            _ = await dispatch_prompt(no_store, "x", session_id=first.session_id)


async def test_a_stored_session_is_continued_only_by_its_exact_id(tmp_path: Path) -> None:
    """``session_id=`` was resolved as a person's reference is at the CLI: a unique prefix
    or ``latest`` ran the prompt in another session than the one named (seen: 'b9a7' and
    'latest' both ran in b9a79f4d83bf), and a service passes its callers' ids. Now a prefix
    is refused (opened by its whole spelling, ``=ID``, which names no session: nothing is
    opened, nothing run), and an id that is not plain (``latest``, a path) before anything is
    opened."""
    store = MemorySessionStore()
    runtime = create_runtime(
        AgentConfig(working_dir=str(tmp_path)),
        model=FunctionModel(lambda r: text(last_prompt(r))),
        store=store,
    )
    async with runtime:
        first = await run_prompt(runtime, "hello", new_session=True)
        sid = first.session_id
        prefixed = await run_prompt(runtime, "prefix", session_id=sid[:4])
        for shorthand in ("latest", f"../{sid}"):
            with pytest.raises(ConfigError, match=r"not a stored session's exact id"):
                _ = await dispatch_prompt(runtime, "shorthand", session_id=shorthand)
    assert prefixed.status is RunStatus.ERROR
    assert prefixed.error == (
        f"session_id={sid[:4]!r} is not a stored session's exact id: dispatch_prompt "
        "continues a session by its whole id (a prefix, latest or a path is the CLI's "
        "shorthand); nothing was run"
    )
    runs = [e for e in store.events(sid) if e.kind == "run_start"]
    assert len(runs) == 1  # the session named by the prefix ran nothing more


async def test_a_session_that_cannot_open_ends_its_handle_in_error(tmp_path: Path) -> None:
    runtime = create_runtime(
        AgentConfig(working_dir=str(tmp_path)), model=ScriptedModel([]), store=MemorySessionStore()
    )
    async with runtime:
        result = await run_prompt(runtime, "x", session_id="nosuchsession")
    assert result.status is RunStatus.ERROR
    assert result.error_type == "SessionNotFound"


async def test_record_events_puts_the_run_events_on_the_result(tmp_path: Path) -> None:
    runtime = create_runtime(
        AgentConfig(working_dir=str(tmp_path)),
        model=ScriptedModel([text("hello there")]),
        record_events=True,
    )
    async with runtime:
        result = await run_prompt(runtime, "hi")
    kinds = [e.kind for e in result.events]
    assert kinds[0] == "run_start"
    assert kinds[-1] == "run_end"
    assert "text_delta" in kinds


async def test_deferred_approvals_and_run_prompt_release_the_session(tmp_path: Path) -> None:
    def defer_writes(tool_name: str, args: object) -> bool:
        if tool_name == "write":
            raise ApprovalInterrupt
        return True

    store = MemorySessionStore()
    executor = MemoryExecutor()
    write = call("write", {"path": "a.md", "content": "# A"})
    runtime = create_runtime(
        AgentConfig(profile="developer", working_dir=str(tmp_path)),
        model=ScriptedModel([tools(write), text("written"), tools(write), text("new topic")]),
        executor=executor,
        store=store,
        approval_callback=defer_writes,
    )
    async with runtime:
        handle = await dispatch_prompt(runtime, "write a.md")
        assert (await handle).status is RunStatus.AWAITING_APPROVAL
        handle.approve(write.id)
        assert (await handle).text == "written"
        # run_prompt returns the awaiting result and releases the session for a later prompt.
        waiting = await run_prompt(runtime, "write again")
        assert waiting.status is RunStatus.AWAITING_APPROVAL
        assert runtime.handles == ()
        later = await run_prompt(runtime, "never mind", session_id=waiting.session_id)
    assert later.text == "new topic"
    assert executor.files == {"a.md": b"# A"}


def test_settings_that_would_do_nothing_cannot_be_set(tmp_path: Path) -> None:
    runtime = create_runtime(AgentConfig(working_dir=str(tmp_path)), model=ScriptedModel([]))
    with pytest.raises(AttributeError):
        runtime.max_concurrent = 1000  # type: ignore[misc]
    with pytest.raises(AttributeError):
        runtime.queue_size = 3  # type: ignore[attr-defined]


async def test_cancelling_a_continuation_that_waits_for_a_slot(tmp_path: Path) -> None:
    gate = asyncio.Event()
    write = call("write", {"path": "a.md", "content": "# A"})

    async def model(request: ModelRequest) -> Turn:
        if last_prompt(request) == "write":
            return tools(write)
        await gate.wait()
        return text("busy done")

    executor = MemoryExecutor()
    runtime = create_runtime(
        AgentConfig(profile="developer", working_dir=str(tmp_path)),
        model=FunctionModel(model),
        executor=executor,
        max_concurrent=1,
    )
    async with runtime:
        writer = await dispatch_prompt(runtime, "write", new_session=True)
        assert (await writer).status is RunStatus.AWAITING_APPROVAL
        busy = await dispatch_prompt(runtime, "busy", new_session=True)  # takes the only slot
        await settle()
        writer.approve(write.id)
        await settle()
        assert writer.status is HandleStatus.QUEUED
        writer.cancel()  # must not wait for the slot to end
        final = await asyncio.wait_for(writer.wait_done(), 30)
        assert final.status is RunStatus.CANCELLED
        gate.set()
        await busy
    assert executor.files == {}


async def test_approvals_left_by_an_earlier_runtime_are_answered_through_a_new_handle(
    tmp_path: Path,
) -> None:
    store = SessionStore(tmp_path / "sessions")
    executor = MemoryExecutor()
    write = call("write", {"path": "a.md", "content": "# A"})
    config = AgentConfig(profile="developer", working_dir=str(tmp_path))
    before = create_runtime(
        config, model=ScriptedModel([tools(write)]), store=store, executor=executor
    )
    async with before:
        waiting = await run_prompt(before, "write a.md")
    assert waiting.status is RunStatus.AWAITING_APPROVAL
    # A later process (a new runtime on the same store) takes the human's answer.
    after = create_runtime(
        config, model=ScriptedModel([text("written")]), store=store, executor=executor
    )
    async with after:
        with pytest.raises(ConfigError, match="needs a prompt"):
            _ = await dispatch_prompt(after, None)
        handle = await dispatch_prompt(after, None, session_id=waiting.session_id)
        assert (await handle).status is RunStatus.AWAITING_APPROVAL
        assert [p.call.id for p in handle.pending_approvals] == [write.id]
        handle.approve(write.id)
        assert (await handle.wait_done()).text == "written"
    assert executor.files == {"a.md": b"# A"}


async def test_a_reopen_of_a_finished_conversation_sends_no_model_call(tmp_path: Path) -> None:
    """Two servers over one store answer one waiting call: each sees it pending in the
    store and reopens the session (``prompt=None``); the second opens it once the first has
    run it to its end. Before, that reopen continued the finished conversation: the model
    was asked again, for a run nobody asked for. Now the handle ends at once, with no run."""
    store = SessionStore(tmp_path / "sessions")
    executor = MemoryExecutor()
    write = call("write", {"path": "a.md", "content": "# A"})
    config = AgentConfig(profile="developer", working_dir=str(tmp_path))
    models = [ScriptedModel([tools(write)]), ScriptedModel([text("written")])]
    for model in models:  # asked, then answered by the first server
        async with create_runtime(config, model=model, store=store, executor=executor) as one:
            if model is models[0]:
                sid = (await run_prompt(one, "write a.md")).session_id
                continue
            handle = await dispatch_prompt(one, None, session_id=sid)
            await handle
            handle.approve(write.id)
            assert (await handle.wait_done()).status is RunStatus.COMPLETED
    trace = (tmp_path / "sessions" / sid / "trace.jsonl").read_bytes()
    unasked = FunctionModel(lambda request: text("a continuation nobody asked for"))
    async with create_runtime(config, model=unasked, store=store, executor=executor) as second:
        handle = await dispatch_prompt(second, None, session_id=sid)
        result = await handle.wait_done()
    assert (result.status, result.text, handle.pending_approvals) == (RunStatus.COMPLETED, "", ())
    assert unasked.requests == []
    assert (tmp_path / "sessions" / sid / "trace.jsonl").read_bytes() == trace


async def test_a_reopen_of_a_finished_conversation_delivers_a_queued_directive(
    tmp_path: Path,
) -> None:
    """``monitor directive`` on an idle session whose model has answered: the directive waits
    for the session's next run, which applies it before its model call. A reopen without a
    prompt is that run; before, the reopen took the conversation for finished and ended
    ``completed`` with no run, the directive left unread."""
    store = SessionStore(tmp_path / "sessions")
    config = AgentConfig(profile="developer", working_dir=str(tmp_path))
    async with create_runtime(config, model=ScriptedModel([text("done")]), store=store) as one:
        sid = (await run_prompt(one, "hi")).session_id
    add_directive(tmp_path / "sessions" / sid, "check the nginx logs too")
    model = FunctionModel(lambda request: text(f"seen: {last_prompt(request)}"))
    async with create_runtime(config, model=model, store=store) as two:
        result = await (await dispatch_prompt(two, None, session_id=sid)).wait_done()
        assert result.text == "seen: [Directive from the operator]\ncheck the nginx logs too"
        again = await (await dispatch_prompt(two, None, session_id=sid)).wait_done()
    assert (again.status, again.text, len(model.requests)) == (RunStatus.COMPLETED, "", 1)


async def test_a_handle_awaiting_approval_gives_its_place_back(tmp_path: Path) -> None:
    write = call("write", {"path": "a.md", "content": "# A"})
    runtime = create_runtime(
        AgentConfig(profile="developer", working_dir=str(tmp_path)),
        model=FunctionModel(
            lambda r: tools(write) if last_prompt(r) == "write" else text("other done")
        ),
        executor=MemoryExecutor(),
        max_concurrent=1,
        max_queued=0,
        when_full="raise",
    )
    async with runtime:
        waiting = await dispatch_prompt(runtime, "write", new_session=True)
        assert (await waiting).status is RunStatus.AWAITING_APPROVAL
        other = await dispatch_prompt(
            runtime, "other", new_session=True
        )  # not RuntimeFull: nobody runs
        assert (await other).text == "other done"
        assert waiting.status is HandleStatus.AWAITING_APPROVAL


def test_a_runtime_used_from_a_second_event_loop_says_to_make_one_per_loop(
    tmp_path: Path,
) -> None:
    runtime = create_runtime(
        AgentConfig(working_dir=str(tmp_path)), model=ScriptedModel([text("one")] * 2)
    )

    async def first() -> str:
        await start_runtime(runtime)
        return (await run_prompt(runtime, "first")).text

    assert asyncio.run(first()) == "one"

    async def second() -> None:
        _ = await dispatch_prompt(runtime, "from another loop")

    with pytest.raises(SessionStateError, match=r"another event loop.*runtime on each loop"):
        asyncio.run(second())

    async def close_elsewhere() -> None:
        await close_runtime(runtime)

    with pytest.raises(SessionStateError, match=r"close_runtime: .*another event loop"):
        asyncio.run(close_elsewhere())
