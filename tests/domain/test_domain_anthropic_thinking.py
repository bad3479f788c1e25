"""Claude extended thinking with tools: thinking and redacted_thinking blocks, signatures
included, are kept in State and the trace and sent back unchanged, against a fake Messages API
that refuses what the real one refuses (issue 29, item 1)."""

from __future__ import annotations

import json
import random
from typing import Any

import httpx
import pytest
from domain_support import EchoTool, make_session

from rho_adapters.codec import decode_event_line, encode_event_line
from rho_adapters.fakes import FakeClock, MemorySessionStore, WireTransport, wire_call
from rho_adapters.fakes.anthropic_messages import (
    ClaudeReply,
    FakeAnthropic,
    redacted,
    refusal,
    say,
    signature,
    think,
    use,
)
from rho_adapters.fakes.wire import raw_reply, tool_reply
from rho_adapters.model import AnthropicModel, OpenAIChatModel, RetryPolicy
from rho_adapters.model.endpoint import ModelEndpoint
from rho_adapters.model.pool import ClientPool
from rho_domain import events as ev
from rho_domain.loop.session import Session
from rho_domain.messages import AssistantMessage, ThinkingBlock
from rho_domain.run import RunStatus
from rho_domain.state import State


def claude(server: httpx.AsyncBaseTransport) -> AnthropicModel:
    return AnthropicModel(
        model="claude-sonnet-4-5",
        endpoint=ModelEndpoint(api_key="sk-ant", retry=RetryPolicy(max_retries=0)),
        http=ClientPool(transport=server),
        clock=FakeClock(),
        rng=random.Random(1),
    )


def session_on(
    model: Any,
    *,
    effort: str | None = "low",
    store: MemorySessionStore | None = None,
    state: State | None = None,
) -> Session:
    """A real session (the domain loop, the echo tool) on ``model``."""
    base = make_session([], tools=[EchoTool()], reasoning_effort=effort)
    return Session(
        base.agent, model=model, executor=base.executor, clock=base.clock, store=store, state=state
    )


def echo(text: str, call_id: str) -> Any:
    return wire_call("echo", {"text": text}, call_id=call_id)


def assistant_turns(body: dict[str, Any]) -> list[list[dict[str, Any]]]:
    return [m["content"] for m in body["messages"] if m["role"] == "assistant"]


async def test_a_tool_loop_with_thinking_sends_each_turns_signed_blocks_back() -> None:
    server = FakeAnthropic(
        [
            ClaudeReply(think("I should echo a."), say("Echoing."), use(echo("a", "toolu_1"))),
            ClaudeReply(redacted(), use(echo("b", "toolu_2"))),
            ClaudeReply(think("Both echoed."), say("Done: a, b.")),
        ]
    )
    session = session_on(claude(server))

    result = await session.run("echo a then b")

    assert server.refusals == []
    assert result.status is RunStatus.COMPLETED, result.error
    assert result.text == "Done: a, b."
    first, second = assistant_turns(server.requests[2])
    assert first[0] == {
        "type": "thinking",
        "thinking": "I should echo a.",
        "signature": signature("I should echo a."),
    }
    assert [b["type"] for b in first] == ["thinking", "text", "tool_use"]
    assert second[0]["type"] == "redacted_thinking"
    assert second[0]["data"].startswith("redacted:")
    # The request body asked for thinking: the blocks travel only because of it.
    assert server.requests[2]["thinking"]["type"] == "enabled"


async def test_interleaved_thinking_between_calls_goes_back_in_its_place() -> None:
    server = FakeAnthropic(
        [
            ClaudeReply(
                think("First a."),
                use(echo("a", "toolu_1")),
                think("Then b."),
                use(echo("b", "toolu_2")),
            ),
            ClaudeReply(think("Done."), say("ok")),
        ]
    )
    result = await session_on(claude(server)).run("go")

    assert server.refusals == []
    assert result.status is RunStatus.COMPLETED, result.error
    (turn,) = assistant_turns(server.requests[1])
    assert [(b["type"], b.get("thinking", b.get("id"))) for b in turn] == [
        ("thinking", "First a."),
        ("tool_use", "toolu_1"),
        ("thinking", "Then b."),
        ("tool_use", "toolu_2"),
    ]


async def test_the_blocks_survive_the_trace_and_a_resume_sends_them_back() -> None:
    """A run paused for approval mid-loop is continued from its stored trace: the thinking
    blocks come back from trace.jsonl's encoding, signatures intact."""
    store = MemorySessionStore()
    server = FakeAnthropic(
        [ClaudeReply(think("Echo it."), use(echo("x", "toolu_1"))), ClaudeReply(say("x echoed"))]
    )
    first = session_on(claude(server), store=store)
    await first.run("echo x", max_turns=1)
    events = [decode_event_line(encode_event_line(e)) for e in store.events(first.id)]
    state = State.from_events(events)
    (message,) = [m for m in state.messages if isinstance(m, AssistantMessage)]
    assert message.thinking == (
        ThinkingBlock(thinking="Echo it.", signature=signature("Echo it.")),
    )

    again = session_on(claude(server), state=state)
    result = await again.run(None)

    assert server.refusals == [], server.refusals
    assert result.status is RunStatus.COMPLETED, result.error
    assert assistant_turns(server.requests[1])[0][0]["signature"] == signature("Echo it.")


async def test_thinking_left_out_of_a_request_is_refused_as_the_real_api_refuses_it() -> None:
    """The fake holds the line the bug crossed: a tool-use turn without its thinking."""
    body: dict[str, Any] = {
        "thinking": {"type": "enabled", "budget_tokens": 2048},
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "go"}]},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t1", "name": "echo", "input": {}}],
            },
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1"}]},
        ],
    }
    problem = refusal(body)
    assert problem is not None
    assert problem.startswith("messages.1.content.0.type: Expected `thinking`")
    assert "a final `assistant` message must start with a thinking block" in problem

    body["messages"][1]["content"].insert(
        0, {"type": "thinking", "thinking": "t", "signature": "forged"}
    )
    assert refusal(body) == "messages.1.content.0: Invalid `signature` in `thinking` block"


async def test_the_refusal_reaches_the_user_in_the_real_error_shape() -> None:
    server = FakeAnthropic([])
    bad = {"type": "thinking", "thinking": "t", "signature": "forged"}
    response = await server.handle_async_request(
        httpx.Request(
            "POST",
            "https://api.anthropic.com/v1/messages",
            json={"messages": [{"role": "assistant", "content": [bad]}]},
        )
    )
    assert response.status_code == 400
    assert json.loads(response.content) == {
        "type": "error",
        "error": {
            "type": "invalid_request_error",
            "message": "messages.0.content.0: Invalid `signature` in `thinking` block",
        },
    }


async def test_without_thinking_no_thinking_block_is_sent() -> None:
    """A session that thought earlier and now runs without thinking sends plain turns (the
    API refuses thinking in a final turn when thinking is off, and ignores it elsewhere)."""
    server = FakeAnthropic(
        [ClaudeReply(think("Echo."), use(echo("a", "toolu_1"))), ClaudeReply(say("ok"))]
    )
    session = session_on(claude(server))
    await session.run("go", max_turns=1)
    plain = session_on(claude(server), effort=None, state=session.state)
    result = await plain.run(None)

    assert result.status is RunStatus.COMPLETED, result.error
    assert "thinking" not in server.requests[1]
    assert [b["type"] for b in assistant_turns(server.requests[1])[0]] == ["tool_use"]


async def test_reasoning_content_from_an_openai_server_is_kept_but_never_sent_back() -> None:
    """The OpenAI-compatible side: a streamed ``reasoning_content`` does not break the loop,
    and no Anthropic block (nor the reasoning) goes back to an OpenAI-style server."""

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return b"data: " + json.dumps({"choices": [choice]}).encode() + b"\n\n"

    transport = WireTransport(
        [
            tool_reply(echo("a", "call_1"), reasoning="I will echo."),
            raw_reply(
                chunk({"role": "assistant", "reasoning_content": "It echoed."}),
                chunk({"content": "done"}),
                chunk({}, finish="stop"),
                b"data: [DONE]\n\n",
            ),
        ]
    )
    model = OpenAIChatModel(
        model="m",
        endpoint=ModelEndpoint(base_url="http://fake.test/v1", api_key="k"),
        http=ClientPool(transport=transport),
    )
    session = session_on(model)
    session.state.apply(
        ev.MessageAdded(
            at=FakeClock().now(),
            message=AssistantMessage(
                text="earlier",
                reasoning="thought",
                thinking=(ThinkingBlock(thinking="t", signature="s"),),
            ),
        )
    )
    result = await session.run("go")

    assert result.status is RunStatus.COMPLETED, result.error
    sent = json.dumps(transport.requests)
    assert "thinking" not in sent
    assert '"signature"' not in sent
    assert transport.requests[0]["messages"][1] == {"role": "assistant", "content": "earlier"}
    assert result.text == "done"
    kept = [m for m in session.state.messages if isinstance(m, AssistantMessage)]
    assert [m.reasoning for m in kept] == ["thought", "I will echo.", "It echoed."]


@pytest.mark.parametrize("effort", ["low", "high"])
def test_forcing_a_tool_with_thinking_is_refused_by_the_fake(effort: str) -> None:
    assert refusal({"thinking": {"type": "enabled"}, "tool_choice": {"type": "any"}}) == (
        "Thinking may not be enabled when `tool_choice` forces tool use."
    )


async def test_a_repeat_nudge_after_tool_results_keeps_the_turn_valid_with_thinking() -> None:
    """The stuck-loop note is a user text after the tool results: it joins their user turn,
    and the thinking of the turn that made the calls still goes back."""
    replies = [
        ClaudeReply(think(f"Echo again {n}."), use(echo("a", f"toolu_{n}"))) for n in range(3)
    ]
    server = FakeAnthropic([*replies, ClaudeReply(think("Enough."), say("a"))])
    result = await session_on(claude(server)).run("echo a")

    assert server.refusals == [], server.refusals
    assert result.status is RunStatus.COMPLETED, result.error
    last_user = server.requests[3]["messages"][-1]["content"]
    assert [b["type"] for b in last_user] == ["tool_result", "text"]
    assert "You are repeating yourself" in last_user[1]["text"]
    assert server.requests[3]["messages"][-2]["content"][0]["type"] == "thinking"


async def test_thinking_turned_on_mid_loop_waits_for_the_next_user_turn() -> None:
    """A session resumed with thinking inside a tool loop made without it: the API would
    refuse the turn (it has no thinking block), so thinking starts with the next prompt."""
    server = FakeAnthropic(
        [
            ClaudeReply(use(echo("a", "toolu_1"))),
            ClaudeReply(say("a")),
            ClaudeReply(think("Now I think."), say("b")),
        ]
    )
    plain = session_on(claude(server), effort=None)
    await plain.run("echo a", max_turns=1)
    thinking = session_on(claude(server), state=plain.state)

    first = await thinking.run(None)
    second = await thinking.run("and b?")

    assert server.refusals == [], server.refusals
    assert (first.status, second.status) == (RunStatus.COMPLETED, RunStatus.COMPLETED)
    assert "thinking" not in server.requests[1]
    assert server.requests[2]["thinking"]["type"] == "enabled"
