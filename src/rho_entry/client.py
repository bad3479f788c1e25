"""AgentClient: a small Python client of ``rho-agent serve``, on httpx.

::

    async with AgentClient("http://127.0.0.1:8765") as client:
        session = await client.create_session(prompt="What is in this directory?")
        async for event in client.events(session["id"], until_idle=True):
            print(event.kind, event.data)

``events`` reconnects on its own after a dropped connection, sending the last event id it
saw (``Last-Event-ID``), so a reader loses nothing and sees nothing twice. A refused request
raises the server's error as an ``ApiError`` subclass (``NotFound``, ``Conflict``, ``Busy``
with ``retry_after``, ``Invalid`` with ``field``, ...).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Mapping
from types import TracebackType
from typing import Any

import httpx

from rho_adapters.model.endpoint import refuse_header_text
from rho_adapters.model.proxies import ProxyRoutes
from rho_adapters.model.tls import transport_for
from rho_adapters.model.tls_context import CaTrust
from rho_domain.endpoint_url import check_endpoint_url, path_segment
from rho_entry import client_bodies
from rho_entry.client_events import EVENT_BYTES, Heard, ServerEvent, bounded_lines, parse_events
from rho_entry.server.errors import ApiError
from rho_entry.server.token_file import find_token

__all__ = ["RECONNECTS", "AgentClient", "ServerEvent", "proxy_for"]

RECONNECTS = 5
"""Connections in a row to an event stream that bring nothing before ``events`` gives up."""


class AgentClient:
    """Talks to one server. ``token`` is sent as a bearer token; without it the client
    sends ``RHO_AGENT_SERVER_TOKEN``, else the token that ``rho-agent serve`` wrote for
    ``base_url`` in the config directory (``environ`` defaults to ``os.environ``; its
    ``HTTPS_PROXY``, ``NO_PROXY``... route the requests, as httpx reads them, except to a
    loopback server, which is always reached directly: see ``proxy_for``).
    ``transport`` lets tests pass ``httpx.ASGITransport(app)``. Close with ``aclose`` or
    ``async with``. ``event_bytes``: the largest stream event read, ``answer_bytes`` the largest
    other answer (``ApiError`` beyond either). A call other than ``events`` ends with
    ``httpx.ReadTimeout`` after ``timeout`` seconds of silence, or when its whole answer has
    not come within ``answer_deadline`` (by default twice ``timeout``, 60 s): the server's
    longest wait before it answers, a ``DELETE``'s ``shutdown_grace`` (10 s by default), fits
    in ``timeout``, and the answer then has as long again to arrive."""

    event_bytes = EVENT_BYTES
    answer_bytes = client_bodies.ANSWER_BYTES

    def __init__(
        self,
        base_url: str,
        *,
        token: str | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        timeout: float = 30.0,
        answer_deadline: float | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        # a URL without its scheme was httpx's "Request URL is missing an 'http://' or
        # 'https://' protocol" at the first request, naming no setting
        check_endpoint_url(base_url, "AgentClient base_url")
        environ = os.environ if environ is None else environ
        if token is None:
            token = find_token(base_url, environ)
        if token:
            refuse_header_text(
                token, "the server token (token=, RHO_AGENT_SERVER_TOKEN or serve's token file)"
            )
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        # our transport: httpx's own would build an SSL context (~50-80 ms) for http:// too,
        # so the proxy variables are read here, as httpx would read them
        proxy = proxy_for(base_url, environ)
        trust = CaTrust.from_environ(environ)  # SSL_CERT_FILE, SSL_CERT_DIR
        self._answer_timeout = httpx.Timeout(timeout)  # an answer's silence, not a stream's
        # a whole answer's time: a trickle is never silent for ``timeout``
        self._answer_deadline = 2 * timeout if answer_deadline is None else answer_deadline
        self._http = httpx.AsyncClient(
            base_url=base_url,
            headers=headers,
            transport=transport or transport_for(base_url, proxy=proxy, trust=trust),
            timeout=httpx.Timeout(timeout, read=None),  # streams may be quiet for long
        )

    async def __aenter__(self) -> AgentClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the connections."""
        await self._http.aclose()

    async def create_session(self, **fields: Any) -> dict[str, Any]:
        """``POST /api/sessions`` with the given fields (prompt, model, profile, ...)."""
        return await self._call("POST", "/api/sessions", fields)

    async def list_sessions(self) -> list[dict[str, Any]]:
        """``GET /api/sessions``; ``ApiError`` for an answer without a list of objects
        (indexed as this API's, another server's answer was a KeyError or a TypeError)."""
        sessions = (await self._call("GET", "/api/sessions")).get("sessions")
        if not isinstance(sessions, list) or not all(isinstance(s, dict) for s in sessions):
            raise ApiError(
                "the server's answer to GET /api/sessions holds no list of sessions; is this "
                "a rho-agent serve server?"
            )
        return sessions

    async def get_session(self, session_id: str) -> dict[str, Any]:
        """``GET /api/sessions/{id}``."""
        return await self._call("GET", _session_path(session_id))

    async def chat(self, session_id: str, prompt: str) -> dict[str, Any]:
        """``POST /api/sessions/{id}/chat``."""
        return await self._call("POST", _session_path(session_id, "chat"), {"prompt": prompt})

    async def answer(
        self, session_id: str, call_id: str, decision: str, *, digest: str
    ) -> dict[str, Any]:
        """``POST /api/sessions/{id}/approvals/{call_id}``: approve, deny or always the call
        whose ``digest`` you were shown (``get_session``'s ``pending_approvals``); a call
        changed since is refused (409) and still waits."""
        path = _session_path(session_id, "approvals", call_id)
        return await self._call("POST", path, {"decision": decision, "digest": digest})

    async def cancel(self, session_id: str) -> dict[str, Any]:
        """``POST /api/sessions/{id}/cancel``."""
        return await self._call("POST", _session_path(session_id, "cancel"))

    async def resume(self, session_id: str, prompt: str | None = None) -> dict[str, Any]:
        """``POST /api/sessions/{id}/resume``."""
        body = {"prompt": prompt} if prompt is not None else {}
        return await self._call("POST", _session_path(session_id, "resume"), body)

    async def close_session(self, session_id: str) -> dict[str, Any]:
        """``DELETE /api/sessions/{id}``."""
        return await self._call("DELETE", _session_path(session_id))

    async def events(
        self, session_id: str, *, after: int = 0, until_idle: bool = False
    ) -> AsyncIterator[ServerEvent]:
        """The session's events after trace line ``after``; live until the session is closed
        (or, ``until_idle``, until no run is in progress). Reconnects after a dropped
        connection from the last id seen: at once after one that brought events, else after a
        wait that doubles up to a second; ``ApiError`` after ``RECONNECTS`` connections in a
        row that brought nothing (no event, no keep-alive), and for an event that is not
        this API's."""
        last, empty, quiet = after, 0, 0
        params = {"until": "idle"} if until_idle else {}
        while True:
            headers = {"Last-Event-ID": str(last)}
            heard = Heard()
            try:
                path = _session_path(session_id, "stream")
                response = await self._stream_opened(path, params=params, headers=headers)
                try:
                    lines = bounded_lines(client_bodies.chunks(response), self.event_bytes)
                    async for event in parse_events(heard.lines(lines)):
                        if event.kind == "closed":
                            return
                        if event.id is not None:
                            last = event.id
                        heard.events = True
                        yield event
                finally:
                    await response.aclose()
            except (httpx.RemoteProtocolError, httpx.ReadError):
                pass  # dropped: reconnect from the last id seen
            else:
                if until_idle:
                    return
            # a server or a proxy that ends every stream at once was reconnected to in a
            # tight loop, for good (hundreds of connections a second)
            quiet = 0 if heard.events else quiet + 1
            empty = 0 if heard.events or heard.keepalives else empty + 1
            if empty >= RECONNECTS:
                raise ApiError(
                    f"the event stream of session {session_id} ended {empty} times in a row "
                    "before any event or keep-alive; is a proxy in front of the server "
                    "cutting streams?"
                )
            if quiet:
                await asyncio.sleep(min(0.02 * 2**quiet, 1.0))

    async def _call(
        self, method: str, path: str, body: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """One request and its JSON answer, read within ``answer_bytes`` (``client_bodies``:
        ``response.json()`` read an endless answer until the process died), with at most
        ``timeout`` seconds of silence (before, none: the stream's setting, so a server that
        never answered held the call for good) and whole within ``_answer_deadline`` seconds
        (a server sending a byte every 29 s is never silent for 30: it held the call for
        good); ``httpx.ReadTimeout`` for either."""
        timeout = self._answer_timeout  # a server that never answers no longer holds it
        async with (
            self._whole_within(method, path),
            self._http.stream(method, path, json=body, timeout=timeout) as response,
        ):
            if response.status_code >= 400:
                raise await client_bodies.refusal(response)
            content = await client_bodies.body(response, self.answer_bytes)
        data = client_bodies.parsed(content)
        if not isinstance(data, dict):  # an answer, but not this API's: say whose it may be
            raise ApiError(client_bodies.foreign(response, content, answered=True))
        return data

    async def _stream_opened(
        self, path: str, *, params: Mapping[str, str], headers: Mapping[str, str]
    ) -> httpx.Response:
        """An event stream's response (the caller closes it), its head and, for a status
        other than 200, its error (raised) within ``_answer_deadline``: the stream's read
        timeout is None, for a stream quiet for long, and so a server that never sent the
        head, or trickled an error's body, held ``events`` for good."""
        request = self._http.build_request("GET", path, params=params, headers=headers)
        async with self._whole_within("GET", path):
            response = await self._http.send(request, stream=True)
            if response.status_code != 200:
                try:
                    raise await client_bodies.refusal(response)
                finally:
                    await response.aclose()
        return response

    @contextlib.asynccontextmanager
    async def _whole_within(self, method: str, path: str) -> AsyncIterator[None]:
        """The block within ``_answer_deadline`` seconds, else ``httpx.ReadTimeout``."""
        deadline = asyncio.timeout(self._answer_deadline)
        try:
            async with deadline:
                yield
        except TimeoutError:
            if not deadline.expired():
                raise
            raise httpx.ReadTimeout(
                f"{method} {path}: the server's answer did not arrive whole within "
                f"{self._answer_deadline:g} s (the client's answer deadline)"
            ) from None


def _session_path(session_id: str, *rest: str) -> str:
    """``/api/sessions/{id}/...`` with the id and each of ``rest`` one path segment whatever
    it holds. A call id is the model's choice and an id the server's text: written as they
    came, ``../../B/cancel`` was resolved by httpx to ``/api/sessions/B/cancel`` (an answer
    to a call cancelled another session's run), ``?`` and ``#`` cut the path."""
    return "/".join(["/api/sessions", *(path_segment(part) for part in (session_id, *rest))])


def proxy_for(base_url: str, environ: Mapping[str, str]) -> str | None:
    """The proxy the client's requests to ``base_url`` go through, or None (directly).

    A loopback server is reached directly whatever the proxy variables say, ``NO_PROXY`` or
    not, as by every client (``ProxyRoutes.for_url``): through a proxy the request would
    carry the bearer token to the proxy and reach the server on the proxy's machine."""
    return ProxyRoutes.from_environ(environ).for_url(base_url)
