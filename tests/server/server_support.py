"""Helpers for the server tests: an app over a temporary store and workspace, a scripted
model behind the ChatModel port, SSE parsing, and a real uvicorn socket on loopback."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import io
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
import httpx

from rho_adapters.fakes import FunctionModel, ScriptedModel, Turn
from rho_domain.call_digest import call_digest
from rho_domain.config import AgentConfig
from rho_domain.model import ModelRequest
from rho_entry.server import ServerSettings, create_app
from rho_entry.server.startup_checks import listen

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))  # program_zygote
from program_zygote import command, popen, run

BASE = AgentConfig(model="scripted")


@attrs.frozen
class Place:
    """Where one test's server keeps things."""

    home: Path
    work: Path

    @property
    def sessions(self) -> Path:
        return self.home / "sessions"


def shown_in(work: Path, tool: str, arguments: str) -> str:
    """The digest a server shows for ``tool`` with ``arguments`` run in ``work``
    (``rho_domain.call_digest``: where the call runs is part of it)."""
    return call_digest(tool, arguments, place=os.path.realpath(work))


def place(tmp_path: Path) -> Place:
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir(parents=True)
    work.mkdir(parents=True)
    (work / "README.md").write_text("# sample\n")
    return Place(home=home, work=work)


def settings(where: Place, **changes: Any) -> ServerSettings:
    values: dict[str, Any] = {
        "sessions_root": where.sessions,
        "roots": (where.work.resolve(),),
        "profiles": ("readonly", "developer"),
        "keepalive_seconds": 5.0,
        "poll_seconds": 0.02,
    }
    values.update(changes)
    return ServerSettings(**values)


def app_for(
    where: Place,
    model: Any,
    *,
    ports: Mapping[str, Any] | None = None,
    store: Any = None,
    **changes: Any,
) -> Any:
    """The server's app over ``where`` with ``model`` (and ``ports``), its settings changed
    by ``changes``; ``store``: a ``choose_store`` choice (a PostgreSQL one), else the files."""
    environ = {"RHO_AGENT_HOME": str(where.home), "HOME": str(where.home)}
    return create_app(
        settings(where, **changes),
        base_config=BASE,
        environ=environ,
        session_ports={"model": model, **(ports or {})},
        store=store,
    )


@contextlib.contextmanager
def opened_meanwhile(sessions: Any, other: Any) -> Iterator[None]:
    """Within: the server's ``sessions`` read a recording only after ``other`` (another
    process's or host's store) opened the session, as if it claimed it between an answer's
    checks and its reopening; ``other`` keeps it open (release it)."""
    recording = sessions.recording

    async def opened(session_id: str) -> object:
        await other.open(session_id)
        return await recording(session_id)

    sessions.recording = opened
    try:
        yield
    finally:
        sessions.recording = recording


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@contextlib.asynccontextmanager
async def client_for(
    app: Any, token: str | None = None, *, anonymous: bool = False
) -> AsyncIterator[httpx.AsyncClient]:
    """An in-process client sending the app's token (or ``token``; none when ``anonymous``)
    as a browser on loopback would address the server (``Host: localhost``)."""
    headers = {} if anonymous else bearer(token or app.state.token)
    transport = httpx.ASGITransport(app=app)
    try:
        async with httpx.AsyncClient(
            transport=transport, base_url="http://localhost", headers=headers
        ) as client:
            yield client
    finally:
        await app.state.host.aclose()  # what the server's shutdown does (no lifespan here)


def parse_sse(text: str) -> list[dict[str, Any]]:
    """Events of an SSE body: ``{"id", "event", "data"}`` (comments as ``{"comment"}``)."""
    events: list[dict[str, Any]] = []
    for block in text.split("\n\n"):
        if not block.strip():
            continue
        event: dict[str, Any] = {}
        for line in block.split("\n"):
            name, _, value = line.partition(": ")
            if line.startswith(":"):
                event["comment"] = line[1:].strip()
            else:
                event[name] = value
        events.append(event)
    return events


async def sse_blocks(response: httpx.Response) -> AsyncIterator[dict[str, str]]:
    """SSE events of a streamed response as dicts, as they arrive (comments and ``retry``
    skipped)."""
    fields: dict[str, str] = {}
    async for line in response.aiter_lines():
        if not line:
            if fields:
                yield fields
            fields = {}
        elif not line.startswith(":"):
            name, _, value = line.partition(": ")
            if name != "retry":
                fields[name] = value


async def wait_idle(client: httpx.AsyncClient, session_id: str) -> dict[str, Any]:
    """Follow the stream until the session is idle; return the session's detail."""
    response = await client.get(f"/api/sessions/{session_id}/stream", params={"until": "idle"})
    assert response.status_code == 200, response.text
    detail = (await client.get(f"/api/sessions/{session_id}")).json()
    assert isinstance(detail, dict)
    return detail


async def finished_sessions(client: httpx.AsyncClient, count: int) -> list[str]:
    """The ids of ``count`` sessions started with the prompt "hi", each run to idle."""
    ids = []
    for _ in range(count):
        sid = (await client.post("/api/sessions", json={"prompt": "hi"})).json()["id"]
        await wait_idle(client, sid)
        ids.append(sid)
    return ids


class UvicornThread:
    """The app served by a real uvicorn on 127.0.0.1 (a free port), in a thread, on the
    listening socket ``rho-agent serve`` makes (``startup_checks.listen``).

    That socket's protocol is TCP's number, as ``getaddrinfo`` gives it, and asyncio turns
    Nagle's algorithm off only on sockets that say so: a ``socket.socket()`` (protocol 0)
    kept it on, and each response's body, written after its headers, waited for the
    client's delayed ACK, 40 ms per request on a kept-alive connection."""

    def __init__(self, app: Any, **limits: Any) -> None:
        import uvicorn

        self.sock = listen("127.0.0.1", 0)
        self.port = self.sock.getsockname()[1]
        config = uvicorn.Config(app, log_level="warning", lifespan="on", **limits)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.token: str = app.state.token
        self.auth = bearer(self.token)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _run(self) -> None:
        asyncio.run(self.server.serve(sockets=[self.sock]))

    def __enter__(self) -> UvicornThread:
        self.thread.start()
        for _ in range(500):
            if self.server.started:
                return self
            threading.Event().wait(0.01)
        raise RuntimeError("uvicorn did not start")

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(20)
        self.sock.close()


def scripted(turns: Sequence[Any]) -> ScriptedModel:
    return ScriptedModel(turns)


class ByPrompt(FunctionModel):
    """Answers the last user message with ``answers[it]``; any other message hangs (a model
    that never finishes, for cancellation and busy sessions). ``hanging`` is set once a call
    hangs: the run is then certainly in progress."""

    def __init__(self, answers: Mapping[str, str]) -> None:
        self.hanging = asyncio.Event()

        def answer(request: ModelRequest) -> Turn:
            last = request.messages[-1]
            reply = answers.get(getattr(last, "content", ""))
            if reply is not None:
                return Turn(text=reply)
            self.hanging.set()
            return Turn(hang=True)

        super().__init__(answer)


def by_prompt(answers: Mapping[str, str]) -> ByPrompt:
    return ByPrompt(answers)


def serve_env(home: Path, base_url: str, **extra: str) -> dict[str, str]:
    # PYTHONPATH passes on: the subprocess runs the sources under test, not an installed copy
    inherited = {k: os.environ[k] for k in ("PYTHONPATH",) if k in os.environ}
    return {
        **inherited,
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "RHO_AGENT_HOME": str(home),
        "OPENAI_BASE_URL": base_url,
        "OPENAI_API_KEY": "sk-test",
        "RHO_AGENT_MODEL": "test-model",
        "LANG": "C.UTF-8",
        **extra,
    }


def serve_refused(
    cwd: Path, env: Mapping[str, str], *args: str
) -> subprocess.CompletedProcess[str]:
    """``rho-agent serve ARGS`` for a configuration it refuses before serving, by
    ``rho_entry.server.serve.main`` in this process: ``env`` as the whole environment, ``cwd``
    as the directory, what it printed captured (all put back after). One it does not refuse
    fails here instead of serving (uvicorn's ``Server.run`` raises). A process costs ~0.6 s
    of CPU; the refusals found once serving starts (a token directory that is a link, a
    durable queue that cannot be opened) exit 1 from processes of their own in
    test_server_token_file.py and test_server_durable.py."""
    from unittest import mock

    import uvicorn

    from rho_entry.server.serve import main

    def served(*_: Any, **__: Any) -> None:
        raise AssertionError(f"rho-agent serve {' '.join(args)} started serving")

    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    saved_streams = sys.stdout, sys.stderr
    out, err = io.StringIO(), io.StringIO()
    os.environ.clear()
    os.environ.update(env)
    try:
        os.chdir(cwd)
        sys.stdout, sys.stderr = out, err
        with mock.patch.object(uvicorn.Server, "run", served):
            code = main(list(args))
    finally:
        sys.stdout, sys.stderr = saved_streams
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
    return subprocess.CompletedProcess(
        ["rho-agent", "serve", *args], code, out.getvalue(), err.getvalue()
    )


def forked_command(kind: str, argv: Sequence[str]) -> list[str]:
    """``program_zygote.command``: the argv that runs ``argv`` forked from the ``kind``
    zygote (an MCP server's ``command``)."""
    return command(kind, argv)


def rho_popen(*args: str, **options: Any) -> subprocess.Popen[Any]:
    """``subprocess.Popen([python, -m, rho_entry, *args], **options)``, the process forked
    from the zygote as ``Serve``."""
    return popen("rho", [sys.executable, "-m", "rho_entry", *args], **options)


def rho_cli(
    *args: str, env: Mapping[str, str], cwd: Path | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """``rho-agent ARGS`` (a client of a server, ``kill``, ``--resume``) in a process of its
    own, forked from the zygote as ``Serve``, no terminal on stdin; what it printed, as text."""
    return run(
        "rho",
        [sys.executable, "-m", "rho_entry", *args],
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        text=True,
        timeout=timeout,
    )


def serve_process(
    cwd: Path, env: Mapping[str, str], *args: str
) -> subprocess.CompletedProcess[str]:
    """``rho-agent serve --port 0 ARGS`` in a process of its own (forked from the zygote, as
    ``Serve``), to its end: for refusals found once serving starts. What it printed, as text."""
    return run(
        "rho",
        [sys.executable, "-m", "rho_entry", "serve", "--port", "0", *args],
        cwd=cwd,
        env=dict(env),
        text=True,
        timeout=60,
    )


class Serve:
    """``rho-agent serve --port 0`` in a subprocess; ``url`` once it says where it listens,
    ``token`` as its dashboard URL carries it (None when the environment gave it). The
    process is forked from the test process's zygote that has imported the CLI, the server
    and DBOS (``program_zygote``: 0.5-1.3 s of CPU a start saved); ``stop`` still sends
    SIGTERM (or the signal it is given) to the server itself and returns its exit status."""

    def __init__(self, cwd: Path, env: dict[str, str], *args: str) -> None:
        self.process = popen(
            "rho",
            [sys.executable, "-m", "rho_entry", "serve", "--port", "0", *args],
            cwd=cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.process.stderr is not None
        line = self.process.stderr.readline()
        found = re.search(r"listening on (http://127\.0\.0\.1:\d+)", line)
        assert found, line + self.process.stderr.read()
        self.url = found.group(1)
        self.listening = line
        self.dashboard = self.process.stderr.readline()
        assert f"dashboard {self.url}/dashboard" in self.dashboard, self.dashboard
        token = re.search(r"#token=([A-Za-z0-9_-]+)$", self.dashboard.strip())
        self.token = token.group(1) if token else None
        self.auth = bearer(token.group(1)) if token else {}

    def stop(self, signum: int = signal.SIGTERM) -> int:
        """Send ``signum`` (SIGTERM) to the server; its exit status."""
        self.process.send_signal(signum)
        return self.process.wait(30)


@functools.cache
def http() -> httpx.Client:
    """The process's one HTTP client for loopback servers (thread-safe; keeps connections).

    ``httpx.get`` builds a client per call, and a client loads the CA bundle into a new TLS
    context: about 35 ms of CPU for a plain-HTTP request on loopback. A poll every 50 ms
    paid that on each probe, and 50 dashboard sessions paid it 100 times."""
    return httpx.Client(timeout=30)


def wait_for(probe: Any, what: str, timeout: float = 30.0) -> Any:
    """``probe()``'s first truthy answer, asked every 50 ms; fails naming ``what`` after
    ``timeout`` seconds (for servers in other processes, where there is no event to await)."""
    deadline = time.monotonic() + timeout
    while not (found := probe()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)
    return found


def listed(server: Serve, sid: str) -> dict[str, Any] | None:
    """Session ``sid``'s row in ``server``'s listing, or None."""
    rows = http().get(f"{server.url}/api/sessions", headers=server.auth, timeout=10).json()
    return next((r for r in rows["sessions"] if r["id"] == sid), None)
