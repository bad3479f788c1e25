"""Who is asking: each wall of ``rho-agent serve`` alone, on a real uvicorn socket.

Every request is written byte for byte (``raw``), so the Host, Origin, Content-Type and
Authorization headers are exactly what an attacker would send, duplicates included. Each
refusal test changes ONE thing in an otherwise valid request (token, Host, origin, JSON), and
checks the specific refusal and the absence of the effect: no session created, no session
data (a secret prompt) in the answer.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
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


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    where = place(tmp_path)
    model = ScriptedModel([text("done")] * 20)
    with UvicornThread(app_for(where, model, allowed_hosts=("agent.example.com",))) as thread:
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


def _code(answer: tuple[int, dict[str, Any]], status: int, code: str) -> None:
    assert answer[0] == status, answer
    assert answer[1]["error"]["code"] == code, answer


# -- Host --------------------------------------------------------------------------------------

BAD_HOSTS = [
    "attacker.example",
    "attacker.example:{port}",
    "localhost.:{port}",  # the trailing dot: another name to a browser
    "localhost.",
    "127.0.0.1.nip.io:{port}",
    "localhost.attacker.example:{port}",
    "127.1:{port}",
    "2130706433:{port}",
    "0x7f.0.0.1:{port}",
    "0177.0.0.1:{port}",
    "127.0.0.2:{port}",
    "[::ffff:127.0.0.1]:{port}",
    "::1:{port}",  # IPv6 without brackets
    "[::1",
    "localhost:{other}",  # the right name, another port
    "localhost",  # no port: port 80, not this server's
    "127.0.0.1",
    "[::1]:{other}",
    "[::1]",
    "[fe80::1]:{port}",
    "127.0.0.1:0{port}x",
    "127.0.0.1:",
    "user@localhost:{port}",
    "localhost:{port}/x",
    "localhost:{port}#@attacker.example",
    "",
    "evil.agent.example.com",  # allowed names are exact, not suffixes
]


@pytest.mark.parametrize("host", BAD_HOSTS)
def test_a_valid_request_with_a_foreign_host_is_refused(served: Served, host: str) -> None:
    """DNS rebinding: the page's own name in Host; the token does not help it."""
    spelled = host.format(port=served.port, other=served.port + 1)
    for path in ("/api/sessions", f"/api/sessions/{served.sid}", "/", "/dashboard"):
        _code(served.send("GET", path, host=spelled), 421, "wrong_host")
    stream = f"/api/sessions/{served.sid}/stream?until=idle"
    _code(served.send("GET", stream, host=spelled), 421, "wrong_host")
    before = served.sessions()
    posted = served.send(
        "POST",
        "/api/sessions",
        host=spelled,
        headers=[("Content-Type", "application/json")],
        body=BODY,
    )
    _code(posted, 421, "wrong_host")
    assert served.sessions() == before


def test_two_host_headers_or_none_are_refused(served: Served) -> None:
    """uvicorn's parser (h11) refuses these itself (400); an HTTP/1.0 request may omit Host
    and reaches the guard, which refuses it."""
    good = served.host
    for hosts in ([good, "attacker.example"], ["attacker.example", good], []):
        status, body = served.send("GET", "/api/sessions", hosts=hosts)
        assert status in (400, 421), body
    _code(served.send("GET", "/api/sessions", hosts=[], version="HTTP/1.0"), 421, "wrong_host")


async def test_the_guard_itself_refuses_two_host_headers(tmp_path: Path) -> None:
    """Behind a server that lets duplicates through, the app refuses them (ASGI, in-process)."""
    app = app_for(place(tmp_path), ScriptedModel([]))
    token = app.state.token
    for hosts in (["localhost", "attacker.example"], ["attacker.example", "localhost"], []):
        headers = [(b"host", h.encode()) for h in hosts]
        headers.append((b"authorization", f"Bearer {token}".encode()))
        status, body = await asgi_get(app, "/api/sessions", headers)
        assert status == 421, body
        assert json.loads(body)["error"]["code"] == "wrong_host"
    status, _ = await asgi_get(
        app,
        "/api/sessions",
        [(b"host", b"localhost"), (b"authorization", f"Bearer {token}".encode())],
    )
    assert status == 200
    await app.state.host.aclose()


async def asgi_get(app: Any, path: str, headers: list[tuple[bytes, bytes]]) -> tuple[int, bytes]:
    """One GET through the ASGI app with exactly these headers."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": headers,
        "server": ("127.0.0.1", 80),
        "client": ("127.0.0.1", 50000),
    }
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(scope, receive, send)
    status = next(m["status"] for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return status, body


@pytest.mark.parametrize(
    "host",
    [
        "127.0.0.1:{port}",
        "localhost:{port}",
        "LOCALHOST:{port}",
        "LocalHost:{port}",
        "[::1]:{port}",
        "[0:0:0:0:0:0:0:1]:{port}",
        "agent.example.com",  # --allow-host: a reverse proxy's name, any port
        "Agent.Example.COM:443",
    ],
)
def test_the_names_of_the_server_are_answered(served: Served, host: str) -> None:
    status, body = served.send("GET", "/api/sessions", host=host.format(port=served.port))
    assert status == 200, body
    assert [s["first_prompt"] for s in body["sessions"]] == [SECRET]


# -- the token ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/"),
        ("GET", "/api/sessions"),
        ("GET", "/api/openapi.json"),
        ("GET", "/api/sessions/{sid}"),
        ("GET", "/api/sessions/{sid}/stream?until=idle"),
        ("POST", "/api/sessions"),
        ("POST", "/api/sessions/{sid}/chat"),
        ("POST", "/api/sessions/{sid}/approvals/c1"),
        ("POST", "/api/sessions/{sid}/cancel"),
        ("POST", "/api/sessions/{sid}/resume"),
        ("DELETE", "/api/sessions/{sid}"),
        ("GET", "/dashboard/other.js"),
        ("POST", "/dashboard"),
    ],
)
def test_every_route_wants_the_token(served: Served, method: str, path: str) -> None:
    target = path.format(sid=served.sid)
    before = served.sessions()
    body = json.dumps({"prompt": "more"}).encode() if method == "POST" else b""
    json_type = [("Content-Type", "application/json")]
    for token in ("", served.token[:-1], served.token + "x", served.token.upper(), "null"):
        answer = served.send(method, target, token=token, headers=json_type, body=body)
        _code(answer, 401, "unauthorized")
    assert served.sessions() == before
    assert served.send("GET", f"/api/sessions/{served.sid}")[1]["status"] == "completed"


def test_the_token_only_counts_as_one_bearer_header(served: Served) -> None:
    right = served.token
    variants: list[list[tuple[str, str]]] = [
        [("Authorization", f"Basic {right}")],
        [("Authorization", right)],
        [("Authorization", f"Bearer {right}"), ("Authorization", "Bearer wrong")],
        [("Cookie", f"token={right}")],
        [("X-Token", right)],
    ]
    for headers in variants:
        _code(served.send("GET", "/api/sessions", token="", headers=headers), 401, "unauthorized")
    in_query = served.send("GET", f"/api/sessions?token={right}", token="")
    _code(in_query, 401, "unauthorized")
    lower = served.send(
        "GET", "/api/sessions", token="", headers=[("Authorization", f"bearer {right}")]
    )
    assert lower[0] == 200  # the scheme's name is case-insensitive (RFC 9110)


def test_the_dashboard_page_alone_loads_without_the_token(served: Served) -> None:
    for path in ("/dashboard", "/dashboard/dashboard.js", "/dashboard/dashboard.css"):
        status, _ = served.send("GET", path, token="")
        assert status == 200, path


# -- Origin ------------------------------------------------------------------------------------

BAD_ORIGINS = [
    "http://attacker.example",
    "null",
    "http://localhost:{other}",  # same site, another port: another origin
    "http://127.0.0.1:{other}",
    "https://127.0.0.1:{port}",  # another scheme
    "http://localhost:{port}",  # the same machine by another name: another origin
    "http://127.0.0.1",
    "http://127.0.0.1:{port}.attacker.example",
    "http://127.0.0.1:{port}@attacker.example",
    "http://127.0.0.1:{port}/path",
    "file://",
    "chrome-extension://abc",
    "",
]


@pytest.mark.parametrize("origin", BAD_ORIGINS)
def test_a_state_changing_request_from_another_origin_is_refused(
    served: Served, origin: str
) -> None:
    spelled = origin.format(port=served.port, other=served.port + 1)
    sid = served.sid
    json_type = ("Content-Type", "application/json")
    before = served.sessions()
    for method, path, body in [
        ("POST", "/api/sessions", BODY),
        ("POST", f"/api/sessions/{sid}/chat", json.dumps({"prompt": "more"}).encode()),
        ("POST", f"/api/sessions/{sid}/cancel", b""),
        ("DELETE", f"/api/sessions/{sid}", b""),
    ]:
        answer = served.send(method, path, headers=[json_type, ("Origin", spelled)], body=body)
        _code(answer, 403, "cross_origin")
    assert served.sessions() == before
    detail = served.send("GET", f"/api/sessions/{sid}")[1]
    assert (detail["status"], detail["running_here"]) == ("completed", False)


@pytest.mark.parametrize("site", ["cross-site", "same-site", "Cross-Site"])
def test_sec_fetch_site_from_another_site_is_refused(served: Served, site: str) -> None:
    json_type = ("Content-Type", "application/json")
    answer = served.send(
        "POST", "/api/sessions", headers=[json_type, ("Sec-Fetch-Site", site)], body=BODY
    )
    _code(answer, 403, "cross_origin")
    same = ("Origin", f"http://127.0.0.1:{served.port}")
    answer = served.send(
        "POST", "/api/sessions", headers=[json_type, same, ("Sec-Fetch-Site", site)], body=BODY
    )
    _code(answer, 403, "cross_origin")


def test_two_origin_headers_are_refused(served: Served) -> None:
    own = f"http://127.0.0.1:{served.port}"
    headers = [("Content-Type", "application/json"), ("Origin", own), ("Origin", own)]
    _code(served.send("POST", "/api/sessions", headers=headers, body=BODY), 403, "cross_origin")


def test_the_own_origin_and_reads_from_anywhere_pass(served: Served) -> None:
    json_type = ("Content-Type", "application/json")
    for origin, host in [
        (f"http://127.0.0.1:{served.port}", served.host),
        (f"http://localhost:{served.port}", f"localhost:{served.port}"),
        (f"http://[::1]:{served.port}", f"[::1]:{served.port}"),
        ("https://agent.example.com", "agent.example.com"),  # behind a TLS proxy
    ]:
        headers = [json_type, ("Origin", origin), ("Sec-Fetch-Site", "same-origin")]
        status, body = served.send("POST", "/api/sessions", host=host, headers=headers, body=BODY)
        assert status == 201, (origin, body)
    # GET changes nothing: the origin is not asked (the token and Host still are)
    cross = [("Origin", "http://attacker.example"), ("Sec-Fetch-Site", "cross-site")]
    assert served.send("GET", "/api/sessions", headers=cross)[0] == 200


# -- JSON only ---------------------------------------------------------------------------------

NOT_JSON = [
    "text/plain",
    "text/plain;charset=UTF-8",
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=----x",
    "application/json-patch",
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/jsonx",
    "text/json",
    "application/json, text/plain",
    "application/json; charset=latin-1",
    "application/json; charset=utf-16",
    'application/json; charset="iso-8859-1"',
    "application/ json",
    "",
]


@pytest.mark.parametrize("content_type", NOT_JSON)
def test_a_body_that_is_not_declared_json_is_refused(served: Served, content_type: str) -> None:
    before = served.sessions()
    answer = served.send(
        "POST", "/api/sessions", headers=[("Content-Type", content_type)], body=BODY
    )
    _code(answer, 415, "unsupported_media_type")
    assert served.sessions() == before
    sid = served.sid
    empty = served.send(
        "POST", f"/api/sessions/{sid}/cancel", headers=[("Content-Type", content_type)]
    )
    _code(empty, 415, "unsupported_media_type")


def test_a_body_without_a_type_or_with_two_types_is_refused(served: Served) -> None:
    before = served.sessions()
    _code(served.send("POST", "/api/sessions", body=BODY), 415, "unsupported_media_type")
    two = [("Content-Type", "application/json"), ("Content-Type", "text/plain")]
    _code(
        served.send("POST", "/api/sessions", headers=two, body=BODY), 415, "unsupported_media_type"
    )
    chunked = served.send(
        "POST",
        "/api/sessions",
        headers=[("Content-Type", "text/plain"), ("Transfer-Encoding", "chunked")],
        body=b"0\r\n\r\n",
    )
    _code(chunked, 415, "unsupported_media_type")
    assert served.sessions() == before


@pytest.mark.parametrize(
    "content_type",
    [
        "application/json",
        "application/json; charset=utf-8",
        "Application/JSON;charset=UTF-8",
        'application/json; charset="utf-8"',
        "application/json;charset=utf8",
    ],
)
def test_json_in_its_spellings_is_taken(served: Served, content_type: str) -> None:
    status, body = served.send(
        "POST", "/api/sessions", headers=[("Content-Type", content_type)], body=BODY
    )
    assert status == 201, body
    # a POST without a body and without a type (the Python client's cancel) still works
    answered = served.send("POST", f"/api/sessions/{body['id']}/cancel")
    assert answered[0] in (202, 409), answered


def test_an_allowed_cors_origin_passes_and_host_is_checked_before_cors(tmp_path: Path) -> None:
    where = place(tmp_path)
    app = app_for(where, ScriptedModel([text("ok")]), cors_origins=("https://ui.example",))
    with UvicornThread(app) as thread:
        server = Served(thread, where)
        asks = [
            ("Access-Control-Request-Method", "POST"),
            ("Access-Control-Request-Headers", "authorization,content-type"),
        ]
        for origin, host, status in [
            ("https://ui.example", None, 200),
            ("https://evil.example", None, 400),  # Starlette's CORS refuses it
            ("https://ui.example", "attacker.example", 421),
        ]:
            preflight = server.send(
                "OPTIONS", "/api/sessions", host=host, token="", headers=[("Origin", origin), *asks]
            )
            assert preflight[0] == status, (origin, host, preflight)
        json_type = ("Content-Type", "application/json")
        site = ("Sec-Fetch-Site", "cross-site")
        allowed = [json_type, ("Origin", "https://ui.example"), site]
        assert server.send("POST", "/api/sessions", headers=allowed, body=BODY)[0] == 201
        other = [json_type, ("Origin", "https://evil.example"), site]
        _code(server.send("POST", "/api/sessions", headers=other, body=BODY), 403, "cross_origin")
        assert len(server.sessions()) == 1
