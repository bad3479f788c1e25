"""A connection must ask within a deadline, and past a bound every request is answered 503
(``server/connections.py``): uvicorn runs no app code before a request's head is complete,
so ``max_runs`` and ``max_streams`` never saw a client that opened connections and sent its
head a byte at a time, or not at all (slowloris: each held a socket for good)."""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from security_support import raw
from server_support import UvicornThread, app_for, place, settings

from rho_adapters.fakes import ScriptedModel
from rho_entry.server.connections import CONNECTION_HEADROOM, uvicorn_limits


def _server(tmp_path: Path, body_seconds: float) -> UvicornThread:
    where = place(tmp_path)
    changes: dict[str, Any] = {"body_seconds": body_seconds, "max_runs": 1, "max_streams": 1}
    app = app_for(where, ScriptedModel([]), **changes)
    return UvicornThread(app, **uvicorn_limits(settings(where, **changes)))


def _closed(sock: socket.socket) -> bool:
    """Whether the server closes ``sock`` (reading what it answers first) within 20 s."""
    sock.settimeout(20)
    try:
        while sock.recv(65536):
            pass
    except TimeoutError:
        return False
    return True


def test_a_request_head_that_does_not_arrive_in_time_closes_its_connection(
    tmp_path: Path,
) -> None:
    with _server(tmp_path, 0.3) as server:
        auth = f"Authorization: Bearer {server.token}\r\n"
        head = f"GET /api/sessions HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n{auth}"
        with socket.create_connection(("127.0.0.1", server.port)) as silent:
            assert _closed(silent)  # connected, never wrote: held forever before
        with socket.create_connection(("127.0.0.1", server.port)) as trickle:
            trickle.sendall(head[:20].encode())
            assert _closed(trickle)
        with socket.create_connection(("127.0.0.1", server.port)) as kept:
            kept.sendall(f"{head}\r\n".encode())  # answered, kept alive: the next head is late
            kept.settimeout(20)
            assert kept.recv(65536).startswith(b"HTTP/1.1 200")
            kept.sendall(head[:20].encode())
            assert _closed(kept)


def test_past_the_connection_bound_every_request_is_answered_503(tmp_path: Path) -> None:
    bound = 1 + 1 + CONNECTION_HEADROOM
    with _server(tmp_path, 30.0) as server, contextlib.ExitStack() as idle:
        for _ in range(bound - 1):
            idle.enter_context(socket.create_connection(("127.0.0.1", server.port)))
        request = (
            f"GET /api/sessions HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
            f"Authorization: Bearer {server.token}\r\nConnection: close\r\n\r\n"
        ).encode()
        statuses = list(_statuses(server.port, request))
        assert statuses[-1] == 503, statuses


def _statuses(port: int, request: bytes) -> Iterator[int]:
    """Statuses of ``request`` until the first 503 (the idle connections are accepted by the
    server's loop in their own time), at most 50."""
    for _ in range(50):
        status = raw(port, request)[0]
        yield status
        if status == 503:
            return
