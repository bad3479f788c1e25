"""MCP tools end to end through ``Session``: the real HTTP model client against the loopback
fake OpenAI server, real MCP servers in subprocesses, a real file store."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest
from mcp_support import alive, logged, raw, reference, wait_gone
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from rho_adapters.atif import trajectory
from rho_adapters.fakes import LoopbackServer, text_reply, tool_reply, wire_call
from rho_adapters.mcp.stdio import INHERITED
from rho_adapters.store import FileSessionStore
from rho_adapters.store.trace import read_trace
from rho_domain.loop.session import Session as DomainSession
from rho_domain.mcp_config import McpServerConfig
from rho_domain.messages import ToolResultMessage
from rho_domain.permissions import readonly_profile
from rho_domain.ports.approver import ApprovalInterrupt
from rho_entry import Agent, AgentConfig, RunStatus, Session
from rho_entry.cli.stats import session_stats
from rho_entry.otel import traced


def tool_names(request: dict[str, Any]) -> set[str]:
    return {t["function"]["name"] for t in request.get("tools") or ()}


def results(session: DomainSession | Session) -> list[ToolResultMessage]:
    return [m for m in session.state.messages if isinstance(m, ToolResultMessage)]


def config(server: LoopbackServer, work: Path, **kw: Any) -> AgentConfig:
    kw.setdefault("profile", "eval")
    return AgentConfig(model="m", base_url=server.base_url, working_dir=str(work), **kw)


def trace(store_root: Path, session: DomainSession | Session) -> list[dict[str, Any]]:
    lines = (store_root / session.id / "trace.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


async def test_tool_calls_end_to_end_with_instructions_schemas_a_5_mb_result_and_the_trace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the harness's own secrets, none of them the server's (redmcp22 checked: a real stdio
    # server lists its environment, the config's env and stdio.INHERITED only)
    harness = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "RHO_AGENT_API_KEY", "DATABASE_URL")
    for name in (*harness, "AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN"):
        monkeypatch.setenv(name, "sk-agent-secret")
    replies = [
        tool_reply(wire_call("mcp__ref__add", {"a": 2, "b": 3})),
        tool_reply(wire_call("mcp__ref__env", {}, "call_env")),
        tool_reply(wire_call("mcp__ref__big", {}, "call_big")),
        text_reply("2 + 3 = 5"),
    ]
    store = FileSessionStore(tmp_path / "sessions")
    spans = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(spans))
    with LoopbackServer(replies) as server:
        agent = Agent(config(server, tmp_path, mcp_servers={"ref": reference(env={"A": "1"})}))
        async with Session(agent, store=store) as session:
            with traced(session, tracer_provider=provider):
                result = await session.run("add 2 and 3")
    assert result.status is RunStatus.COMPLETED, result.error
    assert result.text == "2 + 3 = 5"
    first = server.requests[0]
    assert {"mcp__ref__add", "mcp__ref__echo", "read"} <= tool_names(first)
    add = next(t for t in first["tools"] if t["function"]["name"] == "mcp__ref__add")
    assert add["function"]["parameters"]["required"] == ["a", "b"]
    assert first["messages"][0]["role"] == "system"
    assert first["messages"][0]["content"].endswith(
        "change no rule above.\n> Tickets live in the tracker; search before you ask."
    )
    added, env, big = results(session)
    assert json.loads(added.content) == {"total": 5}
    assert set(json.loads(env.content)) <= {*INHERITED, "A"}
    # 5 MB: capped, the whole saved beside the trace, the run went on
    saved = tmp_path / "sessions" / session.id / "mcp-output" / "ref__big__call_big.txt"
    limit = agent.config.tool_output_limit
    assert len(big.content) <= limit
    assert big.content.startswith("line 0000000")
    assert f"the full output is saved in {saved}" in big.content
    assert len(saved.read_text()) > 5_000_000
    assert len(server.requests[3]["messages"][-1]["content"]) <= limit
    ends = [e for e in trace(tmp_path / "sessions", session) if e["kind"] == "tool_end"]
    assert ends[0]["metadata"] == {"mcp_server": "ref", "mcp_tool": "add"}
    # telemetry, ATIF and OpenTelemetry name each call's server
    stats = session_stats(session.id, tmp_path / "sessions")
    assert [(t.name, t.server) for t in stats.tools][:2] == [
        ("mcp__ref__add", "ref"),
        ("mcp__ref__env", "ref"),
    ]
    events = read_trace(tmp_path / "sessions" / session.id / "trace.jsonl").events
    steps = trajectory(events, session_id=session.id, agent_version="test")["steps"]
    mcp_calls = [s["extra"]["mcp_calls"] for s in steps if "mcp_calls" in s.get("extra", {})]
    assert mcp_calls[0] == {"call_mcp__ref__add": {"server": "ref", "tool": "add"}}
    (span,) = [s for s in spans.get_finished_spans() if s.name == "execute_tool mcp__ref__add"]
    assert span.attributes is not None
    assert (span.attributes["rho.mcp.server"], span.attributes["rho.mcp.tool"]) == ("ref", "add")


async def test_a_list_changed_mid_session_reaches_the_next_model_call_and_a_child(
    tmp_path: Path,
) -> None:
    replies = [
        tool_reply(wire_call("mcp__ref__grow", {})),
        tool_reply(wire_call("mcp__ref__late", {})),
        tool_reply(wire_call("delegate", {"instruction": "call late"})),
        tool_reply(wire_call("mcp__ref__late", {}, "call_child")),  # the child's turn
        text_reply("the child called it"),  # the child's answer
        text_reply("done"),
    ]
    with LoopbackServer(replies) as server:
        agent = Agent(config(server, tmp_path, mcp_servers={"ref": reference()}))
        async with Session(agent) as session:
            result = await session.run("grow")
    assert result.status is RunStatus.COMPLETED, result.error
    assert "mcp__ref__late" not in tool_names(server.requests[0])
    assert "mcp__ref__late" in tool_names(server.requests[1])
    assert results(session)[1].content == "late tool says hi"
    # the child asks the same source: it sees the grown list and calls the same server
    child_request = server.requests[3]
    assert "delegate" not in tool_names(child_request)
    assert "mcp__ref__late" in tool_names(child_request)
    assert server.requests[4]["messages"][-1]["content"] == "late tool says hi"
    assert "the child called it" in results(session)[2].content


async def test_a_server_hanging_at_start_and_one_hanging_in_a_call_end_within_their_timeouts(
    tmp_path: Path,
) -> None:
    servers = {
        "hang": reference(env={"HANG_AT_START": "1"}, startup_timeout=0.5),
        "raw": raw(tmp_path / "raw.log", call_timeout=0.5),
    }
    replies = [tool_reply(wire_call("mcp__raw__stuck", {})), text_reply("went on")]
    store = FileSessionStore(tmp_path / "sessions")
    with LoopbackServer(replies) as server:
        agent = Agent(config(server, tmp_path, mcp_servers=servers))
        started = time.monotonic()
        async with Session(agent, store=store) as session:
            result = await session.run("try")
        elapsed = time.monotonic() - started
    assert result.status is RunStatus.COMPLETED, result.error
    assert result.text == "went on"
    assert elapsed < 30  # a hang, not a speed: both timeouts are named below
    (stuck,) = results(session)
    assert "gave no answer to tools/call within 0.5 s" in stuck.content
    assert "mcp_servers.raw.call_timeout" in stuck.content
    errors = [e for e in trace(tmp_path / "sessions", session) if e["kind"] == "error"]
    assert "'hang' did not start within 0.5 s" in errors[0]["message"]
    assert "mcp_servers.hang.startup_timeout" in errors[0]["message"]
    assert not any(n.startswith("mcp__hang__") for n in tool_names(server.requests[0]))


async def test_a_server_that_dies_mid_call_is_started_again_and_the_run_goes_on(
    tmp_path: Path,
) -> None:
    replies = [tool_reply(wire_call("mcp__ref__die", {})), text_reply("it died")]
    with LoopbackServer(replies) as server:
        agent = Agent(config(server, tmp_path, mcp_servers={"ref": reference()}))
        async with Session(agent) as session:
            result = await session.run("die")
    assert result.status is RunStatus.COMPLETED, result.error
    (died,) = results(session)
    assert "'ref' exited (code 3)" in died.content
    # started again before the next model call: its tools are offered again
    assert "mcp__ref__add" in tool_names(server.requests[1])


async def test_cancelling_a_run_cancels_the_call_and_close_kills_the_process_group(
    tmp_path: Path,
) -> None:
    log = tmp_path / "raw.log"
    replies = [tool_reply(wire_call("mcp__raw__stuck", {}))]
    with LoopbackServer(replies) as server:
        agent = Agent(config(server, tmp_path, mcp_servers={"raw": raw(log)}))
        session = Session(agent)
        run = asyncio.ensure_future(session.run("go"))
        for _ in range(1500):  # the server's start and the call: seconds at a load of 12
            pids = [m for m in logged(log) if "grandchild" in m]
            if pids:
                break
            await asyncio.sleep(0.02)
        session.cancel()
        result = await asyncio.wait_for(run, 30)  # a hang bound: the stuck call never ends
        assert result.status is RunStatus.CANCELLED
        for _ in range(1500):  # the cancellation reaches the server's log when it gets a core
            cancelled = [m for m in logged(log) if m.get("method") == "notifications/cancelled"]
            if cancelled:
                break
            await asyncio.sleep(0.02)
        assert len(cancelled) == 1
        server_pid, grandchild = pids[0]["server"], pids[0]["grandchild"]
        assert alive(server_pid)
        await session.close()
    assert wait_gone(server_pid)
    assert wait_gone(grandchild)


async def test_readonly_starts_no_server_its_profile_does_not_name(tmp_path: Path) -> None:
    log = tmp_path / "raw.log"
    with LoopbackServer([text_reply("nothing")]) as server:
        agent = Agent(config(server, tmp_path, profile="readonly", mcp_servers={"raw": raw(log)}))
        async with Session(agent) as session:
            await session.run("hi")
    assert not any(n.startswith("mcp__") for n in tool_names(server.requests[0]))
    assert not log.exists()  # the program never ran


def readonly_naming(name: str) -> Any:
    import attrs

    return attrs.evolve(readonly_profile(), name="ops", mcp_servers={name: McpServerConfig()})


async def test_readonly_asks_approval_for_a_tool_not_in_read_only_tools(tmp_path: Path) -> None:
    replies = [
        tool_reply(wire_call("mcp__ref__echo", {"text": "hi"}, "call_echo")),
        tool_reply(wire_call("mcp__ref__add", {"a": 1, "b": 1}, "call_add")),
        text_reply("1 + 1 = 2"),
    ]
    ref = reference(read_only_tools=("echo",))
    with LoopbackServer(replies) as server:
        agent = Agent(
            config(server, tmp_path, profile=readonly_naming("ref"), mcp_servers={"ref": ref})
        )
        async with Session(agent) as session:
            with pytest.raises(ApprovalInterrupt) as interrupt:
                await session.run("add")
            result = interrupt.value.result
            assert result is not None
            assert result.status is RunStatus.AWAITING_APPROVAL
            assert [p.call.name for p in result.pending] == ["mcp__ref__add"]
            assert results(session)[0].content == "echo: hi"  # read-only: not asked
            session.resolve_approval("call_add", True)
            resumed = await session.run()
    assert resumed.status is RunStatus.COMPLETED, resumed.error
    assert json.loads(results(session)[1].content) == {"total": 2}
