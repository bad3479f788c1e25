"""A session driven in its own process, for the real-process store tests.

usage: store_child.py ROOT SESSION_ID loop|kill MARKER

ROOT is a sessions directory, or a ``postgresql://`` URL (a host of the PostgreSQL store that
beats every 0.2 s).

- ``loop``: the model calls the ``tick`` tool forever (until cancelled from outside).
- ``kill``: one model call (usage 10 in / 2 out) calls ``block``, which touches MARKER and
  waits forever, so the test can SIGKILL the process in the middle of a tool.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from store_support import BlockTool, build_session

from rho_adapters.clock import SystemClock
from rho_adapters.fakes import FunctionModel, call, tools
from rho_adapters.store import FileSessionStore, FileSignals
from rho_domain.config import AgentConfig
from rho_domain.model import ModelRequest
from rho_domain.tools.base import READ_ONLY, ToolContext, ToolHandler, ToolOutput, ToolPolicy


class TickTool(ToolHandler):
    name = "tick"
    description = "Wait a little."
    parameters: Mapping[str, Any] = {"type": "object", "properties": {}}

    def policy_for(self, arguments: Mapping[str, Any]) -> ToolPolicy:
        return READ_ONLY

    async def handle(self, arguments: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
        await asyncio.sleep(0.05)
        return ToolOutput(content="tick")


def _tick(request: ModelRequest) -> Any:
    return tools(call("tick"), input_tokens=5, output_tokens=1)


async def main(root: Path, session_id: str, scenario: str, marker: Path) -> int:
    store: Any
    signals: Any
    if str(root).startswith("postgresql:"):
        from rho_adapters.pgstore import PgBackend, StoreAddress, of_backend

        pg = of_backend(PgBackend(StoreAddress(str(root), "the test"), heartbeat=0.2))
        store, signals = pg.store, pg.signals
    else:
        store = FileSessionStore(root, heartbeat=0.2)
        signals = FileSignals(root, poll=0.05)
    if scenario == "loop":
        session = build_session(
            [],
            store=store,
            signals=signals,
            tools=[TickTool()],
            session_id=session_id,
            clock=SystemClock(),
            model=FunctionModel(_tick),
            # the same tick until cancelled: the repeat guard would end it "stuck"
            config=AgentConfig(profile="eval", model="scripted", repeat_limit=0),
        )
    else:
        turns = [tools(call("block", id="call_block"), input_tokens=10, output_tokens=2)]
        session = build_session(
            turns,
            store=store,
            signals=signals,
            tools=[BlockTool(marker)],
            session_id=session_id,
            clock=SystemClock(),
        )
    result = await session.run("investigate the outage")
    await session.close()
    print(result.status.value, flush=True)
    return 0


if __name__ == "__main__":
    root, session_id, scenario, marker = sys.argv[1:5]
    where: Any = root if root.startswith("postgresql:") else Path(root)
    sys.exit(asyncio.run(main(where, session_id, scenario, Path(marker))))
