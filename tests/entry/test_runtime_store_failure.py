"""A store that fails to keep a run's end (a full disk) while a service runs it: the handle's
result says so, and the failure of the session's close is said there too, not raised into
the handle's task that nobody awaits.

Before, the close's failure ended the handle's task: asyncio printed "Task exception was
never retrieved" with its traceback to the service's log whenever the collector got to it,
and the result still promised that the run's end "stays queued and is written by the next
write or the session's close", the close that had just failed."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rho_adapters.fakes import ScriptedModel, text
from rho_adapters.fakes.memory_store import MemorySessionStore
from rho_domain import events as ev
from rho_domain.errors import StoreError
from rho_entry import AgentConfig, close_runtime, create_runtime, dispatch_prompt, start_runtime


class FullDisk(MemorySessionStore):
    """Keeps every event but a run's end: the disk filled as the run ended."""

    async def append(self, session_id: str, events: Sequence[ev.Event]) -> None:
        if any(isinstance(e, ev.RunEnded) for e in events):
            raise StoreError(f"cannot write session {session_id}: No space left on device")
        await super().append(session_id, events)


async def test_a_close_that_fails_is_said_in_the_result_not_lost_in_a_task(
    tmp_path: Path,
) -> None:
    loop = asyncio.get_running_loop()
    unretrieved: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _, context: unretrieved.append(context))
    runtime = create_runtime(
        AgentConfig(working_dir=str(tmp_path), profile="eval", model="scripted"),
        model=ScriptedModel([text("done")]),
        store=FullDisk(),
    )
    await start_runtime(runtime)
    handle = await dispatch_prompt(runtime, "go", new_session=True)
    result = await handle.wait_done()
    await close_runtime(runtime)
    del handle, runtime
    gc.collect()
    loop.set_exception_handler(None)
    assert unretrieved == []
    assert result.text == "done"
    assert result.error is not None
    assert "run_end was not stored" in result.error
    assert (
        "then closing the session failed: StoreError: session "
        f"{result.session_id} closed with 1 event(s) not stored (run_end): cannot write "
        f"session {result.session_id}: No space left on device; everything before them is "
        "stored: once the store answers again, resume the session to go on"
    ) in result.error
