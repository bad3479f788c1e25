"""The HTTP client a Daytona backend sends with (``SandboxAPI``), built from its settings.

Every request carries the API key, the organisation when one is set, and the SDK version the
daemon checks (it splits a session's output and accepts the current process API only for
clients that say they are new). The toolbox is another host, learnt from the API's answers,
so the transport routes each host by its own proxy (``NO_PROXY`` may name one of them), with
one SSL context per process rather than one per sandbox (httpx builds one per client).
"""

from __future__ import annotations

import httpx

from rho_adapters.daytona.settings import DaytonaSettings
from rho_adapters.model.tls import RoutedTransport

SDK_VERSION = "0.190.0"


def api_client(
    settings: DaytonaSettings, transport: httpx.AsyncBaseTransport | None = None
) -> httpx.AsyncClient:
    """A client for ``settings``'s API and toolboxes; ``transport`` replaces the routed one
    (tests: ``FakeDaytona``). A proxy setting that cannot be used is said here, at start."""
    headers = {
        "Authorization": f"Bearer {settings.api_key}",
        "X-Daytona-Source": "rho-agent",
        "X-Daytona-SDK-Version": SDK_VERSION,
    }
    if settings.organization_id:
        headers["X-Daytona-Organization-ID"] = settings.organization_id
    if transport is None:
        routed = RoutedTransport(settings.proxies)
        routed.transport_for_url(httpx.URL(settings.api_url))  # a bad proxy: said now
        transport = routed
    return httpx.AsyncClient(headers=headers, transport=transport, timeout=settings.request_timeout)
