"""Events a session's close could not store are kept, and stored by its next close once the
store answers (``rho_domain/loop/unstored.py``) unless another process wrote the session
since: then they are dropped, named, and nothing is written after the other's events (they
would end a run that is not theirs). The PostgreSQL case, a role whose logins are refused then
allowed: ``tests/store/test_pg_end_write.py``."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from rho_adapters.fakes import MemorySessionStore, ScriptedModel, text
from rho_domain import events as ev
from rho_domain.config import AgentConfig
from rho_domain.errors import StoreError
from rho_entry.facade import Agent, Session


class RefusesEnds(MemorySessionStore):
    """A store that refuses every ``run_end`` while ``refusing``."""

    refusing = True

    async def append(self, session_id: str, events: Sequence[ev.Event]) -> None:
        if self.refusing and any(isinstance(e, ev.RunEnded) for e in events):
            raise StoreError("the database refuses logins")
        await super().append(session_id, events)


async def _ended_unstored(store: RefusesEnds) -> Session:
    session = Session(
        Agent(AgentConfig(model="scripted")), model=ScriptedModel([text("done")]), store=store
    )
    result = await session.run("go")
    assert result.error is not None
    assert "its run_end was not stored" in result.error
    with pytest.raises(StoreError, match=r"closed with 1 event\(s\) not stored \(run_end\)"):
        await session.close()
    return session


async def test_the_next_close_stores_what_a_close_could_not() -> None:
    store = RefusesEnds()
    session = await _ended_unstored(store)
    store.refusing = False
    await session.close()
    kinds = [e.kind for e in store.events(session.id)]
    assert kinds[-1] == "run_end"
    assert kinds.count("run_end") == 1
    assert not store.held(session.id)
    await session.close()  # nothing more to store: nothing written twice
    assert [e.kind for e in store.events(session.id)] == kinds


async def test_a_session_written_since_by_another_is_not_ended_by_the_kept_events() -> None:
    store = RefusesEnds()
    session = await _ended_unstored(store)
    store.refusing = False
    other = await Session.resume(session.id, store=store, model=ScriptedModel([text("mine")]))
    assert (await other.run("go on")).status.value == "completed"
    await other.close()
    theirs = store.events(session.id)
    with pytest.raises(StoreError) as refused:
        await session.close()
    assert str(refused.value) == (
        f"session {session.id} was written by another process since it closed with 1 "
        "event(s) not stored (run_end): they are not written after its events, and are "
        "dropped; its trace reads as it stands"
    )
    assert store.events(session.id) == theirs
    assert not store.held(session.id)
    await session.close()  # dropped: nothing left to store
    assert store.events(session.id) == theirs


async def test_the_next_owner_ends_the_run_whose_end_no_one_stored() -> None:
    """The session object that kept the ``run_end`` is gone (a runtime's or server's handle
    closes once; another process resumes): the resume ends the run the trace leaves open,
    said as unrecorded, at its last stored event, before its own run starts. Before, the
    trace held two runs started and one ended, the first read as running for good."""
    store = RefusesEnds()
    first = await _ended_unstored(store)
    store.refusing = False
    stored = store.events(first.id)
    started = [e for e in stored if isinstance(e, ev.RunStarted)]
    other = await Session.resume(first.id, store=store, model=ScriptedModel([text("mine")]))
    assert (await other.run("go on")).status.value == "completed"
    await other.close()
    events = store.events(first.id)
    assert events[: len(stored)] == stored
    ended, restarted = events[len(stored)], events[len(stored) + 1]
    assert isinstance(ended, ev.RunEnded)
    assert (ended.run_id, ended.status.value, ended.at) == (
        started[0].run_id,
        "error",
        stored[-1].at,
    )
    assert ended.error is not None
    assert ended.error.startswith("ended unrecorded: the process that ran it stopped")
    assert isinstance(restarted, ev.RunStarted)
    assert [e.kind for e in events].count("run_end") == 2
