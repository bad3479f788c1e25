"""A session changes its history from one place at a time: ``compact()`` while a run is in
progress, or ``run()`` while a compaction waits for its summary, is refused; and a session
cannot be copied into a second driver of the same history.

Compaction plans from the history it reads before asking the model for the summary and
replaces the history with the summary and that plan's tail when the answer comes: what a run
added meanwhile (its tool results, its answer) was dropped from the history, and the run and
the summary took each other's model answers.
"""

from __future__ import annotations

import asyncio
import copy
import pickle

import pytest
from domain_support import SlowTool, make_session

from rho_adapters.fakes import MemorySessionStore, Turn, call, text, tools
from rho_domain.errors import ConfigError, SessionStateError
from rho_domain.messages import UserMessage


async def test_compact_during_a_run_and_a_run_during_compact_are_refused() -> None:
    slow = SlowTool()
    long = "x" * 2_000
    session = make_session(
        [
            text("one " + long),
            text("two " + long),
            Turn(hang=True),  # the summary that never comes
            text("three"),
            tools(call("slow", {})),
            text("five"),  # without the checks: the summary of a compaction run beside them
        ],
        tools=[slow],
    )
    await session.run("first task")
    await session.run("second task")
    kept = list(session.state.messages)
    compaction = asyncio.ensure_future(session.compact())
    while not session.model.requests[2:]:  # type: ignore[attr-defined]
        await asyncio.sleep(0)
    with pytest.raises(SessionStateError, match="compacting its history"):
        await session.run("third task")
    compaction.cancel()
    with pytest.raises(asyncio.CancelledError):
        await compaction
    assert session.state.messages == kept
    assert (await session.run("third task")).text == "three"

    run = asyncio.ensure_future(session.run("fourth task"))
    await slow.started.wait()
    with pytest.raises(SessionStateError, match="while a run is in progress"):
        await session.compact()
    session.cancel()
    await run
    assert (await session.run("fifth task")).text == "five"
    assert session.state.messages[0] == UserMessage("first task")  # nothing compacted


async def test_a_domain_session_fork_returns_is_neither_pickled_nor_copied() -> None:
    session = make_session([text("a")], store=MemorySessionStore())
    await session.run("x")
    child = await session.fork(at=1)
    for way in (pickle.dumps, copy.copy, copy.deepcopy):
        with pytest.raises(TypeError, match=f"cannot be pickled or copied.*{child.id}"):
            way(child)


def test_labels_a_listing_would_copy_are_refused_where_a_session_is_made() -> None:
    # before: any labels were kept and copied into every listing and meta.json rewrite
    from rho_domain.ports.store import LABEL_KEY_CHARS, LABELS_CHARS, LABELS_MAX
    from rho_entry.server.bodies import parse_create
    from rho_entry.server.errors import Invalid

    fine = {"team": "sre", "k" * LABEL_KEY_CHARS: "v" * (LABELS_CHARS - LABEL_KEY_CHARS - 7)}
    assert make_session([], labels=fine).labels == fine
    for labels, said in (
        (
            {"notes": "x" * LABELS_CHARS},
            "labels of 8197 characters in all, over 8192 .the label 'notes' has 8192",
        ),
        ({"k" * 300: "v"}, "the label key 'kkkk"),
        ({f"l{n}": "" for n in range(LABELS_MAX + 1)}, "65 labels, over the limit of 64"),
    ):
        with pytest.raises(ConfigError, match=f"session labels: {said}"):
            make_session([], labels=labels)
        with pytest.raises(Invalid, match=said):
            parse_create({"prompt": "hi", "labels": labels})
