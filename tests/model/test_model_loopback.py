"""The real client against the loopback server over real sockets, and the domain loop end to end.

Timeouts here are real (a stalled socket) but tests assert outcomes, never durations.
"""

from __future__ import annotations

import gc
import gzip
import json
from collections.abc import Iterator

import pytest
from _model_support import collect, text_of

from rho_adapters.fakes import FakeClock, MemoryExecutor
from rho_adapters.fakes.loopback import LoopbackServer
from rho_adapters.fakes.wire import (
    call,
    drop,
    http_error,
    raw_reply,
    stall,
    text_reply,
    tool_reply,
)
from rho_adapters.fakes.wire_render import render_stream
from rho_adapters.model import (
    ClientPool,
    ModelEndpoint,
    OpenAIChatModel,
    RetryPolicy,
    Timeouts,
    build_model,
)
from rho_domain.agent import Agent
from rho_domain.config import AgentConfig
from rho_domain.errors import ModelConnectionError, ModelTimeout
from rho_domain.loop.session import Session
from rho_domain.messages import UserMessage
from rho_domain.model import ModelRequest
from rho_domain.not_run import CUT_AT_LIMIT
from rho_domain.permissions import builtin_profile
from rho_domain.run import RunStatus
from rho_domain.tools.listing import ListHandler
from rho_domain.tools.registry import ToolRegistry

ANSWER = "The directory holds notes.txt and src. " * 3


@pytest.fixture
def served() -> Iterator[LoopbackServer]:
    server = LoopbackServer([])
    server.start()
    yield server
    server.stop()


def agent_session(model: OpenAIChatModel | object, executor: MemoryExecutor) -> Session:
    profile = builtin_profile("readonly")
    agent = Agent(
        config=AgentConfig(profile=profile, model="fake-model"),
        profile=profile,
        registry=ToolRegistry([ListHandler()]),
        system_prompt="You are a test agent.",
    )
    return Session(agent, model=model, executor=executor, clock=FakeClock())  # type: ignore[arg-type]


@pytest.mark.parametrize("stream", [True, False])
async def test_the_real_client_drives_the_domain_loop_end_to_end(
    served: LoopbackServer, stream: bool
) -> None:
    served.replies = [
        tool_reply(call("list", {"path": "."}, "call_1"), text="Let me look."),
        text_reply(ANSWER, deltas=50),
    ]
    model = build_model(model="fake-model", base_url=served.base_url, api_key="k", stream=stream)
    executor = MemoryExecutor({"notes.txt": "hi", "src/main.py": "print()"})
    async with agent_session(model, executor) as session:
        result = await session.run("What is in this directory?")
    await model.aclose()
    assert result.status is RunStatus.COMPLETED, result.error
    assert result.text == ANSWER
    assert result.usage.input_tokens == 20  # two calls, 10 prompt tokens each (scripted)
    first, second = served.requests
    assert first["stream"] is stream
    assert [t["function"]["name"] for t in first["tools"]] == ["list"]
    tool_message = second["messages"][-1]
    assert tool_message["role"] == "tool"
    assert tool_message["tool_call_id"] == "call_1"
    assert "notes.txt" in tool_message["content"]
    assert "src" in tool_message["content"]
    assert served.connections == 1  # both calls reused one keep-alive connection


async def test_invalid_tool_arguments_reach_the_model_as_an_error_result(
    served: LoopbackServer,
) -> None:
    # Written wrong, not cut: no text could complete it (``{"path": ".`` is a cut, answered
    # not_run.CUT_AT_LIMIT, below)
    served.replies = [
        tool_reply(call("list", '{"path": "."}}', "call_bad")),
        text_reply("Sorry, retrying is not needed."),
    ]
    model = build_model(model="fake-model", base_url=served.base_url, api_key="k")
    async with agent_session(model, MemoryExecutor({"a": "1"})) as session:
        result = await session.run("list")
    await model.aclose()
    assert result.status is RunStatus.COMPLETED
    tool_message = served.requests[1]["messages"][-1]
    assert tool_message["tool_call_id"] == "call_bad"
    assert "json" in tool_message["content"].lower()  # the registry explains, never a silent {}
    assistant = served.requests[1]["messages"][-2]
    assert assistant["tool_calls"][0]["function"]["arguments"] == '{"path": "."}}'


async def test_arguments_cut_short_under_tool_calls_are_answered_as_cut(
    served: LoopbackServer,
) -> None:
    """The start of a JSON text said with ``tool_calls`` (llama-cpp-python at its limit):
    the model is told its answer was cut, not that its JSON is wrong."""
    served.replies = [
        tool_reply(call("list", '{"path": ".', "call_cut")),
        text_reply("Listing in smaller steps."),
    ]
    model = build_model(model="fake-model", base_url=served.base_url, api_key="k")
    async with agent_session(model, MemoryExecutor({"a": "1"})) as session:
        result = await session.run("list")
    await model.aclose()
    assert result.status is RunStatus.COMPLETED
    tool_message = served.requests[1]["messages"][-1]
    assert (tool_message["tool_call_id"], tool_message["content"]) == ("call_cut", CUT_AT_LIMIT)


async def test_retry_after_429_then_stream_over_sockets(served: LoopbackServer) -> None:
    served.replies = [http_error(429, "busy", retry_after=0), text_reply("fine")]
    clock = FakeClock()
    model = OpenAIChatModel(
        model="m", endpoint=ModelEndpoint(base_url=served.base_url), clock=clock
    )
    assert text_of(await collect(model, _request())) == "fine"
    await model.aclose()
    assert len(served.requests) == 2
    assert clock.sleeps == [0.0]


async def test_dropped_connection_mid_stream_keeps_partial_text(served: LoopbackServer) -> None:
    served.replies = [text_reply("alpha beta gamma", faults=(drop(after=3),))]
    model = OpenAIChatModel(
        model="m", endpoint=ModelEndpoint(base_url=served.base_url), clock=FakeClock()
    )
    with pytest.raises(ModelConnectionError) as info:
        await collect(model, _request())
    await model.aclose()
    assert info.value.partial_text == "alpha beta "


async def test_stalled_socket_hits_the_real_idle_timeout(served: LoopbackServer) -> None:
    served.replies = [text_reply("alpha beta", faults=(stall(after=2),))]
    model = OpenAIChatModel(
        model="m",
        endpoint=ModelEndpoint(
            base_url=served.base_url, timeouts=Timeouts(idle=0.2), retry=RetryPolicy(max_retries=0)
        ),
        clock=FakeClock(),
    )
    with pytest.raises(ModelTimeout) as info:
        await collect(model, _request())
    await model.aclose()
    assert info.value.partial_text == "alpha "
    assert "the server took the call, then went quiet" in str(info.value)  # not "--base-url"


async def test_models_of_one_endpoint_share_one_pooled_client(served: LoopbackServer) -> None:
    served.replies = [text_reply("a"), text_reply("b"), text_reply("c")]
    pool = ClientPool()
    first = OpenAIChatModel(
        model="m", endpoint=ModelEndpoint(base_url=served.base_url), http=pool, clock=FakeClock()
    )
    second = OpenAIChatModel(
        model="m", endpoint=ModelEndpoint(base_url=served.base_url), http=pool, clock=FakeClock()
    )
    await collect(first, _request())
    await collect(second, _request())
    assert pool.leases(served.base_url) == 2
    await first.aclose()
    await first.aclose()  # idempotent
    assert text_of(await collect(second, _request())) == "c"  # still open for the other
    await second.aclose()
    assert pool.leases(served.base_url) == 0
    assert served.connections == 1


def test_loopback_serves_sync_clients_and_json_mode() -> None:
    import httpx

    with LoopbackServer([text_reply("hello")]) as server:
        body = {"model": "m", "messages": [], "stream": False}
        response = httpx.post(server.base_url + "/chat/completions", json=body)
        assert response.json()["choices"][0]["message"]["content"] == "hello"
        exhausted = httpx.post(server.base_url + "/chat/completions", json=body)
        assert exhausted.status_code == 500
        assert "no reply scripted" in json.loads(exhausted.text)["error"]["message"]


def _request() -> ModelRequest:
    return ModelRequest(model="m", system="s", messages=(UserMessage("hi"),))


async def test_a_socket_error_wrapped_in_a_task_group_names_its_cause() -> None:
    # connect() raises OverflowError for port 99999: the pool's backend reports it as a
    # connect error (anyio's, behind a caller's own client, wraps it in an ExceptionGroup);
    # either way the adapter reports the cause, not "unhandled errors in a TaskGroup".
    model = OpenAIChatModel(
        model="m",
        endpoint=ModelEndpoint(
            base_url="http://127.0.0.1:99999/v1", retry=RetryPolicy(max_retries=0)
        ),
        clock=FakeClock(),
    )
    with pytest.raises(ModelConnectionError) as info:
        await collect(model, _request())
    await model.aclose()
    assert "port must be 0-65535" in str(info.value)
    assert "TaskGroup" not in str(info.value)


async def test_a_broken_stream_is_not_blamed_on_the_url_a_refused_connection_is(
    served: LoopbackServer,
) -> None:
    served.replies = [text_reply("alpha beta gamma delta", deltas=8, faults=(drop(after=4),))]
    model = OpenAIChatModel(
        model="m",
        endpoint=ModelEndpoint(base_url=served.base_url, retry=RetryPolicy(max_retries=0)),
        clock=FakeClock(),
    )
    with pytest.raises(ModelConnectionError) as broken:
        await collect(model, _request())
    await model.aclose()
    assert "the server answered, then closed the connection mid-response" in str(broken.value)
    assert "is the server running there" not in str(broken.value)
    import socket

    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    nobody = OpenAIChatModel(
        model="m",
        endpoint=ModelEndpoint(
            base_url=f"http://127.0.0.1:{port}/v1", retry=RetryPolicy(max_retries=0)
        ),
        clock=FakeClock(),
    )
    with pytest.raises(ModelConnectionError) as refused:
        await collect(nobody, _request())
    await nobody.aclose()
    assert "is the server running there? check the base URL (--base-url, " in str(refused.value)
    assert "AgentConfig.base_url" in str(refused.value)


async def test_a_whole_run_over_real_sockets_leaves_no_garbage_in_reference_cycles(
    served: LoopbackServer,
) -> None:
    # With many sessions, whatever a run leaves in reference cycles waits for the collector's
    # passes, which stall the event loop; a run's objects are freed by their reference count.
    served.replies = [
        tool_reply(call("list", {"path": "."}, f"call_{i}")) if i % 2 == 0 else text_reply("ok")
        for i in range(6)
    ]
    model = build_model(model="fake-model", base_url=served.base_url, api_key="k")
    executor = MemoryExecutor({"notes.txt": "hi"})
    async with agent_session(model, executor) as session:
        await session.run("first")  # warm: the connection, caches, lazy imports
    gc.collect()
    gc.disable()
    try:
        for prompt in ("second", "third"):
            async with agent_session(model, executor) as session:
                result = await session.run(prompt)
            assert result.text == "ok"
        del session, result
        assert gc.collect() == 0
    finally:
        gc.enable()
        await model.aclose()


@pytest.mark.parametrize("encoding", ["gzip", "identity", None])
async def test_a_stream_is_read_whole_compressed_or_not(
    served: LoopbackServer, encoding: str | None
) -> None:
    """The reader takes the raw body when it is not compressed, and decodes a gzip one
    (issue 33: the raw path skips httpx's decoder for each delta)."""
    rendered = render_stream(text_reply("alpha beta gamma delta", deltas=4))
    body = b"".join(p for p in rendered if isinstance(p, bytes))
    if encoding == "gzip":
        body = gzip.compress(body)
    pieces = [body[i : i + 7] for i in range(0, len(body), 7)]  # a split anywhere, even in a line
    headers = {} if encoding is None else {"content-encoding": encoding}
    served.replies = [raw_reply(*pieces, headers=headers)]
    model = OpenAIChatModel(
        model="m", endpoint=ModelEndpoint(base_url=served.base_url), clock=FakeClock()
    )
    events = await collect(model, _request())
    await model.aclose()
    assert text_of(events) == "alpha beta gamma delta"
