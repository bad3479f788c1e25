"""TLS for rho-agent's HTTP clients (the model clients, the MCP client over HTTP, the Daytona
API, the remote ``rho-agent --server`` client): one verifying ``ssl.SSLContext`` per process,
made lazily on the first https endpoint (``tls_context``, without httpx; its names are
re-exported here), and a transport that makes none of its own.

httpx builds a context (loading the CA bundle: 50-80 ms of CPU here) for every client and
transport it creates, whatever the URL's scheme: each ``rho-agent --server`` command, each MCP
server over HTTP and each Daytona sandbox paid it, for an http:// URL too.
"""

from __future__ import annotations

import ssl
from typing import TYPE_CHECKING

import httpx

from rho_adapters.model.tls_context import CERTIFI, CaTrust
from rho_adapters.model.tls_context import shared_ssl_context as shared_ssl_context
from rho_adapters.model.tls_context import ssl_contexts_created as ssl_contexts_created

if TYPE_CHECKING:
    from rho_adapters.model.proxies import ProxyRoutes


class PlainTransport(httpx.AsyncHTTPTransport):
    """httpx's transport for the model clients, over a ``LeanConnectionPool`` (no scan of
    every pooled socket per request) and without the SSL context httpx builds (and fills with
    the CA bundle) for every transport: ``ssl_context`` None for an http:// endpoint (an https
    request through it, which the model adapters never make, would get httpcore's own default
    verifying context), the process's ``shared_ssl_context()`` for an https:// one. Its
    sockets are asyncio's own (``network.AsyncioBackend``), not httpcore's AnyIO backend."""

    def __init__(self, limits: httpx.Limits, ssl_context: ssl.SSLContext | None = None) -> None:
        from rho_adapters.model.lean_pool import new_pool

        # Not calling super().__init__: it is the part that makes the SSL context.
        self._pool = new_pool(
            ssl_context=ssl_context,
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
        )


def transport_for(
    url: str,
    limits: httpx.Limits | None = None,
    *,
    proxy: str | None = None,
    trust: CaTrust = CERTIFI,
) -> httpx.AsyncBaseTransport:
    """The transport for a client whose requests go to ``url``: no SSL context for an
    http:// URL, the process's shared verifying one for an https:// URL (see
    ``PlainTransport``). Through ``proxy`` (``proxies.ProxyRoutes.for_url``), httpx's own
    proxy transport with that shared context. ``trust``: whose certificates the context
    trusts (``ProxyRoutes.trust``). ``limits`` default to httpx's. Raises
    ConfigError for a proxy httpx cannot use (a SOCKS one without ``socksio``)."""
    limits = limits or httpx.Limits()
    if proxy is not None:
        try:
            return httpx.AsyncHTTPTransport(
                proxy=proxy, verify=shared_ssl_context(trust), limits=limits
            )
        except (ImportError, ValueError) as exc:
            from rho_domain.errors import ConfigError
            from rho_domain.url_logins import hide_url_logins

            shown = hide_url_logins(proxy)
            raise ConfigError(
                f"proxy {shown} (from HTTPS_PROXY, HTTP_PROXY or ALL_PROXY) cannot be used: {exc}"
            ) from None
    https = url.lower().startswith("https:")
    return PlainTransport(limits, shared_ssl_context(trust) if https else None)


class RoutedTransport(httpx.AsyncBaseTransport):
    """Sends each request the way ``routes`` say for its own URL (``ProxyRoutes.for_url``),
    as an httpx client sends through the mounts it makes from the environment, one per URL
    pattern. For a client whose hosts are not all known when it is made (Daytona's toolbox,
    named in the API's answers): a route chosen once for the first URL would send another
    host past its ``NO_PROXY`` entry, or around the proxy it should take.

    One transport per route (``transport_for``: the direct one, with the shared SSL context
    for https, and one per proxy), made on the first request that takes it and kept, so
    connections are reused per origin as in one pool. ``aclose`` closes them all."""

    def __init__(self, routes: ProxyRoutes, limits: httpx.Limits | None = None) -> None:
        self._routes = routes
        self._limits = limits
        # route: (proxy URL or None, direct over https); origin: (scheme, host, port)
        self._by_route: dict[tuple[str | None, bool], httpx.AsyncBaseTransport] = {}
        self._by_origin: dict[tuple[bytes, bytes, int | None], httpx.AsyncBaseTransport] = {}

    def transport_for_url(self, url: httpx.URL) -> httpx.AsyncBaseTransport:
        """The transport a request to ``url`` goes through (made on first use). Raises
        ConfigError for a proxy httpx cannot use (``transport_for``)."""
        origin = (url.raw_scheme, url.raw_host, url.port)
        found = self._by_origin.get(origin)
        if found is None:
            text = str(url)
            proxy = self._routes.for_url(text)
            route = (proxy, proxy is None and url.scheme == "https")
            found = self._by_route.get(route)
            if found is None:
                found = self._by_route[route] = transport_for(
                    text, self._limits, proxy=proxy, trust=self._routes.trust
                )
            self._by_origin[origin] = found
        return found

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Send ``request`` through its route's transport."""
        return await self.transport_for_url(request.url).handle_async_request(request)

    async def aclose(self) -> None:
        """Close every transport made so far."""
        routes, self._by_route, self._by_origin = list(self._by_route.values()), {}, {}
        for transport in routes:
            await transport.aclose()


_PLAIN_HTTP_REASONS = frozenset({"WRONG_VERSION_NUMBER", "RECORD_LAYER_FAILURE"})
"""OpenSSL's reasons when the peer's first bytes are no TLS record (``HTTP/1.1 400``...): 1.1
and 3.0 say the first, 3.2 and later the second."""


PLAIN_HTTP_ANSWER = (
    "the server answered in plain HTTP, not TLS: the URL should start with http://, not https://"
)
"""What the model clients, the MCP client and ``rho-agent --server`` say for that failure."""


def answered_plain_http(exc: BaseException) -> bool:
    """True when ``exc`` (an httpx ``ConnectError``) or one of its causes is the TLS handshake
    failing because the server answered in plain HTTP: an ``https://`` URL for an ``http://``
    server, the usual local model server. Said as what to fix (the scheme), not as OpenSSL's
    ``[SSL: WRONG_VERSION_NUMBER] wrong version number``, and not retried: the next handshake
    meets the same server."""
    seen: BaseException | None = exc
    for _ in range(8):  # a cause chain is short; a cycle through __context__ must end
        if seen is None:
            return False
        if isinstance(seen, ssl.SSLError) and seen.reason in _PLAIN_HTTP_REASONS:
            return True
        seen = seen.__cause__ or seen.__context__
    return False
