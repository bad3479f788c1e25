"""A session driven in its own process for the connect tests: its one model call waits until
the file GO exists, then answers without tool calls, so the run ends (no checkpoint after
the export was asked) and the process exits.

usage: connect_ending_child.py ROOT SESSION_ID GO
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from rho_adapters.fakes import FunctionModel, MemoryExecutor, Turn, text
from rho_adapters.store import FileSessionStore
from rho_domain.model import ModelRequest
from rho_entry import Agent, AgentConfig, Session

ANSWER = "the queue drained at 10:40"


async def main(root: Path, session_id: str, go: Path) -> int:
    async def answer(request: ModelRequest) -> Turn:
        while not go.exists():
            await asyncio.sleep(0.02)
        return text(ANSWER)

    async with Session(
        Agent(AgentConfig(profile="readonly", model="fake", base_url="http://127.0.0.1:9/v1")),
        model=FunctionModel(answer),
        executor=MemoryExecutor(),
        store=FileSessionStore(root, heartbeat=0.2),
        session_id=session_id,
    ) as session:
        result = await session.run("Watch the queue")
    return 0 if result.ok else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main(Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3]))))
