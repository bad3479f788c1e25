"""Two executions of one queued run at once (a worker taken for dead while it runs: the run is
put back on the queue and taken again, here by the same process), against one file store: the
session is driven by one of them at a time, the other retraces what the first wrote, and both
answer the run's one end, which its trace holds once. No engine: ``RecordingSteps`` stand for
each execution's steps, and the model is the scripted loopback server."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from pathlib import Path

import attrs
import pytest
from durable_support import answer, scripted, trace

from rho_adapters.fakes import RecordingSteps
from rho_adapters.fakes.loopback import LoopbackServer
from rho_adapters.fakes.wire import call, tool_reply
from rho_adapters.store import FileSessionStore
from rho_domain import events as ev
from rho_domain.config import AgentConfig
from rho_domain.errors import ConfigError, StoreError
from rho_domain.ports.durable import QueuedRun
from rho_domain.ports.store import SessionRecord
from rho_entry.durable.runner import DurableRunner, WorkerSetup

SCRIPTS = {"twice": [tool_reply(call("list", {"path": "."}, "t1")), answer("done once")]}


async def test_a_new_sessions_run_executed_twice_at_once_ends_once_and_completes_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    store = tmp_path / "store"
    queued = QueuedRun(run_id="r1", session_id="s1", prompt="twice: list")
    with LoopbackServer([], rules=[scripted(SCRIPTS)]) as model:
        config = AgentConfig(model="fake-model", base_url=model.base_url, profile="readonly")
        runner = DurableRunner(WorkerSetup(store=FileSessionStore(store), config=config))
        # both look for the session before either has created it
        results = await asyncio.gather(
            runner(queued, RecordingSteps()), runner(queued, RecordingSteps())
        )
    # the one that found the session created meanwhile retraced the run instead of failing
    # to create it (its result, "error", could have been the one the engine recorded)
    assert list(results) == ["completed", "completed"]
    events = trace(store, "s1")
    assert [e["run_id"] for e in events if e["kind"] == "run_start"] == ["r1"]
    assert [e["status"] for e in events if e["kind"] == "run_end"] == ["completed"]


async def test_a_stored_session_runs_in_the_workers_workspace_never_where_its_config_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker resumes sessions from a store every enqueuer shares, where anyone who can
    write a session's config.yaml chose its working_dir: ``/`` or a home directory would be
    where the worker's tools read and write (the CLI, the runtime and a server each held it
    to their own workspace or roots; the worker did not)."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "id_rsa").write_text("key\n")
    store = FileSessionStore(tmp_path / "store")
    with LoopbackServer([], rules=[scripted(SCRIPTS)]) as model:
        config = AgentConfig(model="fake-model", base_url=model.base_url, profile="readonly")
        stored = attrs.evolve(config, working_dir=str(elsewhere))
        await store.create(SessionRecord(id="s2", created_at=0.0, config=stored))
        await store.release("s2")
        runner = DurableRunner(WorkerSetup(store=store, config=config))
        queued = QueuedRun(run_id="r2", session_id="s2", prompt="twice: list")
        with pytest.raises(ConfigError) as refused:
            await runner(queued, RecordingSteps())
    assert str(refused.value) == (
        f"session s2 was stored with working_dir {str(elsewhere)!r}, outside your workspace "
        f"{str(tmp_path / 'work')!r}; a session directory does not choose where the tools "
        f"read and write: start the worker in {str(elsewhere)!r} to work there"
    )
    assert model.requests == []
    assert trace(tmp_path / "store", "s2") == []


async def test_a_queued_session_id_names_one_session_exactly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The queued run's session id was resolved as a user's reference is: a unique prefix,
    ``latest`` or a directory path opened another session (any directory holding a
    meta.json, for a path), and the queued prompt ran in it. A queue is data: its id names
    the session exactly, else the run is refused before anything is opened or sent."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    store = FileSessionStore(tmp_path / "store")
    with LoopbackServer([], rules=[scripted(SCRIPTS)]) as model:
        config = AgentConfig(model="fake-model", base_url=model.base_url, profile="readonly")
        await store.create(SessionRecord(id="abc123def456", created_at=0.0, config=config))
        await store.release("abc123def456")
        kept = (tmp_path / "store" / "abc123def456" / "trace.jsonl").read_bytes()
        runner = DurableRunner(WorkerSetup(store=store, config=config))
        refusals = []
        for n, ref in enumerate(("abc", "latest", str(tmp_path / "store" / "abc123def456"))):
            queued = QueuedRun(run_id=f"r{n}", session_id=ref, prompt="twice: list")
            with pytest.raises(ConfigError) as refused:
                await runner(queued, RecordingSteps())
            refusals.append(str(refused.value))
        assert model.requests == []
    assert (tmp_path / "store" / "abc123def456" / "trace.jsonl").read_bytes() == kept
    assert sorted(p.name for p in (tmp_path / "store").iterdir()) == ["abc123def456"]
    assert refusals[0] == (
        "queued run r0 names session 'abc', which the store resolves to session "
        "abc123def456: a queued run names its session by its exact id (a prefix, latest or a "
        "path is a person's shorthand, not the queue's); nothing was run"
    )
    assert refusals[2].startswith(f"queued run r2 names session {str(tmp_path)!r}"[:-1])
    assert "is not a session id" in refusals[2]


class DiesBeforeItsEnd(FileSessionStore):
    """A file store whose process dies as the run's ``run_end`` is written: nothing of it
    stored while ``dying`` (the execution that takes the run over writes it)."""

    dying = True

    async def append(self, session_id: str, events: Sequence[ev.Event]) -> None:
        if self.dying and any(isinstance(e, ev.RunEnded) for e in events):
            raise StoreError("the worker died here")
        await super().append(session_id, events)


async def _asked() -> bool:
    return True


async def test_a_run_cancelled_before_its_worker_died_is_retraced_to_its_cancel(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its trace holds the cancel (``Interrupted`` cancelled) and no end: the execution that
    takes it over stops where the trace was stopped, not at its trace's end: it went on to
    call the model where the trace holds the cancel, and ended ``ReplayDiverged``."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    store = DiesBeforeItsEnd(tmp_path / "store")
    queued = QueuedRun(run_id="r3", session_id="s3", prompt="twice: list")
    first = RecordingSteps()
    with LoopbackServer([], rules=[scripted(SCRIPTS)]) as model:
        config = AgentConfig(model="fake-model", base_url=model.base_url, profile="readonly")
        runner = DurableRunner(WorkerSetup(store=store, config=config))
        with contextlib.suppress(StoreError):  # cancelled at its first checkpoint, then died
            await runner(queued, first, _asked)
        store.dying = False
        assert [e["kind"] for e in trace(tmp_path / "store", "s3")][-1] == "interruption"
        assert await runner(queued, RecordingSteps(first.records), _asked) == "cancelled"
    assert model.requests == []
    events = trace(tmp_path / "store", "s3")
    stopped = [e["reason"] for e in events if e["kind"] == "interruption"]
    assert (stopped, [e["kind"] for e in events if e["kind"] == "error"]) == (["cancelled"], [])
    assert [e["status"] for e in events if e["kind"] == "run_end"] == ["cancelled"]
