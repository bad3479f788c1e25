"""A run whose ``run_end`` the file store refused at close (the trace's file size limit
reached as the run ended: what a full disk does to the write, on the real kernel) is ended by
the next owner of the session, a new store object as another process has: the resume finds
the run the trace leaves open and ends it as unrecorded, before its own run starts
(``run_boundaries._end_unrecorded``). Before, the trace held two runs started and one ended,
and the first read as running for good. The PostgreSQL case (a role whose logins are refused
then allowed): ``test_pg_end_write.py``."""

from __future__ import annotations

import resource
from collections.abc import Sequence
from pathlib import Path

import pytest

from rho_adapters.fakes import ScriptedModel, text
from rho_adapters.store import FileSessionStore
from rho_domain import events as ev
from rho_domain.config import AgentConfig
from rho_domain.errors import StoreError
from rho_entry.facade import Agent, Session


class LimitAtTheEnd(FileSessionStore):
    """The real file store, whose trace may not grow once a run's end is appended: the
    process's file size limit (``ulimit -f``) is set to the trace's size, until ``lift``."""

    limited: tuple[int, int] | None = None

    async def append(self, session_id: str, events: Sequence[ev.Event]) -> None:
        if self.limited is None and any(isinstance(e, ev.RunEnded) for e in events):
            self.limited = resource.getrlimit(resource.RLIMIT_FSIZE)
            size = (self.root / session_id / "trace.jsonl").stat().st_size
            resource.setrlimit(resource.RLIMIT_FSIZE, (size, self.limited[1]))
        await super().append(session_id, events)

    def lift(self) -> None:
        if self.limited is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, self.limited)


async def test_a_run_end_the_file_store_refused_is_ended_by_the_next_owner(
    tmp_path: Path,
) -> None:
    store = LimitAtTheEnd(tmp_path)
    session = Session(
        Agent(AgentConfig(model="scripted")), model=ScriptedModel([text("done")]), store=store
    )
    try:
        result = await session.run("go")
        with pytest.raises(StoreError, match=r"closed with \d event\(s\) not stored"):
            await session.close()
    finally:
        store.lift()
    assert result.error is not None
    assert "its run_end was not stored" in result.error
    again = FileSessionStore(tmp_path)  # as another process: the kept events are not its
    resumed = await Session.resume(session.id, store=again, model=ScriptedModel([text("on")]))
    assert (await resumed.run("go on")).status.value == "completed"
    await resumed.close()
    _, events = await again.open(session.id)
    await again.release(session.id)
    ends = [e for e in events if isinstance(e, ev.RunEnded)]
    assert [(e.run_id, e.status.value) for e in ends][:1] == [(result.run_id, "error")]
    assert ends[0].error is not None
    assert ends[0].error.startswith("ended unrecorded: the process that ran it stopped")
    assert events[events.index(ends[0]) + 1].kind == "run_start"
    assert ends[-1].status.value == "completed"
    assert len(ends) == 2
    assert [e.kind for e in events].count("run_start") == 2
