"""A stdio server's processes that left its group end with it, and with the agent.

Closing a session killed the server's process group; a process the server started in a new
session (``setsid``, a daemon's double fork) was not in it and ran on after the session, and
after the agent was killed. The server now runs under the guard in service mode
(``rho_adapters/local/guard.py``), its group's leader and subreaper.

The guard kept a copy of the server's stdin and stdout: a server that closed its stdout and
ran on was never seen to (no end of its output came), nor one that closed its stdin (what we
wrote went into the guard's copy), and every call waited its whole call_timeout, the server
"ready" all along. The guard now closes its copies.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from mcp_support import alive, wait_gone

from rho_adapters.clock import SystemClock
from rho_adapters.fakes import MemoryExecutor
from rho_adapters.mcp import McpToolSource
from rho_adapters.mcp.stdio import StdioTransport
from rho_domain.errors import McpError, McpTimeout
from rho_domain.mcp_config import McpServerConfig
from rho_domain.permissions import readonly_profile
from rho_domain.tools.base import ToolContext

HOSTILE = str(Path(__file__).with_name("hostile_server.py"))

# A "server" that starts a daemon in a new session, says its pid, and reads its stdin until
# it ends; with IGNORE_TERM it also ignores TERM, so only the guard's stop ends it.
SERVER = textwrap.dedent(
    """
    [ -n "$IGNORE_TERM" ] && trap '' TERM
    setsid sh -c 'sleep 1000 & echo $! > "$0"; wait' "$PIDS" </dev/null >/dev/null 2>&1 &
    while [ ! -s "$PIDS" ]; do sleep 0.01; done
    echo started
    while read -r line; do :; done
    """
)


async def _started(transport: StdioTransport) -> None:
    said = asyncio.get_running_loop().create_future()

    def deliver(line: str) -> None:
        if not said.done():
            said.set_result(line)

    await transport.start(deliver, lambda why: None)
    assert (await asyncio.wait_for(said, 30)).strip() == "started"


@pytest.mark.parametrize("ignore_term", ["", "1"], ids=["stops-on-eof", "ignores-term"])
async def test_closing_ends_what_the_server_started_in_another_session(
    tmp_path: Path, ignore_term: str
) -> None:
    pids = tmp_path / "pids"
    env = {"PATH": os.environ["PATH"], "PIDS": str(pids), "IGNORE_TERM": ignore_term}
    transport = StdioTransport("strays", ("sh", "-c", SERVER), env=env)
    await _started(transport)
    daemon = int(pids.read_text())
    assert alive(daemon)

    await transport.aclose()

    assert wait_gone(daemon)


async def test_a_program_that_cannot_start_is_named() -> None:
    for program, said in (("/nonexistent/mcp-server", "No such file"), ("no-such-mcp", "PATH")):
        transport = StdioTransport("x", (program,), env={"PATH": "/usr/bin:/bin"})
        with pytest.raises(McpError, match=f"cannot start '{program}': .*{said}"):
            await transport.start(lambda line: None, lambda why: None)


AGENT = textwrap.dedent(
    """
    import asyncio, os, sys
    from rho_adapters.mcp.stdio import StdioTransport

    async def main():
        env = {"PATH": os.environ["PATH"], "PIDS": sys.argv[2], "IGNORE_TERM": "1"}
        transport = StdioTransport("strays", ("sh", "-c", sys.argv[1]), env=env)
        said = asyncio.get_running_loop().create_future()
        await transport.start(lambda line: said.done() or said.set_result(line), print)
        await said
        print(transport.process.pid, flush=True)
        await asyncio.sleep(3600)

    asyncio.run(main())
    """
)


def test_killing_the_agent_ends_the_server_and_what_left_its_group(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    agent = subprocess.Popen(
        [sys.executable, "-c", AGENT, SERVER, str(pids)],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    try:
        assert agent.stdout is not None
        guard = int(agent.stdout.readline())
        daemon = int(pids.read_text())
        assert alive(guard)
        assert alive(daemon)
        agent.send_signal(signal.SIGKILL)
        agent.wait(timeout=30)
        assert wait_gone(daemon)
        assert wait_gone(guard)
    finally:
        agent.kill()
        agent.wait()


@pytest.mark.parametrize(
    ("mode", "said"),
    [
        ("close-stdout", r"closed its output \(stdout\): it can answer nothing more"),
        ("close-stdin", r"closed its input \(stdin\): it can read nothing more"),
    ],
)
async def test_a_server_that_closes_a_pipe_and_runs_on_fails_the_call_at_once(
    mode: str, said: str
) -> None:
    config = McpServerConfig(
        command=(sys.executable, HOSTILE), env={"HOSTILE": mode}, call_timeout=30
    )
    source = McpToolSource({"h": config}, environ={"PATH": "/usr/bin:/bin"}, output_limit=2_000)
    ctx = ToolContext(
        session_id="s1",
        call_id="c1",
        executor=MemoryExecutor(),
        profile=readonly_profile(),
        clock=SystemClock(),
    )
    try:
        assert "mcp__h__plain" in [tool.name for tool in (await source.current()).handlers]
        client = source.servers["h"].client
        assert client is not None
        assert isinstance(client.transport, StdioTransport)
        assert client.transport.process is not None
        guard = client.transport.process.pid
        with pytest.raises(McpError, match=said) as raised:
            await source.call("h", "plain", {}, ctx)
        assert not isinstance(raised.value, McpTimeout)
        assert source.servers["h"].state == "failed"  # gone: the next current starts it again
    finally:
        await source.aclose()
    assert wait_gone(guard)
