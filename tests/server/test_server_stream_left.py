"""A client that asks for a session's stream and leaves before reading it, over a real
uvicorn socket: the replay of the trace was written a line a write, without yielding to the
loop, so every line went to the closed socket before the server heard the client go, and
asyncio logged "socket.send() raised exception." for each (855 lines for three such
requests of a 287-line trace: a log flood any holder of the token, or a tab closed at the
wrong moment, set off). The replay now goes in chunks of ``sse.REPLAY_CHUNK`` bytes and
hears a client gone between them; the stream's slot comes back, and a client that reads
gets every line once, in order."""

from __future__ import annotations

import json
import logging
import socket
from pathlib import Path

import httpx
import pytest
from server_support import UvicornThread, app_for, client_for, parse_sse, place, wait_for, wait_idle

from rho_adapters.fakes import FunctionModel, Turn, call, text, tools
from rho_domain.model import ModelRequest
from rho_entry.server.sse import REPLAY_CHUNK


def _long(request: ModelRequest) -> Turn:
    """One run of twenty turns that read, then an answer: small lines, each a write of its own
    before, and each write to the closed socket a warning (a trace read from memory: a
    longer one was read in a thread, and the client's going heard meanwhile)."""
    turns = len(request.messages) // 2
    if turns < 20:
        asked = {"path": "README.md", "limit": turns + 1}  # each call another (not stuck)
        return tools(call("read", asked))
    return text("done")


def test_a_client_leaving_before_it_reads_floods_no_log(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    app = app_for(place(tmp_path), FunctionModel(_long))
    with (
        UvicornThread(app) as server,
        httpx.Client(base_url=server.url, headers=server.auth, timeout=30) as client,
    ):
        sid = client.post("/api/sessions", json={"prompt": "p0"}).json()["id"]
        wait_for(lambda: client.get(f"/api/sessions/{sid}").json()["liveness"] != "running", "idle")
        whole = client.get(f"/api/sessions/{sid}/stream", params={"until": "idle"})
        lines = [event for event in parse_sse(whole.text) if event.get("id")]
        assert [int(event["id"]) for event in lines] == list(range(1, len(lines) + 1))
        with caplog.at_level(logging.WARNING, logger="asyncio"):
            for _ in range(3):
                with socket.create_connection(("127.0.0.1", server.port)) as sock:
                    sock.sendall(
                        f"GET /api/sessions/{sid}/stream HTTP/1.1\r\n"
                        f"Host: 127.0.0.1:{server.port}\r\n"
                        f"Authorization: Bearer {server.token}\r\n\r\n".encode()
                    )
            wait_for(lambda: app.state.host.feeds.streams == 0, "the streams' slots back")
            # one more request answered: whatever the server was writing is written by now
            assert client.get(f"/api/sessions/{sid}").is_success
    said = [r.getMessage() for r in caplog.records if r.name == "asyncio"]
    assert said == []  # before: a "socket.send() raised exception." for each line


def _wide(request: ModelRequest) -> Turn:
    """Three turns of 30,000 characters, then an answer: a trace of several chunks."""
    turns = len(request.messages) // 2
    if turns < 3:
        return tools(call("read", {"path": "README.md", "limit": turns + 1}), text="w" * 30000)
    return text("done")


async def test_a_replay_of_several_chunks_sends_every_line_once_in_order(tmp_path: Path) -> None:
    async with client_for(app_for(place(tmp_path), FunctionModel(_wide))) as client:
        sid = (await client.post("/api/sessions", json={"prompt": "go"})).json()["id"]
        await wait_idle(client, sid)
        whole = await client.get(f"/api/sessions/{sid}/stream", params={"until": "idle"})
    lines = [event for event in parse_sse(whole.text) if event.get("id")]
    assert sum(len(event["data"]) for event in lines) > REPLAY_CHUNK
    assert [int(event["id"]) for event in lines] == list(range(1, len(lines) + 1))
    assert [json.loads(event["data"])["seq"] for event in lines] == list(range(1, len(lines) + 1))
