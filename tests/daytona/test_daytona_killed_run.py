"""A run killed after its sandbox was made has still named it: the resume takes that one.

Before, a run recorded its sandbox only on ``run_start`` (none yet: it is made by the first
call) and ``run_end``. A ``rho-agent`` killed in between (SIGKILL, the OOM killer, a host
crash) left a trace naming no sandbox, and its resume searched by the session's labels,
which anyone in the organisation can set: a sandbox labelled for the session beforehand was
attached, and the agent worked in it. Now the executor tells the trace (``placed``) the
moment the sandbox exists, and a label search attaches nothing.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import signal
import sys
from pathlib import Path

import attrs
from daytona_support import serve_http

from rho_adapters.daytona import DaytonaExecutor
from rho_adapters.fakes import FakeClock, ScriptedModel
from rho_adapters.fakes.daytona import FakeDaytona
from rho_adapters.store.files import FileSessionStore
from rho_entry import Session

_CHILD = """
import asyncio, pathlib, sys
from rho_adapters.daytona import DaytonaExecutor
from rho_adapters.daytona.settings import DaytonaSettings
from rho_adapters.fakes import FunctionModel, call, tools
from rho_adapters.store.files import FileSessionStore
from rho_entry import Agent, AgentConfig, Session

api, ws, sessions, ready = sys.argv[1:]

async def turn(request):
    if len(request.messages) == 1:
        return tools(call("list", {"path": "."}))
    pathlib.Path(ready).write_text("listed")  # the sandbox exists: kill me now
    await asyncio.Event().wait()

async def main():
    settings = DaytonaSettings(api_key="fake-key", api_url=api, working_dir=ws, session_id="s1")
    executor = DaytonaExecutor(settings)
    agent = Agent(AgentConfig(model="m", backend="daytona"))
    async with Session(agent, model=FunctionModel(turn), executor=executor,
                       store=FileSessionStore(sessions), session_id="s1") as session:
        await session.run("look")

asyncio.run(main())
"""


@attrs.define
class _Door:
    lines: list[str] = attrs.Factory(list)
    connections: int = 0


async def test_a_run_killed_after_making_its_sandbox_is_resumed_in_that_sandbox(
    tmp_path: Path,
) -> None:
    fake = FakeDaytona(polls_until_started=0)
    servers, urls = [], []
    for host in ("127.0.0.1", "127.0.0.2"):  # the API's and the toolbox's (the fake: 2 hosts)
        server = await asyncio.start_server(functools.partial(serve_http, fake, _Door()), host)
        servers.append(server)
        urls.append(f"http://{host}:{server.sockets[0].getsockname()[1]}")
    fake.api_url, fake.toolbox_url = f"{urls[0]}/api", f"{urls[1]}/toolbox"
    ws, sessions, ready = tmp_path / "ws", tmp_path / "sessions", tmp_path / "ready"
    ws.mkdir()
    # someone in the organisation labels a sandbox as session s1's (sbx-1), before it runs
    spoof = DaytonaExecutor(fake.settings(session_id="s1"), transport=fake.transport)
    await spoof.stat(".")
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-c", _CHILD, fake.api_url, str(ws), str(sessions), str(ready),
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )  # fmt: skip
    try:
        async with asyncio.timeout(60):
            while not ready.exists() and child.returncode is None:
                await asyncio.sleep(0.02)
        assert ready.exists(), f"the run did not reach its second turn ({child.returncode})"
    finally:
        if child.returncode is None:
            child.send_signal(signal.SIGKILL)
        await child.wait()
    kinds = [json.loads(line)["kind"] for line in (sessions / "s1/trace.jsonl").open()]
    assert "run_end" not in kinds  # killed mid-run
    settings = fake.settings(working_dir=str(ws), session_id="s1", reattach=True)
    again = DaytonaExecutor(settings, transport=fake.transport, clock=FakeClock())
    store = FileSessionStore(sessions)
    resumed = await Session.resume("s1", store=store, model=ScriptedModel([]), executor=again)
    async with resumed:
        assert again.sandbox_id == "sbx-2"  # the one the killed run made, not the spoof
        assert not [n for n in resumed.resume_notices if "Daytona" in n]
    assert len(fake.created) == 2
    for executor in (again, spoof):
        await executor.aclose()
    for server in servers:
        server.close()
        await server.wait_closed()
