"""The event stream over a real uvicorn socket on loopback: reconnecting with Last-Event-ID,
a client that goes away mid-stream, keep-alive comments, several subscribers; and sessions
shared with the CLI (watched over HTTP, listed by ``rho-agent --list``)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from server_support import (
    UvicornThread,
    app_for,
    client_for,
    parse_sse,
    place,
    shown_in,
    sse_blocks,
    wait_idle,
)

from rho_adapters.fakes import FunctionModel, ScriptedModel, Turn, call, text, tools
from rho_adapters.store import read_trace
from rho_domain.model import ModelRequest
from rho_entry.client import AgentClient, ServerEvent

WRITE = call("write", {"path": "out.txt", "content": "hi\n"}, id="c1")


def _trace_kinds(where: Any, sid: str) -> list[str]:
    return [e.kind for e in read_trace(where.sessions / sid / "trace.jsonl").events]


async def test_a_reconnect_with_last_event_id_loses_nothing_and_repeats_nothing(
    tmp_path: Path,
) -> None:
    where = place(tmp_path)
    model = ScriptedModel([tools(WRITE), tools(call("list", {"path": "."})), text("All done.")])
    with UvicornThread(app_for(where, model)) as server:
        async with httpx.AsyncClient(base_url=server.url, headers=server.auth, timeout=20) as http:
            created = await http.post(
                "/api/sessions", json={"prompt": "write", "profile": "developer"}
            )
            sid = created.json()["id"]
            first: list[dict[str, Any]] = []
            async with http.stream("GET", f"/api/sessions/{sid}/stream") as response:
                async for block in sse_blocks(response):
                    first.append(block)
                    if block.get("event") == "approval_requested":
                        break  # the client goes away while the session waits
            last_id = max(int(b["id"]) for b in first if "id" in b)
            # the run goes on while nobody listens
            answer = await http.post(
                f"/api/sessions/{sid}/approvals/c1",
                json={
                    "decision": "approve",
                    "digest": shown_in(where.work, WRITE.name, WRITE.arguments),
                },
            )
            assert answer.status_code == 202
            async with http.stream(
                "GET",
                f"/api/sessions/{sid}/stream",
                params={"until": "idle"},
                headers={"Last-Event-ID": str(last_id)},
            ) as response:
                second = [b async for b in sse_blocks(response)]
    ids = [int(b["id"]) for b in first + second if "id" in b]
    kinds = [b["event"] for b in first + second if "id" in b]
    assert ids == list(range(1, len(ids) + 1))  # no gap, no duplicate
    assert kinds == _trace_kinds(where, sid)  # the whole trace, in order
    assert kinds[-1] == "run_end"
    assert "tool_end" in kinds[kinds.index("approval_resolved") :]


async def test_a_client_leaving_mid_stream_does_not_disturb_the_run(tmp_path: Path) -> None:
    where = place(tmp_path)
    gate: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = []

    async def slow(request: ModelRequest) -> Turn:
        if not gate:
            gate.append((asyncio.get_running_loop(), asyncio.Event()))
            await gate[0][1].wait()  # held until the client has gone
        return Turn(text="finished anyway")

    with UvicornThread(app_for(where, FunctionModel(slow))) as server:
        async with httpx.AsyncClient(base_url=server.url, headers=server.auth, timeout=20) as http:
            sid = (await http.post("/api/sessions", json={"prompt": "go"})).json()["id"]
            async with http.stream("GET", f"/api/sessions/{sid}/stream") as response:
                async for block in sse_blocks(response):
                    if block.get("event") == "llm_start":
                        break
            loop, event = gate[0]
            loop.call_soon_threadsafe(event.set)
            async with AgentClient(server.url, token=server.token) as client:
                seen = [e async for e in client.events(sid, until_idle=True)]
                detail = await client.get_session(sid)
    assert detail["status"] == "completed"
    assert seen[-1].kind == "run_end"
    assert seen[-1].data["text"] == "finished anyway"


async def test_an_idle_stream_sends_keep_alive_comments(tmp_path: Path) -> None:
    where = place(tmp_path)
    app = app_for(where, ScriptedModel([]), keepalive_seconds=0.05)
    with UvicornThread(app) as server:
        async with httpx.AsyncClient(base_url=server.url, headers=server.auth, timeout=20) as http:
            sid = (await http.post("/api/sessions", json={})).json()["id"]
            comments = 0
            async with http.stream("GET", f"/api/sessions/{sid}/stream") as response:
                assert response.headers["content-type"].startswith("text/event-stream")
                assert response.headers["cache-control"] == "no-cache"
                async for line in response.aiter_lines():
                    comments += line == ": keep-alive"
                    if comments == 2:
                        break
    assert comments == 2


async def test_several_subscribers_see_the_same_events(tmp_path: Path) -> None:
    where = place(tmp_path)
    model = ScriptedModel([tools(call("list", {"path": "."})), text("Listed.")])
    with UvicornThread(app_for(where, model)) as server:
        async with AgentClient(server.url, token=server.token) as client:
            sid = (await client.create_session())["id"]

            async def watch() -> list[ServerEvent]:
                return [e async for e in client.events(sid, until_idle=True)]

            watchers = [asyncio.ensure_future(watch()) for _ in range(3)]
            await client.chat(sid, "list it")
            seen = await asyncio.gather(*watchers)
    persisted = [[(e.id, e.kind) for e in events if e.id is not None] for events in seen]
    assert persisted[0] == persisted[1] == persisted[2]
    assert [kind for _, kind in persisted[0]] == _trace_kinds(where, sid)


async def test_a_cli_session_is_watched_over_http_and_http_sessions_are_listed_by_the_cli(
    tmp_path: Path,
) -> None:
    where = place(tmp_path)
    env = {"RHO_AGENT_HOME": str(where.home), "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    env |= {k: v for k, v in os.environ.items() if k == "PYTHONPATH"}  # the sources under test

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        # processes of their own, forked from the CLI's zygote (program_zygote, on the path
        # since server_support): the interpreter's start, ~0.3 s of CPU each, is not what
        # this test is about
        from program_zygote import run

        argv = [sys.executable, "-m", "rho_entry", *args]
        return run("rho", argv, cwd=where.work, env=env, text=True, timeout=60)

    done = cli("--model", "demo", "what is here?")
    assert done.returncode == 0, done.stderr
    async with client_for(app_for(where, ScriptedModel([text("from http")]))) as client:
        listed = (await client.get("/api/sessions")).json()["sessions"]
        assert len(listed) == 1
        assert listed[0]["model"] == "demo"
        cli_id = listed[0]["id"]
        body = (await client.get(f"/api/sessions/{cli_id}/stream?until=idle")).text
        http_id = (await client.post("/api/sessions", json={"prompt": "hi"})).json()["id"]
        await wait_idle(client, http_id)
    kinds = [e["event"] for e in parse_sse(body) if "id" in e]
    assert kinds == _trace_kinds(where, cli_id)
    listing = cli("--list")
    assert http_id in listing.stdout
    assert cli_id in listing.stdout
    exported = cli("export", http_id)
    assert json.loads(exported.stdout)["events"][-1]["text"] == "from http"


async def test_the_client_gives_up_on_a_stream_cut_every_time_and_on_a_foreign_event() -> None:
    """A server (or a proxy before it) that ends every stream before an event: ``events``
    reconnected at once, for good, in a tight loop (348 connections in 2 s, never an
    error). It now waits longer each time and raises after ``RECONNECTS`` connections that
    brought nothing. An event whose id is not a number raised a bare ValueError: now an
    ``ApiError`` saying the server is not this API."""
    from rho_entry.client import RECONNECTS
    from rho_entry.server.errors import ApiError

    answers = [b"id: 1\n", b"id: x\ndata: {}\n\n"]  # cut mid-event; an id that is no number
    head = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n"
    connections = 0

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        try:
            await reader.readuntil(b"\r\n\r\n")
            writer.write(head + answers[0])
            await writer.drain()
        finally:
            writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
    async with server, AgentClient(url, token="t", environ={}) as client:
        made = []
        for message in ("ended 5 times in a row before any event", "not this API's (id 'x'"):
            connections = 0
            async with asyncio.timeout(10):
                with pytest.raises(ApiError) as refused:
                    async for _ in client.events("s1"):
                        pass
            assert message in str(refused.value)
            made.append(connections)
            answers.pop(0)
    assert made == [RECONNECTS, 1]


async def test_the_client_refuses_an_event_past_its_bound_before_holding_it() -> None:
    """A hostile or broken server sending ``xxxx...`` without a newline: httpx's
    ``aiter_lines`` held the whole line in memory (the client grew until it died). Now the
    event is refused once it passes ``event_bytes``, and CR, LF and CRLF (one split across
    reads) still end lines."""
    from rho_entry.server.errors import ApiError

    sent = 0

    async def body() -> Any:
        nonlocal sent
        yield b'id: 1\r\ndata: {"a": 1}\r'
        yield b"\n\r\n"  # the CRLF split across reads: one blank line, one event
        yield b'id: 2\rdata: {"b": 2}\n\n'
        while sent < 4 * 1024 * 1024:  # 4 MiB: ends, so the old reader ends too
            sent += 4096
            yield b"x" * 4096

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body())

    transport = httpx.MockTransport(answer)
    async with AgentClient("http://server.test", token="t", environ={}, transport=transport) as c:
        c.event_bytes = 64 * 1024
        events: list[ServerEvent] = []

        async def read() -> None:
            async for event in c.events("s1", until_idle=True):
                events.append(event)

        with pytest.raises(ApiError, match="an event of more than 65536 bytes"):
            await read()
    assert events == [ServerEvent(1, "message", {"a": 1}), ServerEvent(2, "message", {"b": 2})]
    assert sent <= 64 * 1024 + 8192
