"""The pooled model clients that are httpx's: through a given transport, a proxy, or to a URL
``core_client`` does not send to (``loop_clients.new_client`` chooses).

``new_httpx_client`` bounds the client's connections by the pool's in-flight limit (so
httpcore never queues), sends through the pool's given transport, never closed by the client
(``Unclosed``), or through ``tls.transport_for``; its cookie jar reads only responses that set
cookies (``SetCookiesOnly``).
"""

from __future__ import annotations

from collections.abc import Mapping

import httpx

from rho_adapters.model.tls import transport_for
from rho_adapters.model.tls_context import CERTIFI, CaTrust


def new_httpx_client(
    base_url: str,
    headers: Mapping[str, str],
    *,
    proxy: str | None,
    trust: CaTrust = CERTIFI,
    max_in_flight: int,
    keepalive_seconds: float,
    transport: httpx.AsyncBaseTransport | None,
) -> httpx.AsyncClient:
    """A client for ``base_url`` with ``max_in_flight`` connections at most, kept alive
    ``keepalive_seconds``: through ``transport`` when given (left open when the client
    closes), else the network's (``proxy`` when given; https trusting ``trust``)."""
    limits = httpx.Limits(
        max_connections=max_in_flight,
        max_keepalive_connections=max_in_flight,
        keepalive_expiry=keepalive_seconds,
    )
    sent_through: httpx.AsyncBaseTransport
    if transport is not None:
        sent_through = Unclosed(transport)
    else:
        sent_through = transport_for(base_url, limits, proxy=proxy, trust=trust)
    # Timeouts are set per request (the idle timeout depends on the service tier). With a
    # transport given, httpx makes no SSL context and mounts no proxy of its own.
    client = httpx.AsyncClient(headers=dict(headers), transport=sent_through, timeout=None)  # noqa: S113
    jar = getattr(client, "_cookies", None)
    if type(jar) is httpx.Cookies:  # httpx 0.2x's own jar; another one is left as it is
        client._cookies = SetCookiesOnly(jar.jar)
    return client


class SetCookiesOnly(httpx.Cookies):
    """A model client's cookies (a load balancer's affinity cookie, say), read from a response
    only when it sets some. httpx reads every response into its jar, and for that builds
    urllib's views of the response and of its request (the URL parsed again): ~4 % of the
    event loop's CPU per streamed call, for answers that set none. Without a ``Set-Cookie``
    or ``Set-Cookie2`` header, ``http.cookiejar`` takes nothing from a response."""

    def extract_cookies(self, response: httpx.Response) -> None:
        """Take the cookies ``response`` sets, if its headers set any (httpx's own reading)."""
        headers = response.headers
        if "set-cookie" in headers or "set-cookie2" in headers:
            super().extract_cookies(response)


class Unclosed(httpx.AsyncBaseTransport):
    """A pool's given transport, shared by its clients: closing one client leaves it open."""

    def __init__(self, transport: httpx.AsyncBaseTransport) -> None:
        self.transport = transport

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """The given transport's response to ``request``."""
        return await self.transport.handle_async_request(request)
