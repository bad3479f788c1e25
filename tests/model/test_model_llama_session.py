"""Issue 17 end to end: the domain loop, the real client, and llama-cpp-python's rules.

Overflow is recognised, compacted away with a request that fits, or ends the run with a
"context full" error that names the window; a forced tool choice is sent once per turn.
"""

from __future__ import annotations

import json
from typing import Any

from rho_adapters.fakes import FakeClock, MemoryExecutor, WireTransport
from rho_adapters.fakes.llama_cpp_python import llama_cpp_python_rules, prompt_tokens
from rho_adapters.fakes.wire import Exchange, Reply, call, raw_reply, tool_reply
from rho_adapters.fakes.wire import text_reply as reply
from rho_adapters.model import (
    ClientPool,
    ModelEndpoint,
    OpenAIChatModel,
    RetryPolicy,
    resolve_provider,
)
from rho_domain import events as ev
from rho_domain.agent import Agent
from rho_domain.config import AgentConfig
from rho_domain.loop.session import Session
from rho_domain.messages import AssistantMessage, UserMessage
from rho_domain.permissions import builtin_profile
from rho_domain.run import RunStatus
from rho_domain.state import State
from rho_domain.tools.listing import ListHandler
from rho_domain.tools.registry import ToolRegistry

N_CTX = 1500


def llama_model(
    *replies: Reply, rules: list[Any] | None = None, detect: bool = False
) -> tuple[Any, WireTransport]:
    transport = WireTransport(
        replies, rules=rules if rules is not None else llama_cpp_python_rules(n_ctx=N_CTX)
    )
    model = OpenAIChatModel(
        model="x",
        endpoint=ModelEndpoint(
            base_url="http://127.0.0.1:8000/v1", retry=RetryPolicy(max_retries=2)
        ),
        http=ClientPool(transport=transport),
        provider=None if detect else resolve_provider("llama-cpp-python", None),
        detect=detect,
        clock=FakeClock(),
    )
    return model, transport


def session_with(model: Any, history: list[Any], events: list[ev.Event], **config: Any) -> Session:
    profile = builtin_profile("readonly")
    agent = Agent(
        config=AgentConfig(profile=profile, model="x", **config),
        profile=profile,
        registry=ToolRegistry([ListHandler()]),
        system_prompt="You are a test agent.",
    )
    state = State()
    for message in history:
        state.apply(ev.MessageAdded(at=0, message=message))
    return Session(
        agent,
        model=model,
        executor=MemoryExecutor({"a.txt": "hello"}),
        clock=FakeClock(),
        state=state,
        on_event=events.append,
    )


def long_history(pairs: int) -> list[Any]:
    history: list[Any] = []
    for n in range(pairs):
        history += [
            UserMessage(f"question {n}: " + "why " * 150),
            AssistantMessage(text="because " * 90),
        ]
    return history


def fits(body: dict[str, Any]) -> bool:
    return prompt_tokens(body) + int(body.get("max_tokens") or 0) <= N_CTX


async def test_an_overflow_is_compacted_with_a_request_that_fits_then_answered() -> None:
    model, transport = llama_model(reply("They asked why, five times."), reply("Because."))
    events: list[ev.Event] = []
    session = session_with(model, long_history(5), events)
    result = await session.run("And finally?")
    assert result.status is RunStatus.COMPLETED, result.error
    assert result.text == "Because."
    overflow, summary, answer = transport.requests
    assert not fits(overflow)
    assert (overflow["stream"], overflow["tool_choice"]) == (False, "auto")  # tool turn, (13)
    assert "tools" not in summary  # the schemas would only take room
    assert summary["max_tokens"] == N_CTX // 4
    assert fits(summary)
    assert fits(answer)
    (compacted,) = [e for e in events if isinstance(e, ev.Compacted)]
    assert compacted.trigger == "overflow"
    assert compacted.tokens_after < compacted.tokens_before
    assert await model.context_window() == N_CTX  # learned from the 400


async def test_a_message_larger_than_the_window_ends_the_run_with_context_full() -> None:
    model, transport = llama_model()
    session = session_with(model, [], [])
    result = await session.run("read this: " + "word " * 2000)
    assert result.status is RunStatus.ERROR
    assert result.error_type == "ContextFull"
    assert f"context window is {N_CTX} tokens" in (result.error or "")
    assert "/compact" in (result.error or "")
    assert len(transport.requests) == 1  # nothing to compact: no second try, no loop


async def test_a_summary_that_would_not_shrink_the_context_is_rejected() -> None:
    model, transport = llama_model(reply("so long " * 900))
    events: list[ev.Event] = []
    session = session_with(model, long_history(5), events)
    before = list(session.state.messages)
    result = await session.run("And finally?")
    assert result.error_type == "ContextFull"
    assert "would not make the context smaller" in (result.error or "")
    assert not [e for e in events if isinstance(e, ev.Compacted)]
    assert session.state.messages[: len(before)] == before
    assert len(transport.requests) == 2  # the overflow and the one summary request


async def test_overflow_with_auto_compaction_off_says_how_to_continue() -> None:
    model, transport = llama_model()
    session = session_with(model, long_history(5), [], auto_compact=False)
    result = await session.run("And finally?")
    assert result.error_type == "ContextFull"
    assert "auto-compaction is off" in (result.error or "")
    assert len(transport.requests) == 1


def props(n_ctx: int) -> Any:
    """llama.cpp's /props, for a server that says its window up front."""

    def rule(exchange: Exchange) -> Reply | None:
        if exchange.path == "/props":
            settings = {"default_generation_settings": {"n_ctx": n_ctx}}
            return raw_reply(json.dumps(settings).encode())
        return None

    return rule


async def test_the_window_the_server_reports_triggers_compaction_before_any_overflow() -> None:
    rules = [props(N_CTX), *llama_cpp_python_rules(n_ctx=N_CTX)]
    model, transport = llama_model(
        reply("Summary: why, five times."), reply("Done."), rules=rules, detect=True
    )
    events: list[ev.Event] = []
    session = session_with(model, long_history(5), events)  # configured window: 100,000
    result = await session.run("And finally?")
    assert result.status is RunStatus.COMPLETED, result.error
    assert model.provider.name == "llamacpp"  # /props said so
    # The 4-characters estimate let the first summary request overflow (an empty 200 stream,
    # then the 400 without streaming); the server's count in the 400 corrected the ratio,
    # and the refitted summary request and the answer fit.
    assert [(fits(b), b["stream"]) for b in transport.requests] == [
        (False, True),
        (False, False),
        (True, True),
        (True, True),  # llama-server streams tool turns
    ]
    assert "tools" not in transport.requests[2]
    (compacted,) = [e for e in events if isinstance(e, ev.Compacted)]
    assert compacted.trigger == "auto"


async def test_a_forced_tool_choice_is_sent_once_per_turn() -> None:
    model, transport = llama_model(tool_reply(call("list", {"path": "."})), reply("a.txt"))
    session = session_with(model, [], [], tool_choice="list")
    result = await session.run("What is here?")
    assert result.status is RunStatus.COMPLETED, result.error
    first, second = transport.requests
    assert first["tool_choice"] == {"type": "function", "function": {"name": "list"}}
    assert first["stream"] is True  # a named choice streams on this server (10, 15)
    assert (second["tool_choice"], second["stream"]) == ("auto", False)
    assert second["messages"][2]["content"] == ""
