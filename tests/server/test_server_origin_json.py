"""Who is asking, part two: the Origin and JSON-only walls of ``rho-agent serve``, each
alone, on a real uvicorn socket (a valid token and Host, one thing wrong), and CORS-allowed
origins. The refused request must leave no session behind and change none.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from security_support import BODY, Served, refused, serving
from server_support import UvicornThread, app_for, place

from rho_adapters.fakes import ScriptedModel, text


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
        refused(answer, 403, "cross_origin")
    assert served.sessions() == before
    detail = served.send("GET", f"/api/sessions/{sid}")[1]
    assert (detail["status"], detail["running_here"]) == ("completed", False)


@pytest.mark.parametrize("site", ["cross-site", "same-site", "Cross-Site"])
def test_sec_fetch_site_from_another_site_is_refused(served: Served, site: str) -> None:
    json_type = ("Content-Type", "application/json")
    answer = served.send(
        "POST", "/api/sessions", headers=[json_type, ("Sec-Fetch-Site", site)], body=BODY
    )
    refused(answer, 403, "cross_origin")
    same = ("Origin", f"http://127.0.0.1:{served.port}")
    answer = served.send(
        "POST", "/api/sessions", headers=[json_type, same, ("Sec-Fetch-Site", site)], body=BODY
    )
    refused(answer, 403, "cross_origin")


def test_two_origin_headers_are_refused(served: Served) -> None:
    own = f"http://127.0.0.1:{served.port}"
    headers = [("Content-Type", "application/json"), ("Origin", own), ("Origin", own)]
    refused(served.send("POST", "/api/sessions", headers=headers, body=BODY), 403, "cross_origin")


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
    refused(answer, 415, "unsupported_media_type")
    assert served.sessions() == before
    sid = served.sid
    empty = served.send(
        "POST", f"/api/sessions/{sid}/cancel", headers=[("Content-Type", content_type)]
    )
    refused(empty, 415, "unsupported_media_type")


def test_a_body_without_a_type_or_with_two_types_is_refused(served: Served) -> None:
    before = served.sessions()
    refused(served.send("POST", "/api/sessions", body=BODY), 415, "unsupported_media_type")
    two = [("Content-Type", "application/json"), ("Content-Type", "text/plain")]
    refused(
        served.send("POST", "/api/sessions", headers=two, body=BODY), 415, "unsupported_media_type"
    )
    chunked = served.send(
        "POST",
        "/api/sessions",
        headers=[("Content-Type", "text/plain"), ("Transfer-Encoding", "chunked")],
        body=b"0\r\n\r\n",
    )
    refused(chunked, 415, "unsupported_media_type")
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


def test_a_json_body_in_another_encoding_than_utf8_is_refused(served: Served) -> None:
    """``json.loads`` guesses the encoding of bytes: a body in UTF-16 or UTF-32 (declared
    ``application/json``, whose charset must be UTF-8) created a session, while a proxy or a
    log reading the declared UTF-8 saw NULs. Now 422 on the body, as for any text that is not
    JSON; so is a UTF-8 byte order mark, which parsers take or refuse."""
    before = served.sessions()
    text = BODY.decode()
    for body in (
        text.encode("utf-16"),
        text.encode("utf-16-le"),
        text.encode("utf-32"),
        text.encode("utf-32-be"),
        text.encode("utf-8-sig"),
    ):
        answer = served.send(
            "POST", "/api/sessions", headers=[("Content-Type", "application/json")], body=body
        )
        refused(answer, 422, "invalid")
        assert answer[1]["error"]["field"] == "body", answer
    assert served.sessions() == before


def test_a_body_framed_by_length_and_by_chunks_is_refused_and_its_connection_closed(
    served: Served,
) -> None:
    """``Content-Length: 4`` and ``Transfer-Encoding: chunked`` on one request: uvicorn read
    the chunks and created a session, while a proxy in front that frames by the length
    forwards the bytes after them as the next request (request smuggling; RFC 9112 6.3
    calls it an error). Now 400 naming both, and the connection closes, so nothing left of
    the body is read as a request."""
    before = served.sessions()
    head = (
        f"POST /api/sessions HTTP/1.1\r\nHost: {served.host}\r\n"
        f"Authorization: Bearer {served.token}\r\nContent-Type: application/json\r\n"
        "Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n"
    )
    body = b'{"prompt": "x"}'
    chunks = f"{len(body):x}\r\n".encode() + body + b"\r\n0\r\n\r\n"
    smuggled = f"GET /api/sessions HTTP/1.1\r\nHost: {served.host}\r\n\r\n".encode()
    with socket.create_connection(("127.0.0.1", served.port), timeout=20) as sock:
        sock.sendall(head.encode() + chunks + smuggled)
        answer = b""
        while chunk := sock.recv(65536):  # the server closes: no second answer
            answer += chunk
    assert answer.count(b"HTTP/1.1 ") == 1, answer
    status, _, rest = answer.partition(b"\r\n")
    assert status.startswith(b"HTTP/1.1 400"), answer
    assert b"connection: close" in rest.lower()
    assert b"not both" in rest, rest
    assert b'"field": "transfer-encoding"' in rest, rest
    assert served.sessions() == before


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
        refused(server.send("POST", "/api/sessions", headers=other, body=BODY), 403, "cross_origin")
        assert len(server.sessions()) == 1
