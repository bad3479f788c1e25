"""The MCP client against real servers: the official SDK's (stdio and Streamable HTTP) and a
hand-written rough one (malformed messages, paging, a call that never answers)."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp_support import alive, logged, raw, reference, start_http_server, wait_gone

from rho_adapters.clock import SystemClock
from rho_adapters.fakes import FakeClock, MemoryExecutor
from rho_adapters.mcp import McpToolSource
from rho_adapters.mcp.http import HttpTransport
from rho_adapters.mcp.server_text import quoted_instructions
from rho_adapters.mcp.stdio import StdioTransport
from rho_adapters.mcp.transport import Transport
from rho_domain.errors import McpError, McpProtocolError, McpTimeout
from rho_domain.mcp_config import McpServerConfig, McpToolFilter
from rho_domain.permissions import readonly_profile
from rho_domain.tools.base import ToolContext

ENV = {"PATH": "/usr/bin:/bin", "OPENAI_API_KEY": "sk-agent-secret", "TICKETS_TOKEN": "t0k3n"}


def context(call_id: str = "call-1") -> ToolContext:
    return ToolContext(
        session_id="s1",
        call_id=call_id,
        executor=MemoryExecutor(),
        profile=readonly_profile(),
        clock=SystemClock(),
    )


# What the reference server's ``ask`` hears back: its ping answered, every other request
# of its own refused (the client offers no capability), and its call still answered.
ASKED = (
    "ping: answered\nroots: roots/list unsupported\nsampling: sampling/createMessage "
    "unsupported\nelicitation: elicitation/create unsupported"
)


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    process, url = start_http_server()
    try:
        yield url
    finally:
        process.kill()
        process.wait()


def source(servers: dict[str, McpServerConfig], **kw: Any) -> McpToolSource:
    return McpToolSource(servers, environ=ENV, output_limit=kw.pop("output_limit", 2_000), **kw)


async def test_stdio_server_lists_tools_with_their_schemas_and_instructions() -> None:
    env = {"TICKETS_URL": "https://tickets.example", "TOKEN": "${TICKETS_TOKEN}"}
    tools = source({"ref": reference(read_only_tools=("echo",), env=env)})
    try:
        sourced = await tools.current()
        by_name = {h.name: h for h in sourced.handlers}
        assert {"mcp__ref__echo", "mcp__ref__add", "mcp__ref__grow"} <= set(by_name)
        add = by_name["mcp__ref__add"]
        assert add.parameters["required"] == ["a", "b"]  # the server's schema, passed through
        assert add.policy_for({}).dangerous
        assert by_name["mcp__ref__echo"].policy_for({}).read_only
        assert sourced.instructions == (
            quoted_instructions("ref", "Tickets live in the tracker; search before you ask."),
        )
        assert await tools.current() is sourced  # nothing changed: the same object
        out = await tools.call("ref", "add", {"a": 2, "b": 40}, context())
        assert json.loads(out.content) == {"total": 42}
        assert out.metadata == {"mcp_server": "ref", "mcp_tool": "add"}
        failed = await tools.call("ref", "fail", {}, context())
        assert failed.is_error
        assert failed.content == "Error executing tool fail"  # the SDK keeps its reason
        names = json.loads((await tools.call("ref", "env", {}, context())).content)
        asked = (await tools.call("ref", "ask", {}, context())).content
    finally:
        await tools.aclose()
    assert asked == ASKED  # the server's requests in a call: refused, the call answered
    assert "OPENAI_API_KEY" not in names  # the agent's key does not leak into the server
    assert {"TICKETS_URL", "TOKEN", "PATH"} <= set(names)


async def test_streamable_http_server_lists_calls_and_refreshes(http_url: str) -> None:
    server = McpServerConfig(
        url=http_url, headers={"X-Token": "${TICKETS_TOKEN}"}, bearer_token_env="TICKETS_TOKEN"
    )
    tools = source({"web": server})
    try:
        sourced = await tools.current()
        assert "mcp__web__echo" in {h.name for h in sourced.handlers}
        out = await tools.call("web", "echo", {"text": "over http"}, context())
        assert out.content == "echo: over http"
        sent = json.loads((await tools.call("web", "headers", {}, context())).content)
        assert sent["authorization"] == "Bearer t0k3n"  # from the variable, never the file
        assert sent["x-token"] == "t0k3n"
        assert sent["mcp-protocol-version"] == "2025-11-25"
        assert sent["mcp-session-id"]
        assert (await tools.call("web", "ask", {}, context())).content == ASKED
        # the server forgets the session (a restart, an expiry): a new one, the call again
        async with httpx.AsyncClient() as http:
            gone = await http.delete(http_url, headers={"Mcp-Session-Id": sent["mcp-session-id"]})
        assert gone.status_code == 200
        again = await tools.call("web", "echo", {"text": "still here"}, context())
        assert again.content == "echo: still here"
        fresh = json.loads((await tools.call("web", "headers", {}, context())).content)
        assert fresh["mcp-session-id"] not in (None, sent["mcp-session-id"])
        await tools.call("web", "grow", {}, context())
        for _ in range(50):  # the notification may come on the request's stream or the GET one
            grown = await tools.current()
            if "mcp__web__late" in {h.name for h in grown.handlers}:
                break
            await asyncio.sleep(0.05)
        assert "mcp__web__late" in {h.name for h in grown.handlers}
        assert grown is not sourced
    finally:
        await tools.aclose()


async def test_an_answer_too_large_for_memory_fails_the_call(http_url: str) -> None:
    def small(name: str, server: McpServerConfig, environ: Mapping[str, str]) -> Transport:
        assert server.url is not None
        return HttpTransport(name, server.url, headers={}, max_body=1_000_000)

    tools = source({"web": McpServerConfig(url=http_url)}, connect=small)
    try:
        await tools.current()
        with pytest.raises(McpProtocolError, match="sent more than 1000000 bytes in one answer"):
            await tools.call("web", "big", {}, context())
        again = await tools.call("web", "echo", {"text": "small"}, context())
        assert again.content == "echo: small"
    finally:
        await tools.aclose()


async def test_an_unset_variable_names_the_server_and_the_setting() -> None:
    tools = source({"ref": reference(env={"TOKEN": "${NOT_SET_ANYWHERE}"})})
    sourced = await tools.current()
    await tools.aclose()
    assert sourced.handlers == ()
    assert "mcp_servers.ref.env.TOKEN names ${NOT_SET_ANYWHERE}" in sourced.problems[0]


async def test_a_missing_program_is_a_problem_not_a_crash() -> None:
    tools = source({"gone": McpServerConfig(command=("/nonexistent/mcp-server",))})
    sourced = await tools.current()
    await tools.aclose()
    assert "cannot start '/nonexistent/mcp-server'" in sourced.problems[0]
    assert "mcp_servers.gone.command" in sourced.problems[0]


async def test_a_server_that_exits_at_once_is_named_by_its_exit_and_stderr() -> None:
    # `command: [python, tickets_serve.py]`, the script's name mistyped: python exits at once
    # (code 2) saying which file it could not open. When our first line met the closed pipe
    # (as `rho-agent mcp list` does), the problem said only that the server "closed its input
    # (stdin)", and not why. Here the write comes after the exit, always.
    gone = "import sys; sys.exit(\"can't open file 'tickets_serve.py'\")"
    transport = StdioTransport("typo", (sys.executable, "-c", gone), env=ENV)
    await transport.start(lambda line: None, lambda why: None)
    try:
        assert transport.process is not None
        await transport.process.wait()
        with pytest.raises(McpError) as raised:
            await transport.send({"jsonrpc": "2.0", "id": 1, "method": "initialize"})
    finally:
        await transport.aclose()
    said = "'typo' exited (code 1); its last stderr lines: can't open file 'tickets_serve.py'"
    assert said in str(raised.value)


async def test_a_server_that_hangs_at_start_ends_within_its_startup_timeout() -> None:
    tools = source({"hang": reference(env={"HANG_AT_START": "1"}, startup_timeout=0.5)})
    started = time.monotonic()
    sourced = await tools.current()
    elapsed = time.monotonic() - started
    await tools.aclose()
    assert elapsed < 30  # a hang, not a speed: the message below names the 0.5 s timeout
    assert sourced.handlers == ()
    assert "'hang' did not start within 0.5 s (the startup_timeout" in sourced.problems[0]
    assert "mcp_servers.hang.startup_timeout" in sourced.problems[0]


async def test_paging_odd_names_and_malformed_messages(tmp_path: Path) -> None:
    log = tmp_path / "raw.log"
    tools = source({"raw": raw(log)})
    try:
        sourced = await tools.current()
        names = sorted(h.name for h in sourced.handlers)
        # two pages, and a name a model API refuses made safe
        assert names == [
            "mcp__raw__broken",
            "mcp__raw__noise",
            "mcp__raw__odd_name_tool",
            "mcp__raw__rich",
            "mcp__raw__structured",
            "mcp__raw__stuck",
        ]
        out = await tools.call("raw", "noise", {}, context())  # non-JSON lines are skipped
        assert out.content == "quiet now"
        assert tools.servers["raw"].client is not None
        assert tools.servers["raw"].client.peer.malformed == 2
        with pytest.raises(McpProtocolError, match="'raw' sent a malformed JSON-RPC response"):
            await tools.call("raw", "broken", {}, context())
        odd = await tools.call("raw", "odd.name/tool", {}, context())
        assert odd.content == "odd.name/tool ran"  # called by the server's own name
        rich = await tools.call("raw", "rich", {}, context())
        assert rich.content.splitlines() == [
            "[image image/png, about 75 bytes]",
            "A",
            "[resource link file:///b.txt b]",
        ]
        structured = await tools.call("raw", "structured", {}, context())
        assert json.loads(structured.content) == {"open": 3, "closed": 9}
    finally:
        await tools.aclose()
    pages = [m for m in logged(log) if m.get("method") == "tools/list"]
    assert [(m.get("params") or {}).get("cursor") for m in pages] == [None, "page2"]


async def test_a_hung_call_times_out_naming_the_setting(tmp_path: Path) -> None:
    tools = source({"raw": raw(tmp_path / "raw.log", call_timeout=0.3)})
    try:
        await tools.current()
        started = time.monotonic()
        with pytest.raises(
            McpTimeout, match=r"within 0.3 s \(the call_timeout; raise mcp_servers.raw.call_timeout"
        ):
            async with asyncio.timeout(60):  # without the call_timeout: a failure, not a hang
                await tools.call("raw", "stuck", {}, context())
        assert time.monotonic() - started < 30  # a hang, not a speed: the message says 0.3 s
        again = await tools.call("raw", "noise", {}, context())  # the server still serves
        assert again.content == "quiet now"
    finally:
        await tools.aclose()
    cancelled = [
        m for m in logged(tmp_path / "raw.log") if m.get("method") == "notifications/cancelled"
    ]
    assert len(cancelled) == 1


async def test_cancelling_a_call_tells_the_server_and_closing_kills_its_group(
    tmp_path: Path,
) -> None:
    log = tmp_path / "raw.log"
    tools = source({"raw": raw(log)})
    await tools.current()
    call = asyncio.ensure_future(tools.call("raw", "stuck", {}, context()))
    for _ in range(200):
        pids = [m for m in logged(log) if "grandchild" in m]
        if pids:
            break
        await asyncio.sleep(0.02)
    server, grandchild = pids[0]["server"], pids[0]["grandchild"]
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    # the cancellation is sent without making the caller wait: it reaches the server's log
    # soon after, when the server gets a core (a fixed 0.1 s was a guess at when)
    for _ in range(1500):
        cancelled = [m for m in logged(log) if m.get("method") == "notifications/cancelled"]
        if cancelled:
            break
        await asyncio.sleep(0.02)
    requests = [m for m in logged(log) if m.get("method") == "tools/call"]
    assert cancelled[0]["params"]["requestId"] == requests[0]["id"]
    # a cancellation cannot tell a cancelled run from the tool call's deadline: it says both
    assert cancelled[0]["params"]["reason"] == (
        "rho-agent stopped the call (its run was cancelled or its tool_timeout passed)"
    )
    assert alive(server)
    assert alive(grandchild)
    await tools.aclose()
    assert wait_gone(server)
    assert wait_gone(grandchild)


async def test_allow_and_deny_lists_and_a_servers_own_output_limit(tmp_path: Path) -> None:
    server = raw(
        tmp_path / "raw.log",
        tools=McpToolFilter(allow=("noise", "rich", "broken"), deny=("broken",)),
        output_limit=40,
    )
    tools = source({"raw": server}, output_dir=lambda session: tmp_path / session)
    try:
        sourced = await tools.current()
        assert sorted(h.name for h in sourced.handlers) == ["mcp__raw__noise", "mcp__raw__rich"]
        rich = await tools.call("raw", "rich", {}, context("c-rich"))
    finally:
        await tools.aclose()
    saved = tmp_path / "s1" / "raw__rich__c-rich.txt"
    assert rich.metadata["full_output"] == str(saved)
    assert saved.read_text().endswith("[resource link file:///b.txt b]")
    note = f"\n[output cut to 40 of 67 characters; the full output is saved in {saved}]"
    assert rich.content == note  # a limit smaller than the note keeps the note alone


async def test_a_server_that_died_is_started_again_by_the_next_current(tmp_path: Path) -> None:
    # a long session outlives a crash: the tools come back before the next model call
    tools = source({"ref": reference()}, restart_backoff=(0.3, 1.0))
    try:
        assert "mcp__ref__add" in {h.name for h in (await tools.current()).handlers}
        with pytest.raises(McpError):
            await tools.call("ref", "die", {}, context())
        back = await tools.current()
        assert "mcp__ref__add" in {h.name for h in back.handlers}
        assert back.problems == ()
        out = await tools.call("ref", "add", {"a": 1, "b": 2}, context())
        assert json.loads(out.content) == {"total": 3}
    finally:
        await tools.aclose()


async def test_a_restart_that_fails_waits_longer_each_time(tmp_path: Path) -> None:
    broken = tmp_path / "broken"  # once it exists, the server's command fails at start
    script = f'test -e "{broken}" && exit 7; exec "$0" "$@"'
    ref = reference()
    clock = FakeClock()  # the waits are the source's arithmetic; each start is a real process
    tools = source(
        {"ref": McpServerConfig(command=("sh", "-c", script, *ref.command))},
        restart_backoff=(0.3, 1.0),
        clock=clock,
    )
    try:
        await tools.current()
        broken.touch()
        with pytest.raises(McpError):
            await tools.call("ref", "die", {}, context())
        failed = await tools.current()  # restarted at once: it fails
        assert not failed.handlers
        assert "restarting it again in 0.3 s" in failed.problems[0]
        clock.advance(0.29)
        assert (await tools.current()).problems == failed.problems  # not yet: no new start
        clock.advance(0.02)
        again = await tools.current()
        assert "restarting it again in 0.6 s" in again.problems[0]
        broken.unlink()
        clock.advance(0.59)
        assert (await tools.current()).problems == again.problems  # not yet
        clock.advance(0.02)
        assert "mcp__ref__add" in {h.name for h in (await tools.current()).handlers}
    finally:
        await tools.aclose()


def test_a_header_an_http_header_cannot_carry_is_refused_naming_server_and_header() -> None:
    # `headers: {Authorization: "Bearer ${TOKEN}"}` with a token ending in a space or holding
    # a non-ASCII character reached the first message, where httpx cannot encode it (a
    # UnicodeEncodeError, or h11's "Illegal header value"), naming neither server nor header.
    from rho_domain.errors import ConfigError

    with pytest.raises(ConfigError) as refused:
        HttpTransport("web", "http://127.0.0.1:9/mcp", headers={"Authorization": "Bearer t\u00e9"})
    assert str(refused.value).startswith(
        "MCP server 'web': header 'Authorization' has a non-ASCII character at character 9"
    )
