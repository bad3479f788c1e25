"""Who is asking, part one: the Host and token walls of ``rho-agent serve``, each alone, on
a real uvicorn socket. Each refusal test changes ONE thing in an otherwise valid request and
checks the specific refusal and the absence of the effect: no session created, no session
data (a secret prompt) in the answer. Part two (Origin, JSON) is test_server_origin_json.py.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from security_support import BODY, SECRET, Served, refused, serving
from server_support import app_for, place

from rho_adapters.fakes import ScriptedModel


@pytest.fixture(scope="module")
def served_once(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """One server per module and worker: starting one (app, uvicorn, the secret session)
    cost each of these tests more than the requests it sends."""
    with serving(tmp_path_factory.mktemp("served")) as server:
        yield server


@pytest.fixture
def served(served_once: Served) -> Served:
    served_once.reset()
    return served_once


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
        refused(served.send("GET", path, host=spelled), 421, "wrong_host")
    stream = f"/api/sessions/{served.sid}/stream?until=idle"
    refused(served.send("GET", stream, host=spelled), 421, "wrong_host")
    before = served.sessions()
    posted = served.send(
        "POST",
        "/api/sessions",
        host=spelled,
        headers=[("Content-Type", "application/json")],
        body=BODY,
    )
    refused(posted, 421, "wrong_host")
    assert served.sessions() == before


def test_two_host_headers_or_none_are_refused(served: Served) -> None:
    """uvicorn's parser (h11) refuses these itself (400); an HTTP/1.0 request may omit Host
    and reaches the guard, which refuses it."""
    good = served.host
    for hosts in ([good, "attacker.example"], ["attacker.example", good], []):
        status, body = served.send("GET", "/api/sessions", hosts=hosts)
        assert status in (400, 421), body
    refused(served.send("GET", "/api/sessions", hosts=[], version="HTTP/1.0"), 421, "wrong_host")


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
        refused(answer, 401, "unauthorized")
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
        refused(served.send("GET", "/api/sessions", token="", headers=headers), 401, "unauthorized")
    in_query = served.send("GET", f"/api/sessions?token={right}", token="")
    refused(in_query, 401, "unauthorized")
    lower = served.send(
        "GET", "/api/sessions", token="", headers=[("Authorization", f"bearer {right}")]
    )
    assert lower[0] == 200  # the scheme's name is case-insensitive (RFC 9110)


def test_a_query_parameter_given_twice_is_refused(served: Served) -> None:
    """Starlette took a query parameter given twice as its last value (a proxy's rule or a
    log reads the first): ``?limit=1&limit=2`` listed by 2, ``?until=idle&until=live``
    streamed for good."""
    for query in ("limit=1&limit=2", "limit=1&lim%69t=2", "limit=1&limit"):
        twice = served.send("GET", f"/api/sessions?{query}")
        assert twice[1]["error"] == {
            "code": "bad_request",
            "message": "the query gives 'limit' twice: give each parameter once",
            "field": "limit",
        }, query
    assert served.send("GET", "/api/sessions?limit=1")[0] == 200


def test_an_encoded_slash_outside_a_call_id_is_refused(served: Served) -> None:
    """uvicorn decodes ``%2F`` before Starlette routes, so ``POST /api%2Fsessions`` created a
    session and ``/api/sessions/ID%2Fstream`` streamed it: paths a proxy's rule on
    ``/api/sessions`` or ``/api/sessions/*/stream`` never matched. Now 400; a call id (after
    ``/approvals/``) keeps its ``%2F``: that route answers (no such call here)."""
    sid, json_type = served.sid, [("Content-Type", "application/json")]
    for method, path in [
        ("POST", "/api%2Fsessions"),
        ("POST", "/api%2fsessions"),
        ("GET", f"/api/sessions/{sid}%2Fstream?until=idle"),
        ("GET", f"/api/sessions%2F{sid}"),
        ("POST", f"/api/sessions/{sid}%2Fapprovals/c1"),
        ("GET", "/dashboard%2Findex.html"),
    ]:
        answer = served.send(
            method, path, headers=json_type, body=BODY if method == "POST" else b""
        )
        assert answer[0] == 400, (path, answer)
        assert answer[1]["error"]["field"] == "path", answer
        assert "holds an encoded '/' (%2F)" in answer[1]["error"]["message"], answer
    assert served.sessions() == [sid]
    digest = json.dumps({"decision": "deny", "digest": "0" * 32}).encode()
    call = served.send(
        "POST", f"/api/sessions/{sid}/approvals/a%2F..%2Fb", headers=json_type, body=digest
    )
    assert call[0] == 404, call
    assert "a/../b" in call[1]["error"]["message"], call


def test_the_dashboard_page_alone_loads_without_the_token(served: Served) -> None:
    for path in ("/dashboard", "/dashboard/dashboard.js", "/dashboard/dashboard.css"):
        status, _ = served.send("GET", path, token="")
        assert status == 200, path
