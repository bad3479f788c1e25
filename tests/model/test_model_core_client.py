"""The pooled model client without httpx's client (``core_client.CoreClient``): what it sends
and keeps is what httpx's client sent and kept, and only plain URLs on the network get it.

The errors, timeouts, pooling and reading of the default path are held by the rest of
tests/model, which runs on it whenever no transport is given.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import urllib.parse
from collections.abc import Iterator
from types import FrameType

import httpx

from rho_adapters.model.core_client import CoreClient, RequestTimeout, is_plain_url
from rho_adapters.model.loop_clients import new_client
from rho_adapters.model.openai_request import build_body, tools_encodings
from rho_adapters.model.providers import PROVIDERS
from rho_domain.messages import UserMessage
from rho_domain.model import ModelRequest, ToolSpec


class _Recorder:
    """A loopback HTTP/1.1 server that keeps each request's head and body; its first answer
    sets a cookie (unless ``cookie`` is False), every answer repeats a header."""

    def __init__(self, *, cookie: bool = True) -> None:
        self.cookie = cookie
        self.heads: list[dict[str, str]] = []
        self.bodies: list[bytes] = []
        self.closed = asyncio.Event()

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            try:
                head = await reader.readuntil(b"\r\n\r\n")
            except asyncio.IncompleteReadError:
                self.closed.set()  # the client closed its connection
                return
            lines = head.decode("latin-1").split("\r\n")[1:]
            pairs = [line.split(": ", 1) for line in lines if line]
            fields = {name.lower(): value for name, value in pairs}
            self.heads.append(fields)
            self.bodies.append(await reader.readexactly(int(fields.get("content-length", "0"))))
            first = self.cookie and len(self.heads) == 1
            cookie = "Set-Cookie: affinity=b7; Path=/\r\n" if first else ""
            writer.write(
                b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX-Part: 1\r\nx-part: 2\r\n"
                + cookie.encode()
                + b"\r\nok"
            )
            await writer.drain()


def test_only_a_plain_url_on_the_network_gets_the_core_client() -> None:
    assert is_plain_url("http://127.0.0.1:8080/v1")
    assert is_plain_url("https://api.example.com/v1")
    for other in (
        "http://user:pw@127.0.0.1/v1",  # httpx sends the login as Basic auth
        "http://bücher.example/v1",  # an IDNA host
        "http://[::1]:8080/v1",
        "http://127.0.0.1:99999/v1",
        "http://h/v 1",  # a path httpx quotes
        "http://h/v1?x=1",
        "ftp://h/v1",
    ):
        assert not is_plain_url(other), other

    def made(
        url: str, proxy: str | None = None, transport: httpx.AsyncBaseTransport | None = None
    ) -> object:
        return new_client(
            url, {}, proxy=proxy, max_in_flight=2, keepalive_seconds=5.0, transport=transport
        )

    assert isinstance(made("http://127.0.0.1:1/v1"), CoreClient)
    assert isinstance(made("http://user:pw@127.0.0.1:1/v1"), httpx.AsyncClient)
    assert isinstance(made("http://model.test/v1", proxy="http://127.0.0.1:3"), httpx.AsyncClient)
    mock = httpx.MockTransport(lambda request: httpx.Response(200))
    assert isinstance(made("http://127.0.0.1:1/v1", transport=mock), httpx.AsyncClient)


def test_the_core_client_sends_what_httpx_sent_and_keeps_a_cookie() -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "héllo"}], "stream": True}

    async def exchange() -> tuple[_Recorder, list[tuple[str, str, bool]]]:
        recorder = _Recorder()
        server = await asyncio.start_server(recorder.serve, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        url = f"http://127.0.0.1:{port}/v1/chat/completions"
        client = new_client(
            url,
            {"Authorization": "Bearer k"},
            proxy=None,
            max_in_flight=2,
            keepalive_seconds=5,
            transport=None,
        )
        assert isinstance(client, CoreClient)
        seen = []
        async with server:
            for extra in ({}, {"authorization": "Bearer given"}):
                timeout = RequestTimeout(5.0, connect=1.0)
                sent = client.build_request("POST", url, json=body, headers=extra, timeout=timeout)
                response = await client.send(sent, stream=True)
                text = b"".join([part async for part in response.aiter_raw()])
                await response.aclose()
                headers = response.headers
                seen.append((text.decode(), headers["X-PART"], "x-part" in headers))
            await client.aclose()
            await recorder.closed.wait()
        return recorder, seen

    recorder, seen = asyncio.run(exchange())
    assert seen == [("ok", "1, 2", True)] * 2  # names in any case, repeated ones joined
    first, second = recorder.heads
    port = first["host"].rpartition(":")[2]
    assert first["host"] == f"127.0.0.1:{port}"
    assert first["content-type"] == "application/json"
    assert first["accept-encoding"] == "gzip, deflate"
    assert first["authorization"] == "Bearer k"
    assert second["authorization"] == "Bearer given"  # a request's header replaces the client's
    assert "cookie" not in first
    assert second["cookie"] == "affinity=b7"  # the server's affinity cookie goes back
    assert recorder.bodies == [httpx.Request("POST", "http://h", json=body).content] * 2


def test_an_agents_tool_schemas_are_encoded_once_and_sent_byte_for_byte() -> None:
    """The tools go out with every call of an agent: their JSON is made once per tools tuple
    and spliced in, and the body is still, byte for byte, what httpx's ``json=`` sends, with
    the tools between other members (``tool_choice`` after them) or last."""
    specs = tuple(
        ToolSpec(
            name=name,
            description="lit les fichiers « ici »",  # ensure_ascii=False: UTF-8, as httpx
            parameters={"type": "object", "properties": {"path": {"type": "string"}}},
        )
        for name in ("list", "read")
    )
    url = "http://127.0.0.1:1/v1/chat/completions"
    client = new_client(url, {}, proxy=None, max_in_flight=2, keepalive_seconds=5, transport=None)
    assert isinstance(client, CoreClient)
    before = tools_encodings()
    sent = []
    for tools, choice in ((specs, None), (specs, "auto"), (specs[:1], None)):
        request = ModelRequest(
            model="m",
            system="s",
            messages=(UserMessage(content="héllo"),),
            tools=tools,
            tool_choice=choice,
        )
        body = build_body(request, PROVIDERS["openai"], stream=True)
        sent.append(list(body))
        made = client.build_request("POST", url, json=body)
        assert made.body == httpx.Request("POST", "http://h", json=body).content
    assert sent[0][-1] == "tools"
    assert sent[1][-2:] == ["tools", "tool_choice"]
    assert tools_encodings() - before == 2  # one per tuple: the second call reused the first


@contextlib.contextmanager
def urls_split() -> Iterator[list[int]]:
    """Counts the calls into ``urllib.parse`` inside the ``with`` on this thread (a profile
    hook: its ``urlsplit`` remembers what it split, but the parts' ``hostname`` and ``port``
    and httpcore's ``urlparse`` run each time); the count is the list's one item."""
    split = [0]

    def hook(frame: FrameType, event: str, _arg: object) -> None:
        code = frame.f_code
        if event == "call" and code.co_filename == parse_file:
            split[0] += 1

    parse_file = urllib.parse.__file__
    sys.setprofile(hook)
    try:
        yield split
    finally:
        sys.setprofile(None)


def test_a_client_parses_each_url_once_not_at_every_request() -> None:
    """A Session per request sends the same URL again and again (issue 33): its ``Host`` and
    httpcore's URL are worked out at its first request (two parses a request before), each
    URL's own, the server's host as the URL spells it."""

    async def exchange() -> tuple[_Recorder, list[int]]:
        recorder = _Recorder(cookie=False)  # a cookie's jar is httpx's, URLs parsed there
        server = await asyncio.start_server(recorder.serve, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        urls = [f"http://{host}:{port}/v1/chat/completions" for host in ("127.0.0.1", "localhost")]
        client = new_client(
            urls[0], {}, proxy=None, max_in_flight=2, keepalive_seconds=5, transport=None
        )
        assert isinstance(client, CoreClient)
        counts = []
        async with server:
            for url in (urls[0], urls[0], urls[0], urls[1], urls[1]):
                with urls_split() as split:
                    response = await client.send(client.build_request("POST", url, json={}))
                    assert b"".join([part async for part in response.aiter_raw()]) == b"ok"
                    await response.aclose()
                counts.append(split[0])
            await client.aclose()
        return recorder, counts

    recorder, counts = asyncio.run(exchange())
    assert counts == [counts[0], 0, 0, counts[0], 0]  # was 5 calls at every request
    assert counts[0] > 0
    hosts = [head["host"].rpartition(":")[0] for head in recorder.heads]
    assert hosts == ["127.0.0.1"] * 3 + ["localhost"] * 2
