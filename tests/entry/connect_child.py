"""A session driven in its own process for the connect test: it reads facts.txt every turn
until it is cancelled from outside.

usage: connect_child.py ROOT SESSION_ID BASE_URL
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from rho_adapters.fakes import FunctionModel, MemoryExecutor, Turn, call, tools
from rho_adapters.store import FileSessionStore
from rho_domain.model import ModelRequest
from rho_entry import Agent, AgentConfig, Session

FACTS = "the cache of service A is cold since 09:12"


async def _turn(request: ModelRequest) -> Turn:
    await asyncio.sleep(0.05)  # a model that takes a moment; every turn passes checkpoints
    return tools(call("read", {"path": "facts.txt"}))


async def main(root: Path, session_id: str, base_url: str) -> int:
    # The same read forever, until cancelled: the repeat guard would end it "stuck".
    config = AgentConfig(
        profile="readonly", model="fake", base_url=base_url, max_turns=0, repeat_limit=0
    )
    async with Session(
        Agent(config),
        model=FunctionModel(_turn),
        executor=MemoryExecutor({"facts.txt": FACTS}),
        store=FileSessionStore(root, heartbeat=0.2),
        session_id=session_id,
    ) as session:
        result = await session.run("Watch service A")
    return 0 if result.status.value == "cancelled" else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main(Path(sys.argv[1]), sys.argv[2], sys.argv[3])))
