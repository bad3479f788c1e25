"""A run ended by an exception whose message cannot be read is still told, and says what failed.

``end_run`` formats the run's error and the store's failure to take ``run_end``; both went
through ``plugged.described`` (a ``__str__`` that raises is said so) untested. The second said
only the store's exception: a completed run's result held "Unreadable: (its message could not
be read...)" with ``error_type`` None, naming neither ``run_end`` nor that it stays queued.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NoReturn

from domain_support import make_session

from rho_adapters.fakes import MemorySessionStore, ScriptedModel, text
from rho_domain import events as ev
from rho_domain.run import RunStatus

UNREAD = "Unreadable: (its message could not be read: ValueError in __str__)"


class Unreadable(Exception):
    def __str__(self) -> str:
        raise ValueError("no message")


class _Model(ScriptedModel):
    def stream(self, request: Any) -> NoReturn:
        raise Unreadable


class _Store(MemorySessionStore):
    """Refuses ``run_end`` once."""

    refused = False

    async def append(self, session_id: str, events: Sequence[ev.Event]) -> None:
        if not self.refused and any(isinstance(e, ev.RunEnded) for e in events):
            self.refused = True
            raise Unreadable
        await super().append(session_id, events)


async def test_a_run_ended_by_an_unreadable_error_is_told_and_run_end_kept() -> None:
    store = MemorySessionStore()
    session = make_session([], store=store)
    session.model = _Model([])
    result = await session.run("go")
    assert (result.status, result.error, result.error_type) == (
        RunStatus.ERROR,
        UNREAD,
        "Unreadable",
    )
    said = [e for e in store.events(session.id) if isinstance(e, ev.ErrorOccurred)]
    assert said[0].message == "(its message could not be read: ValueError in __str__)"
    assert store.events(session.id)[-1].kind == "run_end"
    store = _Store()
    session = make_session([text("done")], store=store)
    result = await session.run("go")
    assert (result.status, result.error_type) == (RunStatus.COMPLETED, "Unreadable")
    assert result.error == (
        f"the run ended completed but its run_end was not stored: {UNREAD}; it stays queued "
        "and is written by the next write or the session's close"
    )
    await session.close()
    ended = store.events(session.id)[-1]
    assert isinstance(ended, ev.RunEnded)
    assert ended.status is RunStatus.COMPLETED
