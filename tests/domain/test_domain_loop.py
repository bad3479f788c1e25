"""The agent loop, driven through the fakes: tool loop, statuses, events, errors."""

from __future__ import annotations

import pytest
from domain_support import BrokenTool, EchoTool, make_session

from rho_adapters.fakes import MemorySessionStore, Turn, call, text, tools
from rho_domain import events as ev
from rho_domain.config import DEFAULT_MAX_TURNS, Budget
from rho_domain.errors import RateLimited, SessionStateError
from rho_domain.messages import AssistantMessage, ToolResultMessage
from rho_domain.run import RunStatus


async def test_tool_loop_runs_tools_until_a_turn_without_calls() -> None:
    echo = EchoTool()
    session = make_session(
        [tools(call("echo", {"text": "a"})), tools(call("echo", {"text": "b"})), text("done")],
        tools=[echo],
    )
    result = await session.run("go")
    assert result.status is RunStatus.COMPLETED
    assert result.text == "done"
    assert [c["text"] for c in echo.calls] == ["a", "b"]
    results = [m for m in session.state.messages if isinstance(m, ToolResultMessage)]
    assert [r.content for r in results] == ["a", "b"]
    # each request carries the tool results of the previous turn
    requests = session.model.requests  # type: ignore[attr-defined]
    assert isinstance(requests[1].messages[-1], ToolResultMessage)
    assert [s.name for s in requests[0].tools] == ["echo"]


async def test_text_that_comes_with_tool_calls_is_kept_in_history() -> None:
    session = make_session([tools(call("echo", {"text": "x"}), text="Let me check."), text("ok")])
    await session.run("go")
    assistant = session.state.messages[1]
    assert isinstance(assistant, AssistantMessage)
    assert assistant.text == "Let me check."
    assert assistant.tool_calls[0].name == "echo"


async def test_parallel_calls_in_one_turn_all_get_results_in_order() -> None:
    session = make_session(
        [tools(call("echo", {"text": "1"}), call("echo", {"text": "2"})), text("ok")]
    )
    await session.run("go")
    kinds = [type(m).__name__ for m in session.state.messages]
    assert kinds == [
        "UserMessage",
        "AssistantMessage",
        "ToolResultMessage",
        "ToolResultMessage",
        "AssistantMessage",
    ]


async def test_multi_turn_runs_share_history_and_usage_is_per_run() -> None:
    session = make_session(
        [
            text("one", input_tokens=10, output_tokens=1),
            text("two", input_tokens=20, output_tokens=2),
        ]
    )
    first = await session.run("a")
    second = await session.run("b")
    assert first.usage.input_tokens == 10
    assert second.usage.input_tokens == 20
    assert second.session_usage.input_tokens == 30
    assert [m.content for m in session.state.user_messages()] == ["a", "b"]
    assert session.state.run_count == 2


async def test_max_turns_ends_with_its_own_status_and_a_run_end_event() -> None:
    seen: list[ev.Event] = []
    session = make_session([tools(call("echo", {"text": "x"}))] * 3, max_turns=2)
    result = await session.run("loop", on_event=seen.append)
    assert result.status is RunStatus.MAX_TURNS
    assert isinstance(seen[-1], ev.RunEnded)
    assert seen[-1].status == "max_turns"
    assert result.usage.estimated
    assert result.usage.input_tokens > 0


async def test_model_error_ends_the_run_with_error_and_keeps_partial_text() -> None:
    error = RateLimited("slow down", retry_after=3)
    session = make_session([Turn(text="partial answer", error=error)])
    result = await session.run("go")
    assert result.status is RunStatus.ERROR
    assert result.error_type == "RateLimited"
    last = session.state.messages[-1]
    assert isinstance(last, AssistantMessage)
    assert last.text.startswith("partial answer")


async def test_a_cut_stream_is_an_error_not_a_silent_success() -> None:
    session = make_session([Turn(text="half", cut=True)])
    result = await session.run("go")
    assert result.status is RunStatus.ERROR
    assert result.error_type == "TruncatedStream"


async def test_script_exhaustion_is_a_clear_error() -> None:
    session = make_session([tools(call("echo", {"text": "x"}))])
    result = await session.run("go")
    assert result.status is RunStatus.ERROR
    assert "no turn left" in (result.error or "")


async def test_budget_on_tokens_ends_the_run() -> None:
    turns = [tools(call("echo", {"text": "x"}), input_tokens=600, output_tokens=10)] * 5
    session = make_session(turns, budget=Budget(max_input_tokens=1000))
    result = await session.run("go")
    assert result.status is RunStatus.BUDGET_EXCEEDED
    assert result.usage.input_tokens == 1200


async def test_budget_on_cost_and_wall_clock() -> None:
    from rho_domain.messages import Usage

    priced = Turn(
        tool_calls=(call("echo", {"text": "x"}),),
        usage=Usage(input_tokens=1, output_tokens=1, cost_usd=0.6),
    )
    session = make_session([priced] * 3, budget=Budget(max_cost_usd=1.0))
    assert (await session.run("go")).status is RunStatus.BUDGET_EXCEEDED

    slow = make_session([tools(call("echo", {"text": "x"}))] * 3, budget=Budget(max_wall_seconds=5))
    clock = slow.clock
    original = slow.model.stream

    def advancing(request):  # type: ignore[no-untyped-def]
        clock.advance(3)  # type: ignore[attr-defined]
        return original(request)

    slow.model.stream = advancing  # type: ignore[method-assign]
    assert (await slow.run("go")).status is RunStatus.BUDGET_EXCEEDED


async def test_events_reach_sync_and_async_callbacks_and_the_iterator() -> None:
    sync_seen: list[str] = []
    async_seen: list[str] = []

    async def on_async(event: ev.Event) -> None:
        async_seen.append(event.kind)

    session = make_session([tools(call("echo", {"text": "x"}), text="hm"), text("final answer")])
    session.journal.listeners.append(lambda e: sync_seen.append(e.kind))
    await session.run("go", on_event=on_async)
    assert sync_seen == async_seen
    for kind in (
        "run_start",
        "llm_start",
        "text_delta",
        "tool_call_delta",
        "tool_start",
        "tool_end",
        "llm_end",
        "usage",
        "message",
        "run_end",
    ):
        assert kind in sync_seen

    streamed = make_session([text("streamed")])
    kinds = [e.kind async for e in streamed.stream("go")]
    assert kinds[0] == "run_start"
    assert kinds[-1] == "run_end"
    assert streamed.last_result is not None
    assert streamed.last_result.text == "streamed"


async def test_every_persistent_event_is_stored_and_deltas_are_not() -> None:
    store = MemorySessionStore()
    session = make_session([tools(call("echo", {"text": "x"})), text("ok")], store=store)
    await session.run("go")
    kinds = [e.kind for e in store.events(session.id)]
    assert "text_delta" not in kinds
    assert "tool_call_delta" not in kinds
    assert kinds[0] == "run_start"
    assert kinds[-1] == "run_end"
    assert (await store.list())[0].first_prompt == "go"


async def test_a_failing_store_ends_the_run_in_error_and_loses_nothing() -> None:
    from rho_domain.errors import StoreError
    from rho_domain.state import State

    class FullDisk(MemorySessionStore):
        fail_on_assistant = False

        async def append(self, session_id, events):  # type: ignore[no-untyped-def]
            if self.fail_on_assistant and any(
                isinstance(e, ev.MessageAdded) and isinstance(e.message, AssistantMessage)
                for e in events
            ):
                raise StoreError("No space left on device")
            await super().append(session_id, events)

    store = FullDisk()
    session = make_session([text("one"), text("two")], store=store)
    await session.run("a")
    store.fail_on_assistant = True
    result = await session.run("b")
    assert result.status is RunStatus.ERROR
    assert "No space left" in (result.error or "")
    store.fail_on_assistant = False
    await session.close()  # flushes what could not be written
    replayed = State.from_events(store.events(session.id))
    assert replayed.messages == session.state.messages
    assert replayed.messages[-1] == AssistantMessage(text="two")


async def test_handler_bug_becomes_a_result_and_the_loop_continues() -> None:
    session = make_session([tools(call("broken")), text("recovered")], tools=[BrokenTool()])
    result = await session.run("go")
    assert result.status is RunStatus.COMPLETED
    failure = session.state.messages[2]
    assert isinstance(failure, ToolResultMessage)
    assert failure.is_error
    assert "ZeroDivisionError" in failure.content


async def test_concurrent_runs_are_refused() -> None:
    session = make_session([Turn(hang=True)])
    import asyncio

    task = asyncio.create_task(session.run("go"))
    await asyncio.sleep(0)
    with pytest.raises(SessionStateError):
        await session.run("again")
    session.cancel()
    assert (await task).status is RunStatus.CANCELLED


async def test_run_without_prompt_on_an_empty_session_is_an_error() -> None:
    result = await make_session([text("x")]).run()
    assert result.status is RunStatus.ERROR
    assert result.error_type == "SessionStateError"


async def test_a_window_smaller_than_the_prompt_and_tools_is_refused_naming_the_minimum() -> None:
    """Issue 16: ``--context-window 10`` looped forever; now no model call is made."""
    session = make_session([text("never")], context_window=10)
    result = await session.run("hi")
    assert result.status is RunStatus.ERROR
    assert result.error_type == "ConfigError"
    assert "--context-window" in (result.error or "")
    assert "context_window" in (result.error or "")
    assert "at least" in (result.error or "")
    assert session.model.requests == []  # type: ignore[attr-defined]


async def test_max_turns_has_a_default_and_zero_means_no_limit() -> None:
    """Issue 16: without a limit a model that never stops calling tools never ended."""
    # The same call over and over would end the run "stuck" first (test_domain_stuck.py):
    # the repeat guard is off here, to reach the turn limit.
    looping = [tools(call("echo", {"text": "x"}))] * (DEFAULT_MAX_TURNS + 5)
    session = make_session(looping, repeat_limit=0)
    assert session.agent.config.max_turns == DEFAULT_MAX_TURNS
    result = await session.run("loop")
    assert result.status is RunStatus.MAX_TURNS
    assert len(session.model.requests) == DEFAULT_MAX_TURNS  # type: ignore[attr-defined]
    unlimited = make_session([*looping, text("done")], max_turns=0, repeat_limit=0)
    assert (await unlimited.run("loop")).status is RunStatus.COMPLETED
    per_run = make_session([*looping, text("done")], repeat_limit=0)
    assert (await per_run.run("loop", max_turns=0)).status is RunStatus.COMPLETED


async def test_a_broken_call_counts_its_usage_keeps_reasoning_and_sets_the_text() -> None:
    """Issue 16: a stream cut mid-answer counted no usage, dropped the partial reasoning and
    left ``RunResult.text`` empty although the partial answer had been shown."""
    session = make_session([Turn(text="half an answer", reasoning="thinking...", cut=True)])
    result = await session.run("go")
    assert result.status is RunStatus.ERROR
    assert result.text == "half an answer"
    assert result.usage.input_tokens > 0
    assert result.usage.estimated
    last = session.state.messages[-1]
    assert isinstance(last, AssistantMessage)
    assert last.text.startswith("half an answer")
    assert last.reasoning == "thinking..."


async def test_an_answer_cut_at_the_output_limit_inside_a_call_runs_none_and_says_why() -> None:
    # corners25: an answer that stopped at the output limit (finish_reason length) inside
    # its last call's arguments ran the whole calls before it and told the model of the cut
    # one only "arguments are not valid JSON ... Fix the arguments and call again": the same
    # long call again, cut at the same place, until max_turns. A cut answer that is whole
    # JSON (the limit met exactly at its end) runs as before.
    from rho_domain.not_run import CUT_AT_LIMIT

    echo = EchoTool()
    cut = Turn(
        tool_calls=(call("echo", {"text": "a"}), call("echo", '{"text": "a long fi')),
        finish_reason="length",
    )
    whole = Turn(tool_calls=(call("echo", {"text": "b"}),), finish_reason="length")
    session = make_session([cut, whole, text("done")], tools=[echo])
    result = await session.run("go")
    assert result.status is RunStatus.COMPLETED
    assert [c["text"] for c in echo.calls] == ["b"]
    results = [m for m in session.state.messages if isinstance(m, ToolResultMessage)]
    assert [(r.content, r.is_error) for r in results] == [
        (CUT_AT_LIMIT, True),
        (CUT_AT_LIMIT, True),
        ("b", False),
    ]
