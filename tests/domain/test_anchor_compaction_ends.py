"""Anchor item 12 (the reference's failed compaction replaced history with the error text),
re-tried on what the trace says when a manual compaction does not happen.

History is kept (tested in test_domain_compaction.py). But a ``compact_start`` was left
without an end: a failed summary (the model's error, an empty summary) or one that would
not make the context smaller recorded nothing after it, so ``monitor watch`` and the
dashboard showed a compaction still under way, and the trace did not say why nothing was
compacted. Each now ends with an ``error`` event naming what happened (as a failed
auto-compaction already did).
"""

from __future__ import annotations

import pytest
from domain_support import make_session

from rho_adapters.fakes import MemorySessionStore, Turn, text
from rho_domain import events as ev
from rho_domain.errors import ServerError
from rho_domain.loop.session import Session


def _after_start(session: Session, store: MemorySessionStore) -> list[ev.Event]:
    events = list(store.events(session.id))
    starts = [i for i, e in enumerate(events) if isinstance(e, ev.CompactStarted)]
    assert len(starts) == 1
    return events[starts[0] + 1 :]


async def _two_runs(replies: list[Turn]) -> tuple[Session, MemorySessionStore]:
    store = MemorySessionStore()
    session = make_session([text("one " * 200), text("two " * 200), *replies], store=store)
    await session.run("a")
    await session.run("b")
    return session, store


async def test_a_failed_summary_ends_its_compaction_in_the_trace() -> None:
    session, store = await _two_runs([Turn(error=ServerError("boom", status=500))])
    with pytest.raises(ServerError):
        await session.compact()
    errors = [e for e in _after_start(session, store) if isinstance(e, ev.ErrorOccurred)]
    assert [e.error_type for e in errors] == ["ServerError"]
    assert "compaction failed" in errors[0].message
    assert "boom" in errors[0].message


async def test_an_empty_summary_ends_its_compaction_in_the_trace() -> None:
    session, store = await _two_runs([text("")])
    with pytest.raises(Exception, match="empty summary"):
        await session.compact()
    errors = [e for e in _after_start(session, store) if isinstance(e, ev.ErrorOccurred)]
    assert ["empty summary" in e.message for e in errors] == [True]


async def test_a_summary_that_would_not_shrink_the_context_ends_its_compaction() -> None:
    session, store = await _two_runs([text("a summary far longer than the history " * 400)])
    result = await session.compact()
    assert result.summary == ""
    assert "would not make the context smaller" in result.note
    after = _after_start(session, store)
    assert not any(isinstance(e, ev.Compacted) for e in after)
    errors = [e for e in after if isinstance(e, ev.ErrorOccurred)]
    assert [e.error_type for e in errors] == ["CompactionRejected"]
    assert "would not make the context smaller" in errors[0].message
