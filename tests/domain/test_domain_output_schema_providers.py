"""The output schema on the wire, by provider row (issue 29, item 2): ``response_format:
json_schema`` where the server takes it (OpenAI with every request; vLLM and llama.cpp only on
a request that cannot call tools, since their constrained decoding leaves no room for a call),
and a forced final tool for Anthropic, whose call comes back as the run's output."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from domain_support import EchoTool, make_session

from rho_adapters.fakes import FakeClock, WireTransport, wire_call
from rho_adapters.fakes.anthropic_messages import ClaudeReply, FakeAnthropic, say, think, use
from rho_adapters.fakes.wire import text_reply, tool_reply
from rho_adapters.model import PROVIDERS, AnthropicModel, OpenAIChatModel, RetryPolicy
from rho_adapters.model.endpoint import ModelEndpoint
from rho_adapters.model.openai_request import build_body
from rho_adapters.model.pool import ClientPool
from rho_domain.loop.session import Session
from rho_domain.messages import UserMessage
from rho_domain.model import ModelRequest, ToolSpec
from rho_domain.run import RunStatus

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"files": {"type": "array", "items": {"type": "string"}}},
    "required": ["files"],
}
ECHO = ToolSpec(name="echo", description="Echo.", parameters={"type": "object"})


def request(**kw: Any) -> ModelRequest:
    return ModelRequest(
        model="m",
        system="s",
        messages=(UserMessage("hi"),),
        tools=(ECHO,),
        output_schema=SCHEMA,
        **kw,
    )


def test_openai_takes_the_schema_beside_the_tools() -> None:
    body = build_body(request(), PROVIDERS["openai"], stream=True)
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "final_answer", "schema": SCHEMA, "strict": False},
    }
    assert [t["function"]["name"] for t in body["tools"]] == ["echo"]


@pytest.mark.parametrize("provider", ["vllm", "llamacpp"])
def test_constrained_decoding_servers_get_it_only_on_a_call_without_tools(provider: str) -> None:
    row = PROVIDERS[provider]
    working = build_body(request(), row, stream=True)
    assert "response_format" not in working
    assert working["tools"]
    answering = build_body(request(tool_choice="none"), row, stream=True)
    assert answering["response_format"]["json_schema"]["schema"] == SCHEMA
    assert "tools" not in answering
    assert "tool_choice" not in answering


@pytest.mark.parametrize("provider", ["generic", "ollama", "groq"])
def test_other_servers_read_the_schema_in_the_prompt_only(provider: str) -> None:
    body = build_body(request(tool_choice="none"), PROVIDERS[provider], stream=True)
    assert "response_format" not in body


async def test_a_vllm_session_corrects_into_a_constrained_answer() -> None:
    transport = WireTransport(
        [
            tool_reply(wire_call("echo", {"text": "a.txt"})),
            text_reply("The files are a.txt."),
            text_reply('{"files": ["a.txt"]}'),
        ]
    )
    model = OpenAIChatModel(
        model="m",
        endpoint=ModelEndpoint(base_url="http://vllm.test/v1", api_key="k"),
        provider=PROVIDERS["vllm"],
        http=ClientPool(transport=transport),
    )
    base = make_session([], tools=[EchoTool()], output_schema=SCHEMA)
    session = Session(base.agent, model=model, executor=base.executor, clock=base.clock)

    result = await session.run("which files?")

    assert result.status is RunStatus.COMPLETED, result.error
    assert result.output == {"files": ["a.txt"]}
    first, second, third = transport.requests
    assert "response_format" not in first
    assert "response_format" not in second
    assert third["response_format"]["json_schema"]["schema"] == SCHEMA
    assert "tools" not in third
    assert "does not match the required JSON Schema at $" in third["messages"][-1]["content"]


def claude(server: FakeAnthropic) -> AnthropicModel:
    return AnthropicModel(
        model="claude-sonnet-4-5",
        endpoint=ModelEndpoint(api_key="k", retry=RetryPolicy(max_retries=0)),
        http=ClientPool(transport=server),
        clock=FakeClock(),
        rng=random.Random(1),
    )


def anthropic_session(server: FakeAnthropic, schema: Any, effort: str | None = None) -> Session:
    base = make_session([], tools=[EchoTool()], output_schema=schema, reasoning_effort=effort)
    return Session(base.agent, model=claude(server), executor=base.executor, clock=base.clock)


def final(value: Any, call_id: str = "toolu_f") -> Any:
    return use(wire_call("final_answer", value, call_id=call_id))


async def test_anthropic_answers_through_the_forced_final_tool() -> None:
    server = FakeAnthropic(
        [
            ClaudeReply(use(wire_call("echo", {"text": "a.txt"}, call_id="toolu_1"))),
            ClaudeReply(final({"files": ["a.txt"]})),
        ]
    )
    result = await anthropic_session(server, SCHEMA).run("which files?")

    assert server.refusals == []
    assert result.status is RunStatus.COMPLETED, result.error
    assert result.output == {"files": ["a.txt"]}
    assert json.loads(result.text) == {"files": ["a.txt"]}
    body = server.requests[0]
    assert body["tool_choice"] == {"type": "any"}  # every turn ends in a tool: the answer too
    (tool,) = [t for t in body["tools"] if t["name"] == "final_answer"]
    assert tool["input_schema"] == SCHEMA
    # the answer came back as text, not as a tool call waiting for a result
    assert server.requests[1]["messages"][-1]["content"][0]["type"] == "tool_result"


async def test_anthropic_wraps_a_schema_that_is_not_an_object() -> None:
    listing = {"type": "array", "items": {"type": "string"}}
    server = FakeAnthropic([ClaudeReply(final({"answer": ["a.txt", "b.txt"]}))])
    result = await anthropic_session(server, listing).run("list")
    assert result.status is RunStatus.COMPLETED, result.error
    assert result.output == ["a.txt", "b.txt"]
    (tool,) = [t for t in server.requests[0]["tools"] if t["name"] == "final_answer"]
    assert tool["input_schema"]["properties"]["answer"] == listing


async def test_anthropic_with_thinking_is_not_forced_and_corrects_to_the_final_tool() -> None:
    server = FakeAnthropic(
        [
            ClaudeReply(think("Answer in words."), say("a.txt")),
            ClaudeReply(think("As JSON then."), final({"files": ["a.txt"]})),
        ]
    )
    result = await anthropic_session(server, SCHEMA, effort="low").run("which files?")

    assert server.refusals == [], server.refusals  # a forced tool with thinking is refused
    assert result.status is RunStatus.COMPLETED, result.error
    assert result.output == {"files": ["a.txt"]}
    assert [b["tool_choice"] for b in server.requests] == [{"type": "auto"}, {"type": "auto"}]


async def test_anthropic_correction_forces_the_final_tool_without_thinking() -> None:
    server = FakeAnthropic(
        [ClaudeReply(final({"files": "a.txt"})), ClaudeReply(final({"files": ["a.txt"]}))]
    )
    result = await anthropic_session(server, SCHEMA).run("which files?")
    assert result.status is RunStatus.COMPLETED, result.error
    assert server.requests[1]["tool_choice"] == {"type": "tool", "name": "final_answer"}
    last = server.requests[1]["messages"][-1]["content"][-1]["text"]
    assert "$.files: expected array, got string" in last
