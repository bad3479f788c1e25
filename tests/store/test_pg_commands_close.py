"""``fork``, ``worker``, ``eval bird`` and ``monitor connect``'s instruction split give back
the PostgreSQL store they open, on success, on an error and on Ctrl+C.

Run in this process (as a library caller or the CLI tests run ``main``), on the real server of
``pg_rig``; the server's ``pg_stat_activity`` counts this process's connections by an
``application_name`` of the test's own. A store share a command keeps shows in two ways: the
connections it used stay open in the process's pool for the URL, or (a command that never used
its store: a worker that did not start) a store used after it cannot close the pool either.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import signal
import sqlite3
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from pg_rig import connections, named, pg_server_url, schema_url

from rho_adapters.pgstore import PgSessions, postgres_store
from rho_domain.config import AgentConfig
from rho_domain.ports.store import SessionRecord
from rho_entry.cli import exit_codes
from rho_entry.cli import fork as fork_cli
from rho_entry.cli.connect import split_instruction

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))
from cli_support import rho as rho_here

__all__ = ["pg_server_url"]


def _named(server_url: str) -> tuple[str, str]:
    """A store URL on a schema of its own, and the application name its connections carry."""
    name = f"rho-close-{uuid.uuid4().hex[:8]}"
    return named(schema_url(server_url), name), name


def _gone(server_url: str, name: str, within: float = 5.0) -> bool:
    """True once the server has no connection of ``name`` (it drops a closed one shortly)."""
    deadline = time.monotonic() + within
    while connections(server_url, name) and time.monotonic() < deadline:
        time.sleep(0.05)
    return connections(server_url, name) == 0


def _nobody_holds(url: str, server_url: str, name: str) -> bool:
    """True when no store share of ``url`` is left open in this process: a store object used
    and closed now closes the pool's connections (a leftover share would keep them open)."""
    other = postgres_store(url, origin="the test")

    async def use_and_close() -> None:
        try:
            await other.sessions.sessions()  # connects
        finally:
            await other.aclose()

    asyncio.run(use_and_close())
    return _gone(server_url, name)


def _stored(url: str, *ids: str) -> None:
    made = postgres_store(url, origin="the test")

    async def store() -> None:
        try:
            for session_id in ids:
                record = SessionRecord(
                    id=session_id, created_at=1000.0, config=AgentConfig(model="m1")
                )
                await made.store.create(record)
                await made.store.release(session_id)
        finally:
            await made.aclose()

    asyncio.run(store())


def test_fork_gives_back_its_store_after_a_listing_a_fork_a_task_and_an_error(
    pg_server_url: str, tmp_path: Path
) -> None:
    url, name = _named(pg_server_url)
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()

    def rho(*words: str, code: int = 0) -> str:
        result = rho_here("fork", *words, "--store", url, home=home, cwd=work)
        assert result.returncode == code, (words, result.stderr)
        assert _gone(pg_server_url, name), words
        return result.stdout + result.stderr

    made = rho_here("-m", "demo", "--json", "hello there", "--store", url, home=home, cwd=work)
    assert made.returncode == 0, made.stderr
    original = json.loads(made.stdout.splitlines()[-1])["session_id"]
    assert _gone(pg_server_url, name)

    assert "user: hello there" in rho(original)
    forked = rho(original, "--at", "1").split()[1]
    rho(forked, "-m", "demo", "and what next?")  # the task runs in a store of its own
    assert rho("nosuchsession", code=1).startswith("rho-agent fork: ")  # an error's path


def test_fork_interrupted_by_ctrl_c_gives_back_its_store(
    pg_server_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    url, name = _named(pg_server_url)
    _stored(url, "interrupted1")
    recording = PgSessions.recording

    async def then_ctrl_c(self: PgSessions, session_id: str) -> Any:
        found = await recording(self, session_id)  # the pool has connected
        assert connections(pg_server_url, name) >= 1
        os.kill(os.getpid(), signal.SIGINT)  # asyncio.run's handler cancels the fork's task
        await asyncio.sleep(30)
        return found

    monkeypatch.setattr(PgSessions, "recording", then_ctrl_c)
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        fork_cli.main(["interrupted1", "--at", "1", "--store", url])
    assert time.monotonic() - started < 20  # cancelled, not slept out
    assert _gone(pg_server_url, name)


def test_split_instruction_closes_the_store_its_url_names(pg_server_url: str) -> None:
    url, name = _named(pg_server_url)
    _stored(url, "splitsource1", "splitsource2")
    both = ["splitsource1", "splitsource2"]
    assert split_instruction(url, both) == (both, "")  # the last word names a session
    assert _gone(pg_server_url, name)
    assert split_instruction(url, [*both, "why?"]) == (both, "why?")  # it names none
    assert _gone(pg_server_url, name)


_DBOS = importlib.util.find_spec("dbos") is not None  # found, not imported
needs_dbos = pytest.mark.skipif(not _DBOS, reason="the durable extra (dbos) is not installed")


@needs_dbos
def test_a_worker_whose_start_fails_gives_back_its_store(
    pg_server_url: str, tmp_path: Path
) -> None:
    from rho_entry.cli import worker

    url, name = _named(pg_server_url)
    taken = tmp_path / "taken.db"
    with sqlite3.connect(taken) as db:  # a table of DBOS's name that is not DBOS's
        db.execute("CREATE TABLE dbos_migrations (owner TEXT)")
    code = worker.main(["--durable-db", str(taken), "--store", url, "-m", "demo"])
    assert code == exit_codes.USAGE
    assert _nobody_holds(url, pg_server_url, name)


class _Banner:
    """sys.stderr that notes when the worker says it is consuming."""

    def __init__(self) -> None:
        self.seen = threading.Event()
        self.text = ""

    def write(self, text: str) -> int:
        self.text += text
        if "consuming" in text:
            self.seen.set()
        return len(text)

    def flush(self) -> None:
        pass


@needs_dbos
def test_a_worker_stopped_by_ctrl_c_gives_back_its_store(
    pg_server_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rho_entry.cli import worker

    url, name = _named(pg_server_url)
    banner = _Banner()
    monkeypatch.setattr(sys, "stderr", banner)

    def ctrl_c_once_it_listens() -> None:
        if not banner.seen.wait(60):
            return
        deadline = time.monotonic() + 10  # the loop's own handler, not asyncio.run's
        while time.monotonic() < deadline:
            handler = signal.getsignal(signal.SIGINT)
            if getattr(handler, "__name__", "") == "_sighandler_noop":
                os.kill(os.getpid(), signal.SIGINT)
                return
            time.sleep(0.02)

    presser = threading.Thread(target=ctrl_c_once_it_listens)
    presser.start()
    try:
        argv = ["--durable-db", str(tmp_path / "runs.db"), "--store", url, "-m", "demo"]
        argv += ["--poll", "0.1", "--heartbeat", "0.1"]
        code = worker.main(argv)
    finally:
        presser.join(70)
    assert code == exit_codes.OK, banner.text
    assert _nobody_holds(url, pg_server_url, name)


def test_eval_bird_gives_back_the_store_it_ran_the_questions_in(
    pg_server_url: str, tmp_path: Path
) -> None:
    from rho_adapters.fakes.loopback import LoopbackServer
    from rho_adapters.fakes.wire import Exchange, Reply, text_reply
    from rho_entry.evals.sample_data import write_sample

    def answer(exchange: Exchange) -> Reply | None:  # every question answered without SQL
        return text_reply("I cannot tell.") if exchange.is_chat else None

    url, name = _named(pg_server_url)
    write_sample(tmp_path / "bird")
    with LoopbackServer([], rules=[answer]) as server:
        done = rho_here(
            "eval", "bird", "--data", "bird", "--limit", "2", "-m", "m", "--store", url,
            "--out", "r.jsonl", cwd=tmp_path, home=tmp_path / "home",
            OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-test",
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert _gone(pg_server_url, name)
    graded = [json.loads(x) for x in (tmp_path / "r.jsonl").read_text().splitlines()]
    stored = postgres_store(url, origin="the test")  # the questions' sessions are there
    try:
        listed = asyncio.run(stored.sessions.sessions())
    finally:
        asyncio.run(stored.aclose())
    assert sorted(i.id for i in listed) == sorted(x["session_id"] for x in graded)
    assert len(listed) == 2
