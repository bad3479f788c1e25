"""Helpers for the tests of the server's walls: a real uvicorn server holding one session
with a secret prompt, and requests written byte for byte (``Served.send``), so that Host,
Origin, Content-Type and Authorization are exactly what an attacker would send, duplicates
included."""

from __future__ import annotations

import contextlib
import json
import shutil
import socket
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from server_support import UvicornThread, app_for, place

from rho_adapters.fakes import ScriptedModel, text

SECRET = "SECRET-PROMPT-7f3a"
BODY = json.dumps({"prompt": "start"}).encode()


class Served:
    """A server with one finished session whose prompt is ``SECRET``."""

    def __init__(self, thread: UvicornThread, where: Any) -> None:
        self.thread = thread
        self.port = thread.port
        self.token = thread.token
        self.where = where
        self.host = f"127.0.0.1:{self.port}"
        self.sid = ""  # the session with the secret prompt

    def send(
        self,
        method: str,
        path: str,
        *,
        host: str | None = None,
        token: str | None = None,
        headers: Sequence[tuple[str, str]] = (),
        body: bytes = b"",
        hosts: Sequence[str] | None = None,
        version: str = "HTTP/1.1",
    ) -> tuple[int, dict[str, Any]]:
        """One request; ``host`` / ``token`` default to the right ones (``hosts`` sends
        several Host headers, ``token=""`` none)."""
        host_lines = hosts if hosts is not None else [self.host if host is None else host]
        given = self.token if token is None else token
        lines = [f"{method} {path} {version}", *(f"Host: {h}" for h in host_lines)]
        if given:
            lines.append(f"Authorization: Bearer {given}")
        lines += [f"{name}: {value}" for name, value in headers]
        if body or method not in ("GET", "HEAD"):
            lines.append(f"Content-Length: {len(body)}")
        lines += ["Connection: close", "", ""]
        return raw(self.port, "\r\n".join(lines).encode("latin-1") + body)

    def sessions(self) -> list[str]:
        """The sessions on disk (what a refused request must not have added to)."""
        root = self.where.sessions
        return sorted(p.name for p in root.iterdir()) if root.exists() else []

    def reset(self) -> None:
        """Back to the one finished secret session, as a fresh server starts: every other
        session (one a test created) is waited for, closed and its files removed, so that a
        server shared by a module's tests gives each the same state. The secret session must
        still be there, completed: a test that changed it would change the next one's start."""
        for sid in self.sessions():
            if sid == self.sid:
                continue
            self.send("GET", f"/api/sessions/{sid}/stream?until=idle")
            closed = self.send("DELETE", f"/api/sessions/{sid}")
            assert closed[0] == 200, closed
            shutil.rmtree(self.where.sessions / sid)
        assert self.sessions() == [self.sid]
        detail = self.send("GET", f"/api/sessions/{self.sid}")
        assert (detail[0], detail[1]["status"]) == (200, "completed"), detail


def raw(port: int, request: bytes) -> tuple[int, dict[str, Any]]:
    with socket.create_connection(("127.0.0.1", port), timeout=20) as sock:
        sock.sendall(request)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    assert SECRET.encode() not in body or status < 300, body
    try:
        parsed = json.loads(body) if body else {}
    except ValueError:
        parsed = {"raw": body.decode("utf-8", "replace")}
    return status, parsed if isinstance(parsed, dict) else {"list": parsed}


@contextlib.contextmanager
def serving(tmp_path: Path, **changes: Any) -> Iterator[Served]:
    """A server (``agent.example.com`` allowed as a proxy's name; ``changes`` to its
    settings) with one finished session whose prompt is ``SECRET``. Shared by a module's
    tests (``Served.reset`` between them): the model has an answer for every session they
    create."""
    where = place(tmp_path)
    model = ScriptedModel([text("done")] * 200)
    app = app_for(where, model, allowed_hosts=("agent.example.com",), **changes)
    with UvicornThread(app) as thread:
        server = Served(thread, where)
        created = server.send(
            "POST",
            "/api/sessions",
            headers=[("Content-Type", "application/json")],
            body=json.dumps({"prompt": SECRET}).encode(),
        )
        assert created[0] == 201, created
        server.sid = created[1]["id"]
        idle = server.send("GET", f"/api/sessions/{server.sid}/stream?until=idle")
        assert idle[0] == 200, idle
        yield server


def refused(answer: tuple[int, dict[str, Any]], status: int, code: str) -> None:
    assert answer[0] == status, answer
    assert answer[1]["error"]["code"] == code, answer
