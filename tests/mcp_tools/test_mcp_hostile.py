"""Hostile MCP servers (``hostile_server.py``, a real process): a server is foreign code, so
what it sends must not choose how much memory we spend, nor how much every model request
carries, nor how long the messages it makes us write are."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp_support import free_port

from rho_adapters.clock import SystemClock
from rho_adapters.fakes import MemoryExecutor
from rho_adapters.mcp import McpToolSource
from rho_adapters.mcp.shown_tools import MAX_LISTED, listed_size
from rho_adapters.mcp.tool import kept_entry
from rho_domain.errors import McpError, McpTimeout
from rho_domain.mcp_config import McpServerConfig
from rho_domain.permissions import readonly_profile
from rho_domain.tools.base import ToolContext

HOSTILE = str(Path(__file__).with_name("hostile_server.py"))
HOSTILE_HTTP = str(Path(__file__).with_name("hostile_http_server.py"))


def hostile(
    mode: str,
    call_timeout: float = 60,
    startup_timeout: float = 60,
    saved: Path | None = None,
    **env: str,
) -> McpToolSource:
    """A source of one server, ``hostile_server.py`` in ``mode``; full outputs saved under
    ``saved`` (else the source's temporary directory, kept after the test)."""
    config = McpServerConfig(
        command=(sys.executable, HOSTILE),
        env={"HOSTILE": mode, **env},
        startup_timeout=startup_timeout,
        call_timeout=call_timeout,
    )
    return McpToolSource(
        {"h": config},
        environ={"PATH": "/usr/bin:/bin"},
        output_limit=2_000,
        output_dir=None if saved is None else lambda session: saved,
    )


def context(call_id: str = "call-1") -> ToolContext:
    return ToolContext(
        session_id="s1",
        call_id=call_id,
        executor=MemoryExecutor(),
        profile=readonly_profile(),
        clock=SystemClock(),
    )


async def call(source: McpToolSource, tool: str, **arguments: Any) -> str:
    return (await source.call("h", tool, arguments, context())).content


async def test_a_flood_of_requests_from_a_server_that_does_not_read_is_not_all_answered() -> None:
    # 20,000 pings while the server reads nothing: each answer waited in memory to be sent
    # (a task and its message, about 2.8 KB: 1.4 GB in 20 s of an endless flood, measured)
    source = hostile("pings", PINGS="20000")
    try:
        sourced = await source.current()
        assert "mcp__h__count" in {h.name for h in sourced.handlers}, sourced.problems
        read = int(await call(source, "count"))
    finally:
        await source.aclose()
    assert read < 5_000  # what the pipes held, and the few answers let wait; not 20,000


async def test_a_tool_named_with_a_million_characters_is_left_out_named_short() -> None:
    # its name went whole into the description every model request carries (1 MB each),
    # into every call's trace metadata, and into any problem quoting it
    source = hostile("long-name")
    try:
        sourced = await source.current()
    finally:
        await source.aclose()
    assert [h.name for h in sourced.handlers] == ["mcp__h__plain"]
    (problem,) = sourced.problems
    assert "is left out: its name is 1,000,000 characters (at most 128" in problem
    assert len(problem) < 1_000


async def test_a_server_listing_thousands_of_tools_does_not_fill_every_request() -> None:
    # 2,000 tools of 3,900-character descriptions: 7.8 MB in every model request (each tool
    # within the per-tool bounds); the tools past one server's share are left out, named
    source = hostile("many", TOOLS="2000")
    try:
        sourced = await source.current()
    finally:
        await source.aclose()
    carried = sum(listed_size(h) for h in sourced.handlers)
    assert 0 < carried <= MAX_LISTED
    assert sourced.handlers[0].name == "mcp__h__t0"  # the server's order: its first tools
    (problem,) = sourced.problems
    left = 2_000 - len(sourced.handlers)
    assert f"MCP server 'h': {left:,} of its 2,000 tools are left out" in problem
    assert "mcp_servers.h.tools.allow" in problem


@pytest.mark.parametrize("mode", ["error", "version", "cursor"])
async def test_a_servers_words_in_a_start_problem_are_cut(mode: str) -> None:
    # 5 MB where an error's message, a protocol version or a page cursor goes: the problem
    # quoting it became an error event of 5 MB in the trace, the terminal and the dashboard
    source = hostile(mode)
    try:
        sourced = await source.current()
    finally:
        await source.aclose()
    assert sourced.handlers == ()
    (problem,) = sourced.problems
    assert problem.startswith("MCP server 'h'")
    assert "WWWW" in problem
    assert len(problem) < 2_000


async def test_a_servers_words_in_a_calls_error_are_cut() -> None:
    source = hostile("call-error")
    try:
        await source.current()
        with pytest.raises(McpError, match="answered error -32000: WWWW") as failed:
            await call(source, "plain")
    finally:
        await source.aclose()
    assert len(str(failed.value)) < 2_000


MEASURED = """
import asyncio, resource, sys
from rho_adapters.mcp import McpToolSource
from rho_domain.errors import McpError, McpTimeout
from rho_domain.mcp_config import McpServerConfig
from rho_adapters.fakes import MemoryExecutor


async def main():
    config = McpServerConfig(command=(sys.executable, sys.argv[1]), startup_timeout=120,
                             env={"HOSTILE": "stderr", "STDERR_MB": "25"})
    source = McpToolSource({"h": config}, environ={"PATH": "/usr/bin:/bin"}, output_limit=9)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    try:
        sourced = await source.current()
        grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
        assert sourced.handlers, sourced.problems
        client = source.servers["h"].client
        try:
            await client.call_tool("plain", {}, timeout=120)
        except McpError as exc:
            print(grown // 1024, str(exc))
    finally:
        await source.aclose()


asyncio.run(main())
"""


def test_a_line_of_stderr_without_end_costs_no_more_than_a_chunk() -> None:
    # 25 MB of stderr on one line: read whole (then decoded) to keep its first 300
    # characters, 39 MB of our memory grown (100 MB: 200 and more), for as many servers as
    # are configured; 0 grown now, for 100 MB too
    ran = subprocess.run(
        [sys.executable, "-c", MEASURED, HOSTILE], capture_output=True, text=True, check=True
    )
    grown, said = ran.stdout.split(" ", 1)
    assert int(grown) < 15  # MB; the server wrote 25 on that line
    assert "exited (code 3); its last stderr lines: " + "e" * 300 + " | last words" in said


@contextlib.contextmanager
def hostile_http(mode: str, call_timeout: float = 60) -> Iterator[McpToolSource]:
    """A source of one server, ``hostile_http_server.py`` in ``mode``, on a free port."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, HOSTILE_HTTP, str(port)],
        env={**os.environ, "HOSTILE": mode},
        stdout=subprocess.PIPE,
    )
    try:
        assert process.stdout is not None
        assert process.stdout.readline() == b"ready\n"
        config = McpServerConfig(
            url=f"http://127.0.0.1:{port}/mcp", startup_timeout=60, call_timeout=call_timeout
        )
        yield McpToolSource({"h": config}, environ={"PATH": "/usr/bin:/bin"}, output_limit=2_000)
    finally:
        process.kill()
        process.wait()


async def test_a_server_that_forgot_our_session_while_its_list_changed_serves_again() -> None:
    # the listing after its list changed answered 404: the server was left out for good
    with hostile_http("forget") as source:
        try:
            assert [t.name for t in (await source.current()).handlers] == ["mcp__h__plain"]
            assert await call(source, "plain") == "plain ran"  # its list changed, forgotten
            again = await source.current()
            assert [t.name for t in again.handlers] == ["mcp__h__plain"], again.problems
            assert await call(source, "plain") == "plain ran"
        finally:
            await source.aclose()


async def test_a_session_id_that_is_not_ascii_is_a_problem_not_a_crash() -> None:
    # httpx cannot send it back: UnicodeEncodeError out of current(), the run's end
    with hostile_http("session-id") as source:
        try:
            sourced = await source.current()
        finally:
            await source.aclose()
    assert sourced.handlers == ()
    (problem,) = sourced.problems
    assert "MCP server 'h' at http://127.0.0.1:" in problem
    assert "gave an Mcp-Session-Id that is not visible ASCII: 's\\xe9'" in problem


DEEP_RUN = """
import asyncio, sys
from rho_adapters.fakes import LoopbackServer, text_reply
from rho_domain.control_events import ErrorOccurred
from rho_domain.mcp_config import McpServerConfig
from rho_entry import Agent, AgentConfig, Session


async def main():
    server = McpServerConfig(
        command=(sys.executable, sys.argv[1]), env={"HOSTILE": "deep-schema", "DEPTH": "970"}
    )
    with LoopbackServer([text_reply("went on")]) as model:
        config = AgentConfig(model="m", base_url=model.base_url, profile="developer",
                             working_dir=sys.argv[2], mcp_servers={"h": server})
        async with Session(Agent(config)) as session:
            result = await session.run("go", record_events=True)
    errors = [e.message for e in result.events if isinstance(e, ErrorOccurred)]
    print(result.status.value, result.text, errors, result.error)


asyncio.run(main())
"""


def test_a_schema_nested_deep_but_decodable_does_not_end_every_run(tmp_path: Path) -> None:
    # 970 arrays deep: json decoded it in the reader, then every model request failed to
    # encode it, deeper in the stack (RecursionError: the run ended in error before its
    # first model call). In a process of its own: the depths that decode depend on the stack
    ran = subprocess.run(
        [sys.executable, "-c", DEEP_RUN, HOSTILE, str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "OPENAI_API_KEY": "sk-test"},
    )
    assert ran.stdout.startswith("completed went on ["), ran.stdout
    left_out = "tool 'deep' is left out: its input schema nests objects and arrays more than 100"
    assert left_out in ran.stdout


@pytest.mark.parametrize(
    ("mode", "said"),
    [
        (
            "redirect",
            "answered initialize with HTTP 307, a redirect to 'http://127.0.0.2:9/elsewhere', "
            "which is not followed",
        ),
        ("html", "answered initialize with HTTP 200 text/html, not JSON or an event stream"),
    ],
)
async def test_an_http_answer_that_is_not_mcp_says_so_at_once(mode: str, said: str) -> None:
    # both were read as a malformed message: the request waited out its startup_timeout
    # (60 s here), and the problem said the server was slow ("raise ...startup_timeout")
    with hostile_http(mode) as source:
        started = time.monotonic()
        try:
            sourced = await source.current()
        finally:
            await source.aclose()
    assert time.monotonic() - started < 30  # a hang bound: the timeout is 60 s
    (problem,) = sourced.problems
    assert said in problem
    assert "startup_timeout" not in problem


WIDE = """
import asyncio, resource, sys
from rho_adapters.mcp import McpToolSource
from rho_domain.mcp_config import McpServerConfig


async def main():
    config = McpServerConfig(command=(sys.executable, sys.argv[1]), startup_timeout=120,
                             env={"HOSTILE": "wide", "WIDE_MB": "15"})
    source = McpToolSource({"h": config}, environ={"PATH": "/usr/bin:/bin"}, output_limit=9)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    try:
        sourced = await source.current()
        grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
        print(grown // 1024, [h.name for h in sourced.handlers], sourced.problems)
    finally:
        await source.aclose()


asyncio.run(main())
"""


def test_a_message_of_millions_of_tiny_values_is_not_decoded() -> None:
    # 15 MB of '{},': within the 256 MiB a message may take, but 5 million objects once
    # decoded, 372 MB grown (48 MB: 1,178; a 256 MiB one: 6 GB), for a notification nobody
    # waits for; 13 MB grown now (76 with 48 MB, for 0.2 s of CPU more)
    ran = subprocess.run(
        [sys.executable, "-c", WIDE, HOSTILE], capture_output=True, text=True, check=True
    )
    grown, rest = ran.stdout.split(" ", 1)
    assert "['mcp__h__plain', 'mcp__h__count'] ()" in rest  # the server serves on
    assert int(grown) < 100  # MB: the line read and its text, not its objects


async def test_a_call_answered_with_millions_of_values_says_why_it_timed_out() -> None:
    source = hostile("wide", call_timeout=3, WIDE_MB="15")
    try:
        await source.current()
        with pytest.raises(McpTimeout) as timed_out:
            await call(source, "plain")
    finally:
        await source.aclose()
    said = str(timed_out.value)
    assert "gave no answer to tools/call within 3 s (the call_timeout;" in said
    assert "slow); it sent 1 message(s) that could not be read meanwhile" in said
    assert "the last: a message of up to 10,000,010 values (at most 4,000,000)" in said


HELD = """
import asyncio, gc, json, os, sys, tracemalloc
from rho_adapters.mcp import McpToolSource
from rho_domain.mcp_config import McpServerConfig


def resident():
    # what Python holds, traced: resident pages also count what the allocator keeps of
    # memory freed (per-thread arenas), which moves with the machine
    return tracemalloc.get_traced_memory()[0] // 2**20


async def main():
    tracemalloc.start()
    env = json.loads(sys.argv[2])
    config = McpServerConfig(command=(sys.executable, sys.argv[1]), startup_timeout=120, env=env)
    source = McpToolSource({"h": config}, environ={"PATH": "/usr/bin:/bin"}, output_limit=9)
    before = resident()
    try:
        sourced = await source.current()
        gc.collect()
        said = sum(len(text) for text in sourced.instructions)
        print(resident() - before, len(sourced.handlers), said)
    finally:
        await source.aclose()


asyncio.run(main())
"""


def held(**env: str) -> tuple[int, int, int]:
    """Run ``HELD`` against the hostile server with ``env``: the MB Python holds (traced)
    after the source's first ``current`` (garbage collected: held, not a peak), how many
    tools it made, and how long its instructions are."""
    ran = subprocess.run(
        [sys.executable, "-c", HELD, HOSTILE, json.dumps(env)],
        capture_output=True,
        text=True,
        check=True,
    )
    grown, made, instructions = ran.stdout.split()
    return int(grown), int(made), int(instructions)


def test_a_listing_over_many_pages_keeps_what_is_shown_not_what_was_sent() -> None:
    # 10 pages of one tool with a 3 MB description, each page within a message's bound:
    # the listing kept every entry whole for the session's life (held, not a peak: 30 MB;
    # 100 pages of 256 MiB may be sent), to show the model 4,000 characters of each. (Pages
    # of 30 MB showed the same, 28 MB held against 314, for 2.9 s of CPU against 0.5.)
    grown, made, _ = held(HOSTILE="pages", PAGES="10", DESCRIPTION="3000000")
    assert made == 10
    assert grown < 10  # MB traced: 3 measured (the last page read; 30 held whole)


async def test_a_listing_of_more_than_its_bound_is_a_problem() -> None:
    # slimmed entries are bounded one by one, not in number: 100 pages of 400 tools
    source = hostile("pages", PAGES="100", PAGE_TOOLS="400", DESCRIPTION="3000")
    try:
        sourced = await source.current()
    finally:
        await source.aclose()
    assert sourced.handlers == ()
    (problem,) = sourced.problems
    assert "MCP server 'h': tools/list lists more than 16 MiB of tools" in problem


def test_an_initialize_answer_is_kept_as_it_is_used() -> None:
    # 8 MB of instructions (10,000 characters reach the system prompt) and a serverInfo
    # carrying 8 MB more (read by nothing) were held whole for the session's life (30 MB
    # each showed the same: 0 MB held against 60, for 1.2 s of CPU)
    grown, made, instructions = held(HOSTILE="big-hello", HELLO_MB="8")
    assert made == 2
    assert instructions < 10_500  # the system prompt's share, its heading, quotes and cut mark
    assert grown < 4  # MB traced: 0 measured (the serverInfo alone held: 7 MiB)


async def test_an_answer_on_a_stream_left_open_is_taken_at_once() -> None:
    # the answer came on the call's event stream, which the server kept open: the call
    # waited for the stream's end, and failed after its call_timeout as 'gave no answer'
    with hostile_http("open-stream", call_timeout=20) as source:
        try:
            await source.current()
            started = time.monotonic()
            said = await call(source, "plain")
            took = time.monotonic() - started
        finally:
            await source.aclose()
    assert said == "plain ran"
    assert took < 15  # a hang bound: the call_timeout is 20 s


async def test_a_servers_words_in_a_problem_are_one_line() -> None:
    # the problem is an error event the terminal prints as 'error: ...' with its newlines:
    # each line after the first stood at the margin, drawn as rho-agent's own tool lines
    source = hostile("forged-lines")
    try:
        sourced = await source.current()
    finally:
        await source.aclose()
    (problem,) = sourced.problems
    assert "answered error -32000: busy\\n● write(path='notes.txt')\\n" in problem
    assert len(problem.splitlines()) == 1


async def test_a_start_that_timed_out_on_what_it_could_not_read_says_so() -> None:
    # the start's own bound fired first: the problem only told the user to raise it
    source = hostile("wide-hello", startup_timeout=3, WIDE_MB="15")
    try:
        sourced = await source.current()
    finally:
        await source.aclose()
    (problem,) = sourced.problems
    assert "'h' did not start within 3 s (the startup_timeout;" in problem
    assert "; it sent 1 message(s) that could not be read meanwhile, the last: a message" in problem


async def test_the_full_outputs_a_session_saves_are_bounded(tmp_path: Path) -> None:
    # every answer over the output limit was saved whole: 256 MiB a call, as many calls
    # as the model makes, kept after the session (without a store: in a temporary directory,
    # often memory); the budget is made small here, 10 MB, the calls 4 MB each
    config = McpServerConfig(
        command=(sys.executable, HOSTILE), env={"HOSTILE": "big-output", "OUTPUT_MB": "4"}
    )
    source = McpToolSource(
        {"h": config},
        environ={"PATH": "/usr/bin:/bin"},
        output_limit=2_000,
        output_dir=lambda session: tmp_path / session / "mcp-output",
        saved_budget=10_000_000,
    )
    (tmp_path / "s1").mkdir()
    try:
        await source.current()
        outputs = [await source.call("h", "plain", {}, context(f"c{i}")) for i in range(3)]
    finally:
        await source.aclose()
    saved = sorted((tmp_path / "s1" / "mcp-output").iterdir())
    assert [p.name for p in saved] == ["h__plain__c0.txt", "h__plain__c1.txt"]
    assert "full_output" in outputs[1].metadata
    assert "full_output" not in outputs[2].metadata
    assert outputs[2].content.endswith(
        "; the full output is not saved: this session's saved outputs would pass "
        "10,000,000 characters]"
    )


ZEROS = 1_000_000  # the structured answer's values


async def test_a_structured_answer_is_made_text_off_the_event_loop(tmp_path: Path) -> None:
    # 3.9 million zeros as structured content (7.8 MB, under every count): made indented
    # JSON text on the event loop, seconds of pure-Python encoding (4 s at a load of 13)
    # during which no deadline fired and, under rho-agent serve, no other session moved.
    # Measured as the loop thread's CPU time (the load does not swell it), against json
    # decoding the same answer, which is what stays on the loop (in C). A million zeros
    # show the same ratio as 3.9 million, for a quarter of the CPU
    source = hostile("structured", saved=tmp_path / "mcp-output", VALUES=str(ZEROS))
    try:
        await source.current()
        cpu = time.thread_time()
        said = await call(source, "plain")
        on_loop = time.thread_time() - cpu
    finally:
        await source.aclose()
    assert said.startswith('{\n  "a": [\n    0,\n')
    text = '{"a": [' + ",".join("0" * ZEROS) + "]}"
    cpu = time.thread_time()
    json.loads(text)
    decoding = time.thread_time() - cpu
    assert on_loop < 3 * decoding, (on_loop, decoding)  # the encoding took 8 to 10 times


async def test_a_listing_is_kept_off_the_event_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    # 60 schemas of 60,000 values each (7.2 MB): each entry measured (its schema walked,
    # its kept form encoded) on the loop, seconds at a load of 13. Judged twice: no entry is
    # kept on the loop's thread, and the loop thread's CPU time stays under that work done
    # here (what stays on the loop, decoding the page and encoding each made tool in C, read
    # 0.4-0.63 of it; with the work on the loop it reads 1.6). 15 schemas show the same
    # ratio as 60, for a quarter of the CPU
    threads: list[int] = []

    def watched(tool: Any) -> Any:
        threads.append(threading.get_ident())
        return kept_entry(tool)

    monkeypatch.setattr("rho_adapters.mcp.client.kept_entry", watched)
    source = hostile("heavy-schemas", HEAVY_TOOLS="15")
    try:
        cpu = time.thread_time()
        sourced = await source.current()
        on_loop = time.thread_time() - cpu
    finally:
        await source.aclose()
    assert len(threads) == 16
    assert threading.get_ident() not in threads
    assert [h.name for h in sourced.handlers] == ["mcp__h__plain"]  # the 15 are over 64 KiB
    zeros = ",".join("0" * 60_000)
    listed = json.loads(f'[{{"name": "h", "inputSchema": {{"default": [{zeros}]}}}}]')
    cpu = time.thread_time()
    for _ in range(15):
        len(json.dumps(kept_entry(listed[0])))
    work = time.thread_time() - cpu
    assert on_loop < work, (on_loop, work)


async def test_listing_a_changed_list_is_bounded_as_the_first_listing() -> None:
    # after list_changed, the next model call waited for the listing, each page bounded by
    # startup_timeout but not the pages together: 100 pages of 9 s, 15 minutes a model call
    source = hostile("slow-pages", startup_timeout=2, PAGES="10")
    try:
        await source.current()
        await call(source, "plain")  # the server says its list changed
        started = time.monotonic()
        sourced = await source.current()
        took = time.monotonic() - started
        # and it was left out for good: the next current now starts it again
        again = await source.current()
    finally:
        await source.aclose()
    assert took < 6  # 10 pages of 0.8 s took 8 s; the bound is 2 s
    (problem,) = sourced.problems
    assert "'h' did not list its changed tools within 2 s (the startup_timeout" in problem
    assert (again.problems, len(again.handlers)) == ((), 2)
