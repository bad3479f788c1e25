"""The pooled model clients' HTTP client for the network: httpcore's pool, no httpx client.

A model client sends a few requests of one shape (``build_request`` + ``send(stream=True)``, a
small ``stream`` for the probe and the tokenizer) and reads each body raw (``bodies``). For
that, ``httpx.AsyncClient`` costs a one-shot ``import httpx`` (~124 M instructions, ~15 % of
it: ``http.cookiejar``, ``urllib.request``, ``email``, ``idna``, see docs/benchmarks.md,
"oneshot21") and ~0.4 M a request. ``CoreClient`` keeps that subset of the client's contract
over the same ``LeanConnectionPool`` (``tls.PlainTransport``'s), for what ``new_client`` gives
it: a plain http(s) base URL (ASCII, no login, no IPv6 literal), no proxy, no transport given.
Everything else (a caller's client, ``ClientPool(transport=...)``, a proxy) stays httpx's.

What it keeps of httpx's: the request's headers (``Host``, ``Accept``, ``Accept-Encoding``
for what ``encodings`` decodes, ``Connection``, the client's, ``Content-Length`` and
``Content-Type``), the JSON body byte for byte (``json.dumps`` as httpx calls it), the timeouts
as httpcore's extensions (``RequestTimeout``: httpx's four, a tuple httpx also takes), no
redirects followed, and cookies: a response that sets one (rare: a load balancer's affinity)
is read into httpx's own jar, imported then, and the jar's cookies go with the next requests.
Errors are httpcore's, which httpx would have renamed; ``map_httpx_errors`` maps both.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, TypeAlias
from urllib.parse import urlsplit

import httpcore

from rho_adapters.model.openai_request import WireTools

if TYPE_CHECKING:
    import httpx

ACCEPT_ENCODING = "gzip, deflate"
"""What the model clients read (``encodings``); httpx adds ``br``/``zstd`` when installed,
which the readers would refuse."""
USER_AGENT = "rho-agent"
_DEFAULT_PORTS = {"http": 80, "https": 443}
_URLS_KEPT = 16

AnyClient: TypeAlias = "httpx.AsyncClient | CoreClient"
"""A model client: httpx's (a caller's, a transport's, a proxy's) or a ``CoreClient``."""
AnyResponse: TypeAlias = "httpx.Response | CoreResponse"
"""A response either kind of client gives."""

# A URL sent as it is written: no character httpx would quote or an IDNA host would encode.
_PLAIN = re.compile(r"https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?(/[A-Za-z0-9._~!$&'()*+,;=:@%/-]*)?")


def is_plain_url(url: str) -> bool:
    """Whether ``CoreClient`` sends to ``url`` as httpx would: http(s), an ASCII host name or
    IPv4 address, a port in range, a path without characters to quote, no login, query or
    fragment."""
    plain = _PLAIN.fullmatch(url)
    return plain is not None and (plain[1] is None or 0 < int(plain[1][1:]) <= 65535)


class RequestTimeout(tuple[float | None, float | None, float | None, float | None]):
    """A request's timeouts in seconds, ``(connect, read, write, pool)`` as
    ``httpx.Timeout(read, connect=connect)`` sets them (httpx's clients take the tuple)."""

    __slots__ = ()

    def __new__(cls, read: float | None, *, connect: float | None) -> RequestTimeout:
        """``read`` seconds to read, write and wait for a connection; ``connect`` to connect."""
        return super().__new__(cls, (connect, read, read, read))

    @property
    def connect(self) -> float | None:
        """Seconds to connect."""
        return self[0]

    @property
    def read(self) -> float | None:
        """Seconds to wait for the next bytes (reset by every byte)."""
        return self[1]


class CoreHeaders(Mapping[str, str]):
    """A response's headers as httpx's ``Headers`` reads them: names in any case, repeated
    ones joined with ``, ``."""

    def __init__(self, raw: list[tuple[bytes, bytes]]) -> None:
        self.raw = raw
        joined: dict[str, str] = {}
        for name, value in raw:
            key, text = name.decode("latin-1").lower(), value.decode("latin-1")
            joined[key] = f"{joined[key]}, {text}" if key in joined else text
        self._joined = joined

    def __getitem__(self, name: str) -> str:
        return self._joined[name.lower()]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._joined

    def __iter__(self) -> Iterator[str]:
        return iter(self._joined)

    def __len__(self) -> int:
        return len(self._joined)


class CoreRequest:
    """A request built by ``CoreClient.build_request``, sent by its ``send``."""

    __slots__ = ("body", "headers", "method", "timeout", "url")

    def __init__(
        self, method: str, url: str, headers: list[tuple[str, str]], body: bytes, timeout: Any
    ) -> None:
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout


class CoreResponse:
    """A response whose body is read raw (``aiter_raw``), as the model readers read it."""

    def __init__(self, response: httpcore.Response) -> None:
        self.status_code = response.status
        self.headers = CoreHeaders(response.headers)
        self.stream: Any = response.stream
        self.is_stream_consumed = False
        self._response: httpcore.Response | None = response

    async def aiter_raw(self) -> AsyncIterator[bytes]:
        """The body as it arrives, undecoded; httpcore's errors as they come."""
        self.is_stream_consumed = True
        async for part in self.stream:
            if part:
                yield part

    def aiter_bytes(self) -> AsyncIterator[bytes]:
        """Only a body not read yet, raw: the readers decode (``bodies``)."""
        if self.is_stream_consumed:
            raise RuntimeError("the response's body was already read")
        return self.aiter_raw()

    async def aclose(self) -> None:
        """Give the connection back (a body not read to its end closes it). Idempotent."""
        response, self._response = self._response, None
        if response is not None:
            await response.aclose()


class CoreClient:
    """``httpx.AsyncClient``'s subset the model adapters use, on ``pool`` (module docstring).
    ``headers`` go with every request; ``aclose`` closes the pool."""

    def __init__(self, headers: Mapping[str, str], pool: httpcore.AsyncConnectionPool) -> None:
        self.headers = dict(headers)
        self._pool = pool
        self._jar: httpx.Cookies | None = None
        self._urls: dict[str, tuple[str, httpcore.URL]] = {}

    def build_request(
        self,
        method: str,
        url: str,
        *,
        json: Any = None,
        headers: Mapping[str, str] | None = None,
        timeout: Any = None,
    ) -> CoreRequest:
        """A request to ``url`` (a plain URL: ``is_plain_url``) with ``json`` as its body."""
        sent = [
            ("Host", self._known(url)[0]),
            ("Accept", "*/*"),
            ("Accept-Encoding", ACCEPT_ENCODING),
            ("Connection", "keep-alive"),
            ("User-Agent", USER_AGENT),
        ]
        sent += list(self.headers.items())
        if headers:
            named = {name.lower() for name in headers}
            sent = [(name, value) for name, value in sent if name.lower() not in named]
            sent += list(headers.items())
        body = b""
        if json is not None:
            body = _dumps(json)
            sent += [("Content-Length", str(len(body))), ("Content-Type", "application/json")]
        return CoreRequest(method, url, sent, body, timeout)

    async def send(self, request: CoreRequest, *, stream: bool = True) -> CoreResponse:
        """Send ``request``; the response's body is left to read (``stream`` must be True)."""
        if not stream:
            raise ValueError("CoreClient only streams responses")
        headers = request.headers
        if self._jar is not None and len(self._jar) > 0:
            headers = [*headers, *self._cookie_header(request)]
        timeout = request.timeout
        extensions = {} if timeout is None else {"timeout": _phases(timeout)}
        sent = httpcore.Request(
            request.method,
            self._known(request.url)[1],  # httpcore takes its URL as it is
            headers=[(n.encode("ascii"), v.encode("ascii")) for n, v in headers],  # as httpx
            content=request.body,
            extensions=extensions,
        )
        response = CoreResponse(await self._pool.handle_async_request(sent))
        headers_in = response.headers
        if "set-cookie" in headers_in or "set-cookie2" in headers_in:
            self._keep_cookies(request, response)
        return response

    @asynccontextmanager
    async def stream(self, method: str, url: str, **kw: Any) -> AsyncIterator[CoreResponse]:
        """``send(build_request(method, url, **kw))``, closed after the ``async with``."""
        response = await self.send(self.build_request(method, url, **kw))
        try:
            yield response
        finally:
            await response.aclose()

    async def aclose(self) -> None:
        """Close the pool's connections."""
        await self._pool.aclose()

    def _known(self, url: str) -> tuple[str, httpcore.URL]:
        """``url``'s ``Host`` header and httpcore's URL, worked out once per URL: a client
        sends the same one or two again and again (each parse was two a request). Neither is
        changed by a request: httpcore only reads its URL."""
        known = self._urls.get(url)
        if known is None:
            parts = urlsplit(url)
            host = parts.hostname or ""
            if parts.port is not None and parts.port != _DEFAULT_PORTS[parts.scheme]:
                host = f"{host}:{parts.port}"  # httpx leaves the scheme's own port out
            if len(self._urls) >= _URLS_KEPT:
                self._urls.clear()  # a client of many URLs (none here) parses them again
            known = self._urls[url] = (host, httpcore.URL(url))
        return known

    def _keep_cookies(self, request: CoreRequest, response: CoreResponse) -> None:
        import httpx

        if self._jar is None:
            self._jar = httpx.Cookies()
        seen = httpx.Response(
            response.status_code,
            headers=response.headers.raw,
            request=httpx.Request(request.method, request.url),
        )
        self._jar.extract_cookies(seen)

    def _cookie_header(self, request: CoreRequest) -> list[tuple[str, str]]:
        import httpx

        assert self._jar is not None
        asked = httpx.Request(request.method, request.url)
        self._jar.set_cookie_header(asked)
        cookie = asked.headers.get("cookie")
        return [] if cookie is None else [("Cookie", cookie)]


def _phases(timeout: Any) -> dict[str, float | None]:
    if isinstance(timeout, tuple):
        connect, read, write, pool = timeout
    else:  # an httpx.Timeout
        connect, read, write, pool = timeout.connect, timeout.read, timeout.write, timeout.pool
    return {"connect": connect, "read": read, "write": write, "pool": pool}


def _dumps(body: Any) -> bytes:
    """``body`` as httpx encodes a ``json=`` body, byte for byte; a Chat Completions body's
    tools (``WireTools``) spliced in as their kept encoding, between the members before and
    after them (a dict encodes its members in order)."""
    tools = body.get("tools") if type(body) is dict else None
    if not isinstance(tools, WireTools):
        return _encode(body)
    names = list(body)
    at = names.index("tools")
    head = _encode({name: body[name] for name in names[:at]})[:-1]  # "{...", no "}"
    tail = _encode({name: body[name] for name in names[at + 1 :]})[1:]  # "...}", no "{"
    joint = b"," if at else b""
    return b"".join(
        (head, joint, b'"tools":', tools.encoded(_encode), b"," if len(tail) > 1 else b"", tail)
    )


def _encode(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
