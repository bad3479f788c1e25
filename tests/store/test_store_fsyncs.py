"""Which files the file store fsyncs, and when: the trace and meta.json at each run boundary
(before ``append`` returns, so a boundary is on the disk before the run acts on it), and
nothing when a session is created, written between boundaries or closed (issue 33: the
disk's fsyncs bound 1,000 file-backed sessions at once)."""

from __future__ import annotations

import os
import time
from collections import Counter
from pathlib import Path

import pytest

from rho_adapters.store import FileSessionStore
from rho_domain import events as ev
from rho_domain.config import AgentConfig
from rho_domain.messages import AssistantMessage, Usage, UserMessage
from rho_domain.ports.store import SessionRecord
from rho_domain.run import RunStatus


@pytest.fixture
def fsynced(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Every fsync of this process from now on, by the name of the file synced (the file
    renamed over meta.json counts as meta.json: an unnamed one, ``#INODE (deleted)`` in
    /proc, the only whole-file write here, or a named temporary one without O_TMPFILE)."""
    synced: Counter[str] = Counter()
    real = os.fsync

    def counting(fd: int) -> None:
        name = Path(os.readlink(f"/proc/self/fd/{fd}")).name
        unnamed = name.startswith("#") and name.endswith(" (deleted)")
        synced["meta.json" if unnamed or name.startswith(".meta.json.") else name] += 1
        real(fd)

    monkeypatch.setattr(os, "fsync", counting)
    return synced


def run_events(run_id: str, prompt: str) -> tuple[list[ev.Event], list[ev.Event], ev.Event]:
    """A run's start, what happens between its boundaries, and its end."""
    usage = Usage(input_tokens=3, output_tokens=2)
    return (
        [ev.RunStarted(at=1.0, run_id=run_id, prompt=prompt)],
        [
            ev.MessageAdded(at=1.1, message=UserMessage(prompt)),
            ev.UsageRecorded(at=1.2, usage=usage, prompt_tokens=3),
            ev.MessageAdded(at=1.3, message=AssistantMessage(text="done")),
        ],
        ev.RunEnded(
            at=1.4,
            run_id=run_id,
            status=RunStatus.COMPLETED,
            text="done",
            usage=usage,
            session_usage=usage,
        ),
    )


async def test_a_run_fsyncs_the_trace_and_meta_at_its_boundaries_only(
    tmp_path: Path, fsynced: Counter[str]
) -> None:
    store = FileSessionStore(tmp_path / "sessions", heartbeat=3600)
    await store.create(SessionRecord(id="s1", created_at=time.time(), config=AgentConfig()))
    assert fsynced == Counter()  # created: meta.json written as a heartbeat writes it
    start, middle, end = run_events("r1", "look")
    await store.append("s1", start)
    assert fsynced == Counter({"trace.jsonl": 1, "meta.json": 1})  # before append returned
    for event in middle:
        await store.append("s1", [event])
    assert fsynced == Counter({"trace.jsonl": 1, "meta.json": 1})  # flushed, not synced
    await store.append("s1", [end])
    assert fsynced == Counter({"trace.jsonl": 2, "meta.json": 2})
    await store.release("s1")
    assert fsynced == Counter({"trace.jsonl": 2, "meta.json": 2})  # nothing synced twice
    meta = (tmp_path / "sessions" / "s1" / "meta.json").read_text()
    assert '"pid": null' in meta
    assert '"status": "completed"' in meta


async def test_a_session_closed_mid_run_syncs_what_its_trace_holds(
    tmp_path: Path, fsynced: Counter[str]
) -> None:
    store = FileSessionStore(tmp_path / "sessions", heartbeat=3600)
    await store.create(SessionRecord(id="s1", created_at=time.time(), config=AgentConfig()))
    start, middle, _end = run_events("r1", "look")
    await store.append("s1", start + middle)
    await store.append("s1", [ev.MessageAdded(at=2.0, message=AssistantMessage(text="more"))])
    await store.release("s1")
    assert fsynced["trace.jsonl"] == 2  # at the run's start, and the unsynced rest at close
    _record, events = await store.open("s1")
    await store.release("s1")
    assert [e.kind for e in events][-1] == "message"
    assert len(events) == 5
