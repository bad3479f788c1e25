"""What one client can hold on a server, on a real uvicorn socket: event streams (at most
``max_streams`` at once) and a request body it does not finish sending (``body_seconds``).

Each stream holds a task and polls the store; nothing bounded them, so one holder of the token
opened as many as it liked (1,000 streams of one session, each answered 200). Past the bound a
stream is refused 429 ``busy`` with ``Retry-After``, naming the setting, before anything is
sent; a create that asks for its stream is refused before it creates anything; a client that
leaves (after reading, or at once) gives its slot back. A body sent slowly, or stopped short
of its declared length, held its handler (and up to 256 KiB of memory) for good: it is now
answered 408 once ``body_seconds`` have passed.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from security_support import BODY, Served, refused, serving
from server_support import wait_for

from rho_domain.errors import ConfigError
from rho_entry.server.settings import ServerSettings


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with serving(tmp_path_factory.mktemp("held"), max_streams=2, body_seconds=0.3) as server:
        yield server


def _open_stream(server: Served) -> tuple[socket.socket, bytes]:
    """A stream of the session, held open (``after=end``: it waits for new lines); the
    socket and the answer's status line."""
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=20)
    sock.sendall(
        f"GET /api/sessions/{server.sid}/stream?after=end HTTP/1.1\r\nHost: {server.host}\r\n"
        f"Authorization: Bearer {server.token}\r\n\r\n".encode()
    )
    return sock, sock.recv(4096).split(b"\r\n", 1)[0]


def _admitted(server: Served) -> bool:
    """Whether a stream is admitted now (``until=idle`` on an idle session ends at once)."""
    return server.send("GET", f"/api/sessions/{server.sid}/stream?until=idle")[0] == 200


def test_streams_past_the_bound_are_refused_and_slots_come_back(served: Served) -> None:
    held = [_open_stream(served) for _ in range(2)]
    assert [status for _, status in held] == [b"HTTP/1.1 200 OK"] * 2
    try:
        # until=idle: admitted, this stream would end at once (the session is idle)
        over = served.send("GET", f"/api/sessions/{served.sid}/stream?until=idle")
        refused(over, 429, "busy")
        message = over[1]["error"]["message"]
        assert "2 event streams are open" in message
        assert "RHO_AGENT_SERVER_MAX_STREAMS" in message
        assert "--max-streams" in message
        before = served.sessions()
        create = served.send(
            "POST",
            "/api/sessions",
            headers=[("Content-Type", "application/json"), ("Accept", "text/event-stream")],
            body=BODY,
        )
        refused(create, 429, "busy")
        assert served.sessions() == before  # refused before anything was created
        # other routes are not streams: they still answer
        assert served.send("GET", f"/api/sessions/{served.sid}")[0] == 200
    finally:
        held[0][0].close()
    wait_for(lambda: _admitted(served), "a slot given back by a client that left")
    # clients that ask and leave at once (their responses cancelled before the body's first
    # step) give their slots back too: two streams can be held again afterwards
    for _ in range(10):
        with socket.create_connection(("127.0.0.1", served.port)) as sock:
            sock.sendall(
                f"GET /api/sessions/{served.sid}/stream?after=end HTTP/1.1\r\n"
                f"Host: {served.host}\r\nAuthorization: Bearer {served.token}\r\n\r\n".encode()
            )
    held[1][0].close()
    wait_for(lambda: _admitted(served), "the slots of clients that left at once")
    again = [_open_stream(served) for _ in range(2)]
    try:
        assert [status for _, status in again] == [b"HTTP/1.1 200 OK"] * 2
    finally:
        for sock, _ in again:
            sock.close()


def test_a_body_stopped_short_is_answered_408_and_its_connection_closed(served: Served) -> None:
    """A body stopped short of its length (after ``Expect: 100-continue`` too, which the
    server answers before the handler reads), and one declared over the limit: refused
    with ``Connection: close`` and closed at once. Before, uvicorn kept the connection for its
    keep-alive timeout (5 s) waiting for the rest of a body whose request was answered."""
    before = served.sessions()
    heads = [
        ('Content-Length: 4000\r\n\r\n{"prompt": "', b"HTTP/1.1 408", b"(12 bytes came)"),
        ("Content-Length: 40\r\nExpect: 100-continue\r\n\r\n", b"HTTP/1.1 408", b"(0 bytes"),
        ("Content-Length: 999999999\r\n\r\n", b"HTTP/1.1 413", b"over the limit"),
    ]
    for rest, status, said in heads:
        with socket.create_connection(("127.0.0.1", served.port), timeout=20) as sock:
            sock.sendall(
                f"POST /api/sessions HTTP/1.1\r\nHost: {served.host}\r\n"
                f"Authorization: Bearer {served.token}\r\nContent-Type: application/json\r\n"
                f"{rest}".encode()
            )
            answer = b""  # before: no answer, ever (the handler waited for the rest)
            while chunk := sock.recv(4096):  # to the end: the server closes the connection
                answer += chunk
        head, _, body = answer.removeprefix(b"HTTP/1.1 100 Continue\r\n\r\n").partition(b"\r\n\r\n")
        assert head.startswith(status), answer
        assert b"connection: close" in head.lower(), answer
        assert said in body, answer
    assert served.sessions() == before


def test_the_bound_is_a_setting_checked_when_read(tmp_path: Path) -> None:
    root = str(tmp_path)
    for value in ("0", "-3", "x"):
        env = {"RHO_AGENT_SERVER_MAX_STREAMS": value, "RHO_AGENT_SERVER_ROOTS": root}
        with pytest.raises(ConfigError, match="RHO_AGENT_SERVER_MAX_STREAMS"):
            ServerSettings.from_environ(env, sessions_root=tmp_path)
    env = {"RHO_AGENT_SERVER_MAX_STREAMS": "7", "RHO_AGENT_SERVER_ROOTS": root}
    assert ServerSettings.from_environ(env, sessions_root=tmp_path).max_streams == 7
    assert ServerSettings(sessions_root=tmp_path).max_streams == 100
