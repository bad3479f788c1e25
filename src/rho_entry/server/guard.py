"""The walls in front of every route: who is asking, from where, and with what.

Two ASGI middlewares, each check refusing on its own, so that no single mistake opens the
server:

- ``HostCheck`` (outermost): the ``Host`` header must name this server: ``127.0.0.1``,
  ``localhost`` or ``::1`` on the port it listens on, or a name in ``allowed_hosts`` (the
  bound address, a reverse proxy's name; any port). A page whose name an attacker re-pointed
  at 127.0.0.1 (DNS rebinding) sends its own name, and gets 421 with nothing read, even if it
  somehow had the token.
- ``RequestGuard`` (inside CORS, which answers pre-flight requests that carry no token):
  1. the bearer token on every request (constant-time comparison), except ``GET``/``HEAD``
     of ``public`` paths (static pages that hold no data);
  2. on every state-changing request (any method but GET and HEAD), an ``Origin`` header, when
     present, must be this server's own origin or an allowed CORS origin (``null`` is not),
     and ``Sec-Fetch-Site: cross-site`` or ``same-site`` is refused unless the origin is an
     allowed one;
  3. a body, and any ``Content-Type`` on a state-changing request, must be
     ``application/json`` (a ``charset`` other than UTF-8 is refused): 415 otherwise. This is
     what a browser cannot send across origins without asking first (text/plain, form and
     multipart posts are "simple" requests that skip the pre-flight). A body framed by
     both ``Content-Length`` and ``Transfer-Encoding`` is refused (400): a proxy in front
     may frame it by the other (request smuggling).

Refusals are the API's JSON errors (``errors.py``), and close their connection. A header
given twice is refused rather than guessed between, and so is a target two readers take
apart (``target.py``, 400): a query parameter given twice, an encoded ``/`` in the path
outside the prefixes in ``slashed`` (those of the routes whose last parameter takes ``/``).
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Collection
from typing import TYPE_CHECKING

from rho_domain.errors import ConfigError
from rho_entry.server.authority import LOOPBACK_HOSTS, Authority, host_name, parse_origin
from rho_entry.server.errors import (
    ApiError,
    CrossOrigin,
    Unauthorized,
    UnsupportedMediaType,
    WrongHost,
)
from rho_entry.server.target import path_refusal, query_refusal, slashed_tails

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Receive, Scope, Send

SAFE_METHODS = frozenset({"GET", "HEAD"})
Headers = dict[bytes, list[str]]
_READ = frozenset(
    {b"host", b"authorization", b"origin", b"sec-fetch-site", b"content-type",
     b"content-length", b"transfer-encoding"}
)  # fmt: skip
_FOUND_AT = (
    "rho-agent serve printed the dashboard URL with it and wrote it to <config dir>/server/"
    "<host>-<port>.token (rho-agent --server and AgentClient read that file), unless "
    "RHO_AGENT_SERVER_TOKEN set it"
)
UNAUTHORIZED = f"this server needs its token: send 'Authorization: Bearer <token>'. {_FOUND_AT}"
# A header that is there but not taken: said apart, since each has another fix (a token from
# an earlier start, or from another config directory; the word Bearer left out).
WRONG_TOKEN = (
    "the token sent is not this server's (rho-agent serve makes a new one at each start, and "
    f"each config directory has its own): send the current one. {_FOUND_AT}"
)
WRONG_SCHEME = (
    "send the token as 'Authorization: Bearer <token>' (the word Bearer, a space, the token). "
    f"{_FOUND_AT}"
)


class _Wall:
    """An ASGI middleware that passes a request on or answers it with ``refusal(scope)``;
    ``app`` is what it guards. Lifespan and other non-request scopes pass untouched."""

    app: ASGIApp

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on, or refuse it."""
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        error = self.refusal(scope)
        if error is None:
            await self.app(scope, receive, send)
        else:
            await answer(scope, send, error)

    def refusal(self, scope: Scope) -> ApiError | None:
        """The error this request gets, or None when it may pass."""
        raise NotImplementedError


class HostCheck(_Wall):
    """ASGI middleware: 421 unless ``Host`` names this server (see the module's docstring)."""

    def __init__(self, app: ASGIApp, *, allowed_hosts: Collection[str] = ()) -> None:
        self.app = app
        self.any_port = frozenset(_checked_host(h) for h in allowed_hosts)

    def refusal(self, scope: Scope) -> ApiError | None:
        """The error for this request's Host, or None when it names this server."""
        values = headers_of(scope).get(b"host", [])
        if len(values) != 1:
            return WrongHost("send exactly one Host header: the name you reached the server by")
        authority = Authority.parse(values[0])
        if authority is not None and self._allows(authority, scope):
            return None
        return WrongHost(
            f"Host {values[0][:100]!r} is not a name this server answers to: reach it as "
            "127.0.0.1, localhost or [::1] on its port, or start it with --allow-host NAME "
            "for the name a reverse proxy forwards"
        )

    def _allows(self, authority: Authority, scope: Scope) -> bool:
        if authority.host in self.any_port:
            return True
        if authority.host not in LOOPBACK_HOSTS:
            return False
        server = scope.get("server")
        if not server or server[1] is None:
            return True  # a Unix socket: no port to compare
        port: int = server[1]
        return authority.effective_port(scope.get("scheme", "http")) == port


class RequestGuard(_Wall):
    """ASGI middleware: the token, the origin and the body's type (see the module's
    docstring). Runs behind ``HostCheck``, so the Host header is known to be good."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        token: str,
        public: frozenset[str] = frozenset(),
        allowed_hosts: Collection[str] = (),
        allowed_origins: Collection[str] = (),
        slashed: Collection[str] = (),
    ) -> None:
        self.app = app
        self.token = token.encode()
        self.tails = slashed_tails(slashed)
        self.public = public
        self.any_port = frozenset(_checked_host(h) for h in allowed_hosts)
        self.allowed_origins = frozenset(o.strip().rstrip("/").lower() for o in allowed_origins)

    def refusal(self, scope: Scope) -> ApiError | None:
        """The first wall this request does not pass, or None."""
        method = scope.get("method", "GET")
        headers = headers_of(scope)
        if not (method in SAFE_METHODS and scope["path"] in self.public):
            given = headers.get(b"authorization", [])
            if len(given) != 1:
                return Unauthorized(UNAUTHORIZED)
            if not self._token_matches(given[0]):
                bearer = given[0].partition(" ")[0].lower() == "bearer"
                return Unauthorized(WRONG_TOKEN if bearer else WRONG_SCHEME)
        target = path_refusal(scope, self.tails) or query_refusal(scope)
        if target is not None:
            return target
        if method in SAFE_METHODS:
            return _body_refusal(headers, state_changing=False)
        return self._origin_refusal(headers, scope) or _body_refusal(headers, state_changing=True)

    def _token_matches(self, header: str) -> bool:
        scheme, _, given = header.partition(" ")
        # compare_digest on bytes: the time taken does not depend on how much matched
        return scheme.lower() == "bearer" and hmac.compare_digest(
            given.strip().encode("latin-1"), self.token
        )

    def _origin_refusal(self, headers: Headers, scope: Scope) -> ApiError | None:
        origins = headers.get(b"origin", [])
        sites = headers.get(b"sec-fetch-site", [])
        if len(origins) > 1 or len(sites) > 1:
            return CrossOrigin("send at most one Origin and one Sec-Fetch-Site header")
        if origins and origins[0].strip().rstrip("/").lower() in self.allowed_origins:
            return None
        if origins and not self._same_origin(origins[0], headers[b"host"][0], scope):
            return CrossOrigin(
                f"a page of another origin ({origins[0][:100]!r}) may not change anything "
                "here; list it in RHO_AGENT_SERVER_CORS_ORIGINS if it should"
            )
        if sites and sites[0].strip().lower() in ("cross-site", "same-site"):
            return CrossOrigin(f"Sec-Fetch-Site: {sites[0][:20]}: a request another site sent")
        return None

    def _same_origin(self, origin_text: str, host_text: str, scope: Scope) -> bool:
        origin = parse_origin(origin_text)
        host = Authority.parse(host_text)
        if origin is None or host is None:
            return False  # "null" (sandboxed frames, file: pages) and anything malformed
        scheme, authority = origin
        if authority.host != host.host:
            return False
        if host.host in self.any_port:
            # behind a reverse proxy the scheme and port the browser used are not ours
            return host.port is None or authority.effective_port(scheme) == host.port
        here = scope.get("scheme", "http")
        return scheme == here and authority.effective_port(scheme) == host.effective_port(here)


def _body_refusal(headers: Headers, *, state_changing: bool) -> ApiError | None:
    types = headers.get(b"content-type", [])
    lengths = headers.get(b"content-length", [])
    has_body = bool(headers.get(b"transfer-encoding")) or any(
        length.strip() not in ("0", "") for length in lengths
    )
    if len(types) > 1:
        return UnsupportedMediaType("send one Content-Type: application/json")
    if types and (has_body or state_changing) and not is_json(types[0]):
        return UnsupportedMediaType(
            f"Content-Type {types[0][:100]!r} is not accepted: send JSON as "
            "'Content-Type: application/json' (UTF-8)"
        )
    if not types and has_body:
        return UnsupportedMediaType("a body needs 'Content-Type: application/json'")
    if lengths and headers.get(b"transfer-encoding"):
        # RFC 9112 6.3: the chunks count here, a proxy in front may count the length, and the
        # bytes between the two readings would be the next request to one of them
        return ApiError(
            "send a body's length as Content-Length or as Transfer-Encoding: chunked, not "
            "both: a proxy in front may frame it by the other (request smuggling)",
            field="transfer-encoding",
        )
    return None


def is_json(content_type: str) -> bool:
    """``application/json``, in any case, with no charset or UTF-8."""
    media, *parameters = content_type.split(";")
    if media.strip().lower() != "application/json":
        return False
    for parameter in parameters:
        name, _, value = parameter.partition("=")
        if name.strip().lower() == "charset" and value.strip().strip('"').lower() not in (
            "utf-8",
            "utf8",
        ):
            return False
    return True


def headers_of(scope: Scope) -> Headers:
    """The headers the guard reads, each with every value it was given (ASGI gives names in
    lower case), as Latin-1 text; one pass over the request's headers."""
    found: Headers = {}
    for key, value in scope["headers"]:
        if key in _READ:
            found.setdefault(key, []).append(value.decode("latin-1"))
    return found


def _checked_host(text: str) -> str:
    host = host_name(text)
    if host is None:
        raise ConfigError(f"allowed host {text!r} is not a host name or address")
    return host


async def answer(scope: Scope, send: Send, error: ApiError) -> None:
    """Refuse with the API's JSON error shape (a WebSocket is closed with 1008)."""
    if scope["type"] == "websocket":
        await send({"type": "websocket.close", "code": 1008})
        return
    body = json.dumps(error.body()).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"x-content-type-options", b"nosniff"),
        # a refused request's body is never read: the connection ends rather than take what
        # is left of it for the next request
        (b"connection", b"close"),
    ]
    if isinstance(error, Unauthorized):
        headers.append((b"www-authenticate", b"Bearer"))
    await send({"type": "http.response.start", "status": error.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
