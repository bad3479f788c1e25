"""Daytona's API and its toolbox are two hosts, and each takes its own proxy route.

The toolbox's URL comes in the API's answers, after the client is made: until the routed
transport, every request went the way chosen for the API's URL, so a ``NO_PROXY`` naming
only one of the two hosts sent the other one wrong (through the proxy past its exemption,
or around the proxy it should take). Real sockets: the fake Daytona's API answers on
127.0.0.1, its toolbox on 127.0.0.2, and a proxy in front of both on a third port; each door
writes down the request lines it received and counts its connections.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncIterator

import attrs
import pytest
from daytona_support import serve_http

from rho_adapters.daytona.api import SandboxAPI
from rho_adapters.daytona.making import create
from rho_adapters.fakes import FakeClock
from rho_adapters.fakes.daytona import FakeDaytona
from rho_adapters.model.proxies import ProxyRoutes
from rho_domain.errors import ConfigError


@attrs.define
class Door:
    """One listening socket in front of the fake: what reached it."""

    url: str = ""
    lines: list[str] = attrs.Factory(list)
    connections: int = 0


@attrs.define
class Doors:
    api: Door
    toolbox: Door
    proxy: Door
    fake: FakeDaytona


@pytest.fixture
async def doors() -> AsyncIterator[Doors]:
    api, toolbox, proxy = Door(), Door(), Door()
    fake = FakeDaytona()  # its URLs are the doors', once they listen
    servers = []
    for door, host in ((api, "127.0.0.1"), (toolbox, "127.0.0.2"), (proxy, "127.0.0.1")):
        server = await asyncio.start_server(functools.partial(serve_http, fake, door), host, 0)
        door.url = f"http://{host}:{server.sockets[0].getsockname()[1]}"
        servers.append(server)
    fake.api_url, fake.toolbox_url = f"{api.url}/api", f"{toolbox.url}/toolbox"
    try:
        yield Doors(api=api, toolbox=toolbox, proxy=proxy, fake=fake)
    finally:
        for server in servers:
            server.close()
            await server.wait_closed()


async def _use_a_sandbox(doors: Doors, environ: dict[str, str]) -> None:
    """Create a sandbox, run a command, delete it: API, toolbox, API."""
    # the doors can only be on loopback, which every client reaches directly unless told
    routes = attrs.evolve(ProxyRoutes.from_environ(environ), loopback_direct=False)
    settings = doors.fake.settings(proxies=routes)
    api = SandboxAPI(settings, clock=FakeClock())  # polls on fake time
    try:
        sandbox = await create(api, "rho-agent-test")
        answer = await api.execute(sandbox, "echo hi", timeout=10)
        assert answer is not None
        assert answer.result == "hi\n"
        await api.delete(sandbox.id)
    finally:
        await api.aclose()


API_LINES = [
    "POST /api/sandbox",
    "GET /api/sandbox/sbx-1",
    "GET /api/sandbox/sbx-1",
    "DELETE /api/sandbox/sbx-1",
]
TOOLBOX_LINES = ["POST /toolbox/sbx-1/process/execute"]


def _lines(door: Door, through_proxy_to: str = "") -> list[str]:
    """The door's request lines as method and path (the proxy's, for one origin only)."""
    found = []
    for line in door.lines:
        method, target, _ = line.split(" ")
        if through_proxy_to:
            if not target.startswith(through_proxy_to + "/"):
                continue
            target = target.removeprefix(through_proxy_to)
        found.append(f"{method} {target}")
    return found


@pytest.mark.parametrize("exempt", ["toolbox", "api", "neither", "both"])
async def test_each_host_takes_its_own_route(doors: Doors, exempt: str) -> None:
    no_proxy = {"toolbox": "127.0.0.2", "api": "127.0.0.1", "neither": "", "both": "*"}[exempt]
    await _use_a_sandbox(doors, {"HTTP_PROXY": doors.proxy.url, "NO_PROXY": no_proxy})
    api_direct = exempt in ("api", "both")
    toolbox_direct = exempt in ("toolbox", "both")
    assert _lines(doors.api) == (API_LINES if api_direct else [])
    assert _lines(doors.proxy, doors.api.url) == ([] if api_direct else API_LINES)
    assert _lines(doors.toolbox) == (TOOLBOX_LINES if toolbox_direct else [])
    assert _lines(doors.proxy, doors.toolbox.url) == ([] if toolbox_direct else TOOLBOX_LINES)
    # Connections are reused: one a host (through the proxy too, as httpx keeps them).
    assert [d.connections for d in (doors.api, doors.toolbox, doors.proxy)] == [
        int(api_direct),
        int(toolbox_direct),
        int(not api_direct) + int(not toolbox_direct),
    ]


def test_a_proxy_httpx_cannot_use_is_said_when_the_client_is_made() -> None:
    # the API's route is chosen at once (the toolbox's only when its host is known), so a
    # wrong proxy is a configuration error before any sandbox is asked for
    routes = ProxyRoutes.from_environ({"HTTPS_PROXY": "ftp://me:s3cret@proxy:21"})
    with pytest.raises(ConfigError) as refused:
        SandboxAPI(FakeDaytona().settings(proxies=routes))
    assert "ftp://me:***@proxy:21" in str(refused.value)
