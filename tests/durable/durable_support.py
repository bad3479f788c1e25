"""Rigs for the durable-run tests: worker processes, a scripted fake model, traces."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from rho_adapters.fakes.loopback import LoopbackServer
from rho_adapters.fakes.wire import Exchange, Reply, call, text_reply, tool_reply
from rho_domain.call_digest import call_digest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))  # the in-process CLI
from cli_support import rho as rho  # re-exported: a test reads what a failing command said
from program_zygote import popen, run

if TYPE_CHECKING:
    from rho_entry import AgentRuntime

Script = Sequence[Reply]


def clean_env(home: Path, **extra: str) -> dict[str, str]:
    """A minimal environment: no API keys or model settings leak in from the host."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "RHO_AGENT_HOME": str(home / "rho"),
        "NO_COLOR": "1",
        "LANG": "C.UTF-8",
    }
    if os.environ.get("PYTHONPATH"):  # the sources under test (a worktree's src)
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    env.update(extra)
    return env


def scripted(scripts: Mapping[str, Script]) -> Callable[[Exchange], Reply | None]:
    """A loopback rule: the conversation's first user message picks its script, and the
    number of tool results so far picks the reply (so any number of sessions may run)."""

    def rule(exchange: Exchange) -> Reply | None:
        if not exchange.is_chat:
            return None
        messages = list(exchange.body.get("messages") or [])
        prompt = next(str(m.get("content")) for m in messages if m.get("role") == "user")
        done = sum(1 for m in messages if m.get("role") == "tool")
        script = scripts[prompt.split(":", 1)[0]]
        return script[min(done, len(script) - 1)]

    return rule


def requests_by_step(requests: Sequence[Mapping[str, Any]]) -> dict[tuple[str, int], int]:
    """How many chat requests the server got for each (prompt, tool results so far)."""
    seen: dict[tuple[str, int], int] = {}
    for body in requests:
        messages = list(body.get("messages") or [])
        prompt = next(str(m.get("content")) for m in messages if m.get("role") == "user")
        key = (prompt, sum(1 for m in messages if m.get("role") == "tool"))
        seen[key] = seen.get(key, 0) + 1
    return seen


def bash(command: str, call_id: str) -> Reply:
    """A reply calling ``bash`` with ``command``."""
    return tool_reply(call("bash", {"command": command}, call_id))


def answer(text: str) -> Reply:
    """A reply answering ``text`` in 5 deltas."""
    return text_reply(text, deltas=5)


class Worker:
    """``rho-agent worker`` in its own process (stderr in a file, for its banner), forked
    from the test process's zygote that has imported DBOS and the CLI (``program_zygote``:
    about 1.3 s of CPU a start saved; ``kill`` is still a SIGKILL of the worker itself)."""

    def __init__(
        self,
        tmp: Path,
        name: str,
        *,
        db: str,
        base_url: str,
        profile: str = "readonly",
        concurrency: int = 4,
        extra: Sequence[str] = (),
    ) -> None:
        self.log = tmp / f"{name}.log"
        work = tmp / "work"
        work.mkdir(exist_ok=True)
        env = clean_env(
            tmp / "home",
            RHO_AGENT_BASE_URL=base_url,
            RHO_AGENT_MODEL="fake-model",
            OPENAI_API_KEY="sk-test",
        )
        argv = [
            *("--store", str(tmp / "store"), "--durable-db", db),
            *("--executor-id", name, "--profile", profile),
            *("--concurrency", str(concurrency), "--poll", "0.05"),
            *("--heartbeat", "0.5", "--dead-after", "2"),
            *extra,
        ]
        with self.log.open("w") as log:
            self.process = popen(
                "rho",
                [sys.executable, "-m", "rho_entry", "worker", *argv],
                cwd=work,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )

    def wait_ready(self, timeout: float = 60) -> Worker:
        """Wait for the banner; fail with the log when the worker exits first."""
        end = time.monotonic() + timeout
        while "consuming" not in self.log.read_text():
            if self.process.poll() is not None or time.monotonic() > end:
                raise AssertionError(f"the worker did not start:\n{self.log.read_text()}")
            time.sleep(0.05)
        return self

    def kill(self) -> None:
        """SIGKILL, as a crash."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)

    def stop(self) -> None:
        """SIGTERM, then SIGKILL after 10 s."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()


def queue_command(tmp: Path, db: str, *words: str) -> str:
    """``rho-agent queue --durable-db DB ...`` in its own process (a third one, forked from
    the zygote as ``Worker``); its stdout."""
    done = run(
        "rho",
        [sys.executable, "-m", "rho_entry", "queue", "--durable-db", db, *words],
        env=clean_env(tmp / "home"),
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return str(done.stdout).strip()


def rho_here(home: Path, *args: str, cwd: Path | None = None, **env: str) -> str:
    """``rho-agent ARGS`` run by the CLI's ``main`` in this process (tests/cli's
    ``cli_support.rho``: ``clean_env(home, **env)``, ``cwd``, all put back after); its
    stdout. For commands whose process is not the point (a worker is another process all
    the same); a command that fails fails the test with what it said."""
    done = rho(*args, cwd=cwd or Path.cwd(), home=home, **env)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def queue_here(tmp: Path, db: str, *words: str) -> str:
    """``queue_command`` in this process (``rho_here``); ``test_durable_approvals.py`` still
    answers with the command in a process of its own."""
    return rho_here(tmp / "home", "queue", "--durable-db", db, *words)


def trace(store: Path, session_id: str) -> list[dict[str, Any]]:
    """The session's trace, one dict per event (an absent trace is empty)."""
    path = store / session_id / "trace.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def wait_for(
    condition: Callable[[], bool], what: str, timeout: float = 30, every: float = 0.02
) -> None:
    """Poll ``condition`` every ``every`` seconds (20 ms)."""
    end = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > end:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(every)


def started(events: Sequence[Mapping[str, Any]], call_id: str) -> bool:
    """True once the trace holds ``tool_start`` for ``call_id``."""
    return any(e["kind"] == "tool_start" and e["call"]["id"] == call_id for e in events)


def tool_result(events: Sequence[Mapping[str, Any]], call_id: str) -> Mapping[str, Any]:
    """The one ``tool_end`` of ``call_id``."""
    ends = [e for e in events if e["kind"] == "tool_end" and e["call_id"] == call_id]
    assert len(ends) == 1, ends
    return ends[0]


def kinds(events: Sequence[Mapping[str, Any]]) -> Iterator[str]:
    """The events' kinds, in order."""
    return (str(e["kind"]) for e in events)


@attrs.frozen
class Rig:
    """One ``rho-agent worker`` (developer) shared by a module's tests, its queue and its
    store: a worker's start (dbos's import, its queue) was most of each test's CPU time. Each
    test has its own prompt, so its own script, session and files."""

    root: Path
    db: str
    worker: Worker

    @property
    def store(self) -> Path:
        return self.root / "store"

    @property
    def work(self) -> Path:
        return self.root / "work"


@contextlib.contextmanager
def worker_rig(
    root: Path, name: str, scripts: Mapping[str, Script], **options: Any
) -> Iterator[Rig]:
    """A ``Rig`` in ``root``: the scripted loopback model and a developer worker on a SQLite
    queue (``options`` go to ``Worker``), stopped at the end."""
    db = str(root / "runs.sqlite")
    with LoopbackServer([], rules=[scripted(scripts)]) as server:
        worker = Worker(root, name, db=db, base_url=server.base_url, profile="developer", **options)
        try:
            worker.wait_ready()
            yield Rig(root, db, worker)
        finally:
            worker.stop()


@contextlib.asynccontextmanager
async def durable_runtime(rig: Rig) -> AsyncIterator[AgentRuntime]:
    """A started runtime whose durable dispatches queue for ``rig``'s worker, its sessions in
    ``rig``'s store; closed at the end."""
    from rho_adapters.store import FileSessionStore
    from rho_entry import AgentConfig, close_runtime, create_runtime, start_runtime

    runtime = create_runtime(
        AgentConfig(model="fake-model"), store=FileSessionStore(rig.store), durable_db=rig.db
    )
    await start_runtime(runtime)
    try:
        yield runtime
    finally:
        await close_runtime(runtime)


def shown_in(rig: Rig, tool: str, arguments: str) -> str:
    """The digest an approver is shown for ``tool`` with ``arguments`` run in the rig's
    workspace (``rho_domain.call_digest``: where the call runs is part of it)."""
    return call_digest(tool, arguments, place=os.path.realpath(rig.work))
