"""``rho-agent --server URL`` never prints the password of a URL typed with a login
(``https://user:PW@proxy.example/``): its messages go to a terminal or a CI log. Before,
the unreachable server's message, and the 404's (``HTTP 404 ... from POST URL/api/sessions``),
printed the URL whole, as the run header printed ``--base-url`` before 54c3a29."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

import pytest
from cli_support import rho

from rho_adapters.fakes.loopback import LoopbackServer
from rho_entry.client import AgentClient
from rho_entry.server.errors import ApiError

PASSWORD = "s3cret-pw"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_an_unreachable_servers_message_hides_the_password(tmp_path: Path) -> None:
    url = f"http://agent:{PASSWORD}@127.0.0.1:{_free_port()}"
    result = rho("--server", url, "a task", cwd=tmp_path, home=tmp_path / "home")
    assert result.returncode == 1
    assert "rho-agent: cannot reach http://agent:***@127.0.0.1:" in result.stderr
    assert PASSWORD not in result.stdout + result.stderr


def test_a_servers_error_answer_hides_the_password(tmp_path: Path) -> None:
    with LoopbackServer([]) as server:  # answers 404 to anything but a model's request
        url = server.base_url.removesuffix("/v1").replace("//", f"//agent:{PASSWORD}@", 1)
        task = rho("--server", url, "a task", cwd=tmp_path, home=tmp_path / "home")
        listing = rho("--server", url, "--list", cwd=tmp_path, home=tmp_path / "home")
    for result, method in ((task, "POST"), (listing, "GET")):
        assert result.returncode == 1
        assert f"HTTP 404 Not Found from {method} http://agent:***@127.0.0.1:" in result.stderr
        assert PASSWORD not in result.stdout + result.stderr


def test_the_clients_error_hides_the_password(tmp_path: Path) -> None:
    """``AgentClient``'s own errors (a library caller logs them) hide it too."""

    async def listing(url: str) -> None:
        client = AgentClient(url, environ={"RHO_AGENT_HOME": str(tmp_path)})
        try:
            await client.list_sessions()
        finally:
            await client.aclose()

    with LoopbackServer([]) as server:
        url = server.base_url.removesuffix("/v1").replace("//", f"//agent:{PASSWORD}@", 1)
        with pytest.raises(ApiError) as raised:
            asyncio.run(listing(url))
    assert "from GET http://agent:***@127.0.0.1:" in str(raised.value)
    assert PASSWORD not in str(raised.value)
