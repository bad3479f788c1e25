"""``Session.close()`` in two corners.

After the store's directory was removed under it (an operator's ``rm -rf
~/.rho-agent/sessions``, a temporary home cleaned): the close fails (the trace and meta.json
cannot be written), but what close owes still happens: the session's lock is let go (its
descriptor closed), listeners that end with the session are told, and the error names it.

While a run is in progress (``async with session`` left with a run task still going, a UI's
close button): the run is cancelled and its end recorded before the lock is released; from
another thread's loop, where it cannot be awaited, close is refused and nothing is released.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from pathlib import Path

import pytest
from store_support import BlockTool, build_session

from rho_adapters.fakes import call, text, tools
from rho_adapters.store import FileSessionStore
from rho_domain import events as ev
from rho_domain.errors import SessionStateError, StoreError
from rho_domain.messages import UserMessage


class Ends:
    def __init__(self) -> None:
        self.closed = 0

    def __call__(self, event: ev.Event) -> None:
        pass

    def session_closed(self) -> None:
        self.closed += 1


def open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


async def test_close_after_the_store_root_was_removed_lets_go_and_tells_listeners(
    tmp_path: Path,
) -> None:
    root = tmp_path / "sessions"
    before = open_fds()
    for pending in (False, True):  # nothing left to write; events still queued
        session = build_session([text("done")], store=FileSessionStore(root))
        ends = Ends()
        session.journal.listeners.append(ends)
        await session.run("hi")
        if pending:
            session.journal._unpersisted.append(
                ev.MessageAdded(at=1.0, message=UserMessage("late"))
            )
        shutil.rmtree(root)
        with pytest.raises(StoreError, match=str(root)):
            await session.close()
        assert ends.closed == 1, pending
        leaked = {fd for fd in open_fds() - before if os.path.exists(f"/proc/self/fd/{fd}")}
        assert not {os.readlink(f"/proc/self/fd/{fd}") for fd in leaked}, pending


async def test_close_during_a_run_cancels_it_and_records_its_end_before_letting_go(
    tmp_path: Path,
) -> None:
    store = FileSessionStore(tmp_path / "sessions")
    session = build_session(
        [tools(call("block", {})), text("never")], store=store, tools=[BlockTool()]
    )
    started = asyncio.Event()
    run = asyncio.ensure_future(
        session.run(
            "hi", on_event=lambda e: started.set() if isinstance(e, ev.ToolStarted) else None
        )
    )
    await started.wait()
    with pytest.raises(SessionStateError, match="another event loop"):
        await asyncio.to_thread(asyncio.run, session.close())
    assert session.id in store._open  # refused: nothing released
    assert not run.done()
    await session.close()
    assert run.result().status == "cancelled"
    assert session.id not in store._open
    trace = (tmp_path / "sessions" / session.id / "trace.jsonl").read_text().splitlines()
    last = json.loads(trace[-1])
    assert (last["kind"], last["status"]) == ("run_end", "cancelled")
