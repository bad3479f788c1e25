"""The Streamable HTTP transport: each message is a POST; answers come back as JSON or SSE.

A POST carries one message; the server answers 202 (a notification or a response of ours:
any 2xx is taken so, its body never read), a JSON body, or an SSE stream (``text/event-stream``,
read with our decoder) whose events are messages: notifications first, then the response. The
``Mcp-Session-Id`` the server gives at ``initialize`` (visible ASCII, as the specification
requires, and bounded: ``http_refusals.session_id``) is sent back on every later request, with
``MCP-Protocol-Version``. After the handshake a GET stream carries the server's own
notifications (a server without one answers 405, which is fine), opened again when it ends
(``_listen``). A redirect is not followed (our headers would go along) and an answer that is
neither JSON nor an event stream is not MCP: both fail the request at once, saying so, as does
a reply that ends without the request's answer (``answers_in_reply``: no stream is resumed
with ``Last-Event-ID``). Shutdown DELETEs the session, its answer unread. httpx errors
(``StreamError`` too) become ``McpError`` here, naming the server and its URL; a send on a
closed client is "not connected".
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import zlib
from collections.abc import AsyncIterator, Callable, Iterator, Mapping

import httpx

from rho_adapters.mcp.http_refusals import refusal, session_id
from rho_adapters.mcp.server_text import said
from rho_adapters.mcp.transport import Message
from rho_adapters.model.encodings import RefusedEncoding, decoded
from rho_adapters.model.endpoint import refuse_header_text
from rho_adapters.model.sse import aiter_sse
from rho_adapters.model.tls import PLAIN_HTTP_ANSWER, answered_plain_http, transport_for
from rho_adapters.model.tls_context import CERTIFI, CaTrust
from rho_domain.errors import McpError, McpProtocolError
from rho_domain.header_names import headers_over
from rho_domain.url_logins import hide_url_logins

_CONNECT_TIMEOUT = 10.0  # seconds; reads are bounded by the caller's request timeouts
MAX_BODY = 256 * 1024 * 1024  # bytes of one answer (a stream's events together), as stdio
_ERROR_HEAD = 1200  # bytes read of an error answer: its first 300 characters are shown
# Line ends in one event of a stream: the decoder keeps each ``data:`` line of an event as an
# object of its own (about 50 bytes, 8 sent) until the event ends; a message is JSON, which
# needs none of them (the SDKs send one line), so a million is no server's honest event.
MAX_EVENT_LINES = 1_000_000
_BLANK_LINES = (b"\n\n", b"\r\r", b"\n\r\n")  # an event's end, whichever line ends a server uses
_HTTPX_FAILURES = (httpx.HTTPError, httpx.StreamError)  # a closed stream's is no HTTPError


class HttpTransport:
    """Speaks MCP's Streamable HTTP to ``url`` with ``headers`` (already resolved), through
    ``proxy`` when one is given; messages name it as ``shown_url`` (the config's, whose
    ``${NAME}`` a key stands behind), else as ``url``, its login hidden either way."""

    answers_in_reply = True  # a request's answer is in the reply to its POST, or nowhere

    def __init__(
        self,
        server: str,
        url: str,
        *,
        shown_url: str | None = None,
        headers: Mapping[str, str],
        http_client: httpx.AsyncClient | None = None,
        max_body: int = MAX_BODY,
        proxy: str | None = None,
        trust: CaTrust = CERTIFI,
        relisten: tuple[float, float] = (1.0, 60.0),
    ) -> None:
        self.server = server
        self.url = url
        # what messages name: the URL may carry a login, or a key its config writes ${NAME}
        self.shown_url = hide_url_logins(url if shown_url is None else shown_url)
        for name, value in headers.items():
            refuse_header_text(value, f"MCP server {server!r}: header {name!r}")
        self.headers = dict(headers)
        self.session_id: str | None = None
        self.max_body = max_body
        self.protocol_version: str | None = None
        self._client = http_client
        # for the client made here (``proxies.ProxyRoutes.for_url`` and ``.trust``)
        self._proxy = proxy
        self._trust = trust
        self._owns_client = http_client is None
        self._deliver: Callable[[str], None] = lambda _: None
        self._received = 0  # messages delivered (``_listen`` asks whether an opening did)
        self._relisten = relisten  # seconds before the stream is opened again (``_listen``)
        self._listener: asyncio.Task[None] | None = None

    async def start(self, deliver: Callable[[str], None], closed: Callable[[str], None]) -> None:
        """Prepare the client (nothing is sent until the first message)."""
        del closed  # an HTTP server is not a process we watch: each request says it failed
        self._deliver = deliver
        if self._client is None:
            self._client = httpx.AsyncClient(
                # our transport: httpx's own makes an SSL context for an http:// server too
                transport=transport_for(self.url, proxy=self._proxy, trust=self._trust),
                timeout=httpx.Timeout(None, connect=_CONNECT_TIMEOUT),
                follow_redirects=False,
            )

    async def send(self, message: Message) -> None:
        """POST ``message`` and deliver what the server answers."""
        client = self._require_client()
        headers = self._session_headers(
            {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
        )
        with self._errors():
            async with client.stream(
                "POST", self.url, content=json.dumps(message), headers=headers
            ) as response:
                if sid := response.headers.get("mcp-session-id"):
                    self.session_id = session_id(sid, server=self.server, url=self.shown_url)
                what = str(message.get("method", "a response"))
                if "method" in message and "id" in message:
                    await self._read(response, what=what)
                else:  # our answer or notification: the server accepts it (202), no body
                    await self._accepted(response, what=what)
        if message.get("method") == "notifications/initialized" and self._listener is None:
            self._listener = asyncio.ensure_future(self._listen())

    def negotiated(self, version: str) -> None:
        """Send ``MCP-Protocol-Version: version`` from now on."""
        self.protocol_version = version

    async def aclose(self) -> None:
        """Stop listening, end the server's session (DELETE), close the client."""
        if self._listener is not None:
            self._listener.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._listener
        if (client := self._client) is None:
            return
        if self.session_id is not None and not client.is_closed:
            with contextlib.suppress(*_HTTPX_FAILURES, TimeoutError):
                async with asyncio.timeout(2):
                    async with client.stream("DELETE", self.url, headers=self._session_headers()):
                        pass
            self.session_id = None
        if self._owns_client:
            await client.aclose()
        self._client = None

    async def _accepted(self, response: httpx.Response, *, what: str) -> None:
        """A POST of our answer or notification: a 2xx is taken as accepted and its body is
        never read (the specification's 202 has none): read, it was one more answer of up
        to ``max_body`` for each of the 64 answers a server's requests may keep waiting."""
        if response.status_code >= 300:
            head = await self._head(response) if response.status_code >= 400 else b""
            raise refusal(
                response,
                server=self.server,
                url=self.shown_url,
                what=what,
                head=head,
                session=self.session_id is not None,
            )

    async def _read(self, response: httpx.Response, *, what: str) -> None:
        if response.status_code == 202:
            return
        await self._accepted(response, what=what)  # raises for 300 and more
        kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
        if kind and kind != "text/event-stream" and not kind.endswith("json"):
            raise McpProtocolError(
                f"MCP server {self.server!r} at {self.shown_url} answered {what} with HTTP "
                f"{response.status_code} {said(kind)}, not JSON or an event stream (is the url "
                "the server's MCP endpoint?)",
                server=self.server,
            )
        if kind == "text/event-stream":
            async for event in aiter_sse(self._short_events(self._bounded(response))):
                if event.data.strip():
                    self._received += 1
                    self._deliver(event.data)
        else:
            data = b"".join([chunk async for chunk in self._bounded(response)])
            if data.strip():
                self._received += 1
                self._deliver(data.decode("utf-8", errors="replace"))

    async def _bounded(self, response: httpx.Response) -> AsyncIterator[bytes]:
        """The body's chunks, until ``max_body`` bytes (then ``McpProtocolError``): a server
        does not choose how much memory we spend on it. The bytes counted are the decoded
        ones, decoded a bounded piece at a time (``encodings``), not httpx's ``aiter_bytes``,
        which inflates each network chunk whole: 1,827 bytes of ``gzip, gzip`` were 1 GB."""
        size = 0
        encoding = response.headers.get("content-encoding", "")
        try:
            async for chunk in decoded(response.aiter_raw(), encoding):
                size += len(chunk)
                if size > self.max_body:
                    raise McpProtocolError(
                        f"MCP server {self.server!r} at {self.shown_url} sent more than "
                        f"{self.max_body} bytes in one answer",
                        server=self.server,
                    )
                yield chunk
        except (RefusedEncoding, zlib.error) as exc:
            raise McpProtocolError(
                f"MCP server {self.server!r} at {self.shown_url} sent an answer in "
                f"Content-Encoding {said(encoding)} we could not decode: {said(str(exc))}",
                server=self.server,
            ) from exc

    async def _short_events(self, chunks: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
        """``chunks`` of an event stream, until an event runs past ``MAX_EVENT_LINES`` line
        ends (then ``McpProtocolError``): 200 MB of ``data:ab`` lines, one event, were 26
        million strings, 1,981 MB held before the event ended."""
        lines = 0
        last = b""
        async for chunk in chunks:
            seen = last + chunk  # a blank line may straddle two chunks
            ends = [at + len(blank) for blank in _BLANK_LINES if (at := seen.rfind(blank)) >= 0]
            end = max(ends, default=0)
            if end > len(last):
                lines = seen.count(b"\n", end) + seen.count(b"\r", end)
            else:
                lines += chunk.count(b"\n") + chunk.count(b"\r")
            if lines > MAX_EVENT_LINES:
                raise McpProtocolError(
                    f"MCP server {self.server!r} at {self.shown_url} sent an event of more "
                    f"than {MAX_EVENT_LINES} lines",
                    server=self.server,
                )
            last = chunk[-2:]
            yield chunk

    async def _head(self, response: httpx.Response) -> bytes:
        """The first ``_ERROR_HEAD`` bytes of an error answer (what decodes of them); the rest
        is never read (leaving the stream closes the connection)."""
        head = b""
        with contextlib.suppress(McpProtocolError):
            async for chunk in self._bounded(response):
                head += chunk
                if len(head) >= _ERROR_HEAD:
                    break
        return head[:_ERROR_HEAD]

    async def _listen(self) -> None:
        """The server's notifications outside any request, while we are connected. The
        stream is opened again when it ends (a server or a proxy closes an idle one, or it
        passed ``max_body``, which bounds each opening): left closed, a long session's
        ``list_changed`` stopped without a word. The wait before it doubles from
        ``relisten[0]`` to ``relisten[1]`` while an opening delivers nothing; a server that
        answers anything but a 200 event stream has none (405) and is not asked again."""
        first, longest = self._relisten
        wait = first
        while (delivered := await self._listen_once()) is not None:
            wait = first if delivered else min(longest, wait * 2)
            await asyncio.sleep(wait)

    async def _listen_once(self) -> bool | None:
        """One opening: whether it delivered a message; None: not a 200 event stream."""
        headers = self._session_headers({"Accept": "text/event-stream"})
        received = self._received
        with contextlib.suppress(*_HTTPX_FAILURES, McpError):
            async with self._require_client().stream("GET", self.url, headers=headers) as response:
                kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
                if response.status_code != 200 or kind != "text/event-stream":
                    return None
                await self._read(response, what="the notification stream")
        return self._received > received

    def _session_headers(self, own: Mapping[str, str] | None = None) -> dict[str, str]:
        """The configured headers under ``own`` and the session's: the transport's win,
        one header a name in any case (``headers_over``)."""
        ours = dict(own or {})
        if self.session_id is not None:
            ours["Mcp-Session-Id"] = self.session_id
        if self.protocol_version is not None:
            ours["MCP-Protocol-Version"] = self.protocol_version
        return headers_over(self.headers, ours)

    def _require_client(self) -> httpx.AsyncClient:
        if self._client is None or self._client.is_closed:  # httpx's RuntimeError, else
            raise McpError(f"MCP server {self.server!r}: not connected", server=self.server)
        return self._client

    @contextlib.contextmanager
    def _errors(self) -> Iterator[None]:
        """The failures of httpx as ``McpError`` naming the server and its URL."""
        try:
            yield
        except _HTTPX_FAILURES as exc:
            said = str(exc).replace(self.url, self.shown_url)  # httpx may quote the URL
            if answered_plain_http(exc):
                said = PLAIN_HTTP_ANSWER
            raise McpError(
                f"MCP server {self.server!r} at {self.shown_url}: {type(exc).__name__}: {said}",
                server=self.server,
            ) from exc
