"""Python programs a test starts, forked from a Python that has imported what they import.

A test that starts ``python -m rho_entry worker ...``, ``... serve ...`` or the MCP SDK's
reference server pays the interpreter and the imports before the program does anything: about
1.3 s of CPU for a durable worker (``import dbos`` alone 0.7 s), 0.6 s for ``serve``, 0.9 s for
the SDK's server. Where that start is not what the test is about, ``popen`` starts the program
through a zygote instead: one Python per ``PRELOAD`` set (started on first use, stopped when
the session ends) that has imported those modules and forks a process per program. Under
xdist the run's workers share it (``Zygote``): a zygote per worker cost each of four workers
0.7-1.1 s of CPU per kind. The program still has a process of its own, with the standard
streams, working directory, environment and arguments it was given; it runs as ``python -m
MODULE`` or ``python SCRIPT`` would (``runpy``, ``__main__``, ``sys.argv``, ``sys.path[0]``)
and ends as a program ends (``SystemExit``'s status, non-daemon threads joined, ``atexit``, flushed
streams; an uncaught exception's traceback and status 1). What it does not check is that the
program starts in a cold interpreter: tests whose subject is the start (the console script,
import laziness, signals before the imports) keep ``subprocess.Popen``.

The ``Popen`` a test gets is the client (``program_zygote_client.py``, ``python -I -S``: a few
milliseconds): it hands the zygote its streams (``SCM_RIGHTS``), directory, environment and
the program's argv, forwards the signals it is sent (TERM, INT, HUP, QUIT, USR1, USR2), and
exits with the program's status, or dies by the program's signal, so ``returncode`` is the
program's. ``send_signal``, ``terminate`` and ``kill`` signal the program itself (SIGKILL
too: a crash is the program's, at once); a client killed by anyone else takes its program
with it (the zygote's keeper sees the connection close). The program is not in the client's
process group or session: a test that kills a group to reach a program's own children keeps
``subprocess.Popen``.

Run as a program: ``python program_zygote.py SOCKET MODULE...``; it serves until SIGTERM or
until the process that started it ends.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import zygote_serve

HERE = Path(__file__).resolve().parent
CLIENT = HERE / "program_zygote_client.py"

# What each kind of program imports before it does anything, loaded once per zygote and
# shared by every fork; a program imports the rest itself. None of these starts a thread or
# opens a connection at import (the zygote checks: it refuses to fork with a thread running).
PRELOAD: dict[str, tuple[str, ...]] = {
    # rho-agent's CLI, its server and its durable worker (DBOS, SQLAlchemy)
    "rho": (
        "asyncio",
        "httpx",
        "yaml",
        "rho_entry.cli",
        "rho_entry.cli.main",
        "rho_entry.cli.app",
        "rho_entry.cli.parser",
        "rho_entry.cli.render",
        "rho_entry.cli.worker",
        "rho_entry.cli.queue",
        "rho_entry.agent",
        "rho_entry.facade",
        "rho_entry.wiring",
        "rho_entry.runtime",
        "rho_entry.server.serve",
        "rho_entry.server.app",
        "rho_entry.durable",
        "rho_entry.durable.runner",
        "rho_entry.durable.queueing",
        "rho_adapters.durable.worker",
        "rho_adapters.durable.run_queue",
        "rho_adapters.durable.system_db",
        "rho_adapters.model",
        "rho_adapters.local.executor",
        "rho_adapters.store.files",
        "rho_domain.loop.session",
        "dbos",
        "uvicorn",
        # what a run imports once it starts (its tools, system prompt, config files, the
        # store's signals): about 50 ms of a one-shot's CPU when each fork imported it
        "rho_domain.tools.factory",
        "rho_entry.given_ports",
        "rho_entry.seed_api.state",
        "rho_entry.config.system_prompt",
        "rho_entry.config.config_files",
        "rho_entry.config.stores",
        "rho_entry.config.hook_refs",
        "rho_entry.config.mcp_servers",
        "rho_entry.config.prices",
        "rho_entry.config.prompts.facts",
        "rho_entry.cli.pipes",
        "rho_entry.cli.log_lines",
        "rho_adapters.clock",
        "rho_adapters.model.demo",
        "rho_adapters.model.proxies",
        "rho_adapters.local.spreadsheet",
        "rho_adapters.local.line_search",
        "rho_adapters.store.control",
        "rho_adapters.store.listing",
        "encodings.utf_8_sig",
        # what ``serve`` imports once it builds its app and listens (``create_app`` imports
        # Starlette lazily, uvicorn picks its loop and protocols at its start): about 135 ms
        # of each ``serve``'s CPU when each fork imported it
        "rho_entry.server.routes",
        "rho_entry.server.host",
        "rho_entry.server.pages",
        "rho_entry.server.guard",
        "rho_entry.server.token_file",
        "starlette.applications",
        "starlette.middleware.errors",
        "starlette.middleware.exceptions",
        "starlette.formparsers",
        "starlette.websockets",
        "uvicorn.lifespan.on",
        "uvicorn.loops.auto",
        "uvicorn.loops.asyncio",
        "uvicorn.protocols.http.auto",
        "uvicorn.protocols.http.h11_impl",
        "uvicorn.protocols.websockets.auto",
        "anyio.to_thread",
        "encodings.idna",
    ),
    # the official MCP SDK's server (tests/mcp_tools/reference_server.py)
    "mcp": ("mcp.server.mcpserver", "pydantic"),
    # nothing: the zygote's own tests (test_program_zygote.py)
    "plain": (),
}


class Zygote:
    """One forking Python for the ``PRELOAD[kind]`` programs (``close`` stops it, or leaves
    it to the worker that started it).

    Under xdist the run's workers share one per kind (``_run_dir``): the first worker to need
    it starts it as its own child, the others connect to its socket. Each worker holds a
    shared lock on the kind's ``users`` file from its first use to its ``close`` (or its
    death); the starting worker's ``close`` waits for the exclusive lock, i.e. for every other
    worker's session to end, before it stops the zygote, so the zygote and what it forked are
    still its own reaped children (the run's CPU counts them, as before)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._count = 0
        self._lock = threading.Lock()
        self.process: subprocess.Popen[bytes] | None = None  # None: another worker's
        shared = _run_dir()
        if shared is None:
            self.dir = Path(tempfile.mkdtemp(prefix=f"zygote-{kind}-"))
            self._users: int | None = None
            self.process = self._start()
            return
        self.dir = shared / kind
        self.dir.mkdir(exist_ok=True)
        self._users = os.open(self.dir / "users", os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(self._users, fcntl.LOCK_SH)
        starting = os.open(self.dir / "start.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(starting, fcntl.LOCK_EX)  # one worker starts it; the others wait
            if not self._serving():
                self.process = self._start()
                (self.dir / "pid").write_text(str(self.process.pid))
        finally:
            os.close(starting)

    @property
    def socket_path(self) -> Path:
        return self.dir / "zygote.sock"

    def alive(self) -> bool:
        """Whether programs can still be forked here."""
        if self.process is not None:
            return self.process.poll() is None
        return self._serving()

    def _serving(self) -> bool:
        """A zygote of this run answers on the socket (its pid runs this socket's zygote)."""
        try:
            pid = int((self.dir / "pid").read_text())
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except (OSError, ValueError):
            return False
        return str(self.socket_path).encode() in argv and self.socket_path.exists()

    def _start(self) -> subprocess.Popen[bytes]:
        with contextlib.suppress(FileNotFoundError):
            self.socket_path.unlink()  # a zygote of this run that died: its socket is stale
        log_path = self.dir / "zygote.log"
        with log_path.open("wb") as log:  # a file, not a pipe: the forks hold it
            process = subprocess.Popen(
                [sys.executable, __file__, str(self.socket_path), *PRELOAD[self.kind]],
                cwd=self.dir,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=log,
            )
        deadline = time.monotonic() + 120
        while not self.socket_path.exists():  # it binds once its modules are imported
            if process.poll() is not None or time.monotonic() > deadline:
                said = log_path.read_text()
                process.kill()
                process.wait()
                raise AssertionError(f"the {self.kind} zygote did not start: {said}")
            time.sleep(0.02)
        return process

    def pid_file(self) -> Path:
        """A new path where a client writes its program's pid."""
        with self._lock:
            self._count += 1
            return self.dir / f"program-{os.getpid()}-{self._count}.pid"

    def release(self) -> None:
        """This worker will fork no more programs here (its lock given back)."""
        if self._users is not None:
            fcntl.flock(self._users, fcntl.LOCK_UN)

    def close(self, *, wait: bool = True) -> None:
        """Stop the zygote this process started, once no other worker uses it (``wait``;
        running programs end with their clients), and remove its own directory (a shared
        one is the run's basetemp's, which pytest removes). The lock is given back last: a
        worker that asks after it finds no zygote serving and starts one."""
        if self._users is not None and self.process is not None and wait:
            deadline = time.monotonic() + HUNG_USERS
            while True:  # every other worker's session has ended (or the worker died)
                try:
                    fcntl.flock(self._users, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        break
                    time.sleep(0.05)
        if self.process is not None:
            if self.process.poll() is None:
                self.process.terminate()
                self.process.wait(10)
            if self._users is None:
                shutil.rmtree(self.dir, ignore_errors=True)
            else:  # no worker of this run is left to ask
                for name in ("zygote.sock", "pid"):
                    with contextlib.suppress(FileNotFoundError):
                        (self.dir / name).unlink()
        if self._users is not None:
            os.close(self._users)
            self._users = None


# How long the worker that started a shared zygote waits for the others to end before it stops
# it anyway (a worker hung that long has failed the run already: tests/conftest.py's watchdog).
HUNG_USERS = 900.0


def _run_dir() -> Path | None:
    """The directory this xdist run's workers share their zygotes in (``tests/conftest.py``
    names it in ``RHO_TEST_ZYGOTES``: a directory of the run's basetemp); None outside xdist,
    or under ``RHO_TEST_OWN_ZYGOTES=1``: a zygote per test process."""
    run = os.environ.get("RHO_TEST_ZYGOTES")
    if not run or os.environ.get("RHO_TEST_OWN_ZYGOTES") == "1":
        return None
    path = Path(run)
    path.mkdir(exist_ok=True)
    return path


class ForkedPopen(subprocess.Popen[Any]):
    """The client's ``Popen``; ``send_signal`` (``terminate``, ``kill``) reaches the program."""

    pid_path: Path

    def program_pid(self, timeout: float = 60) -> int | None:
        """The program's pid (None once the client has ended: so has the program)."""
        deadline = time.monotonic() + timeout
        while self.poll() is None:
            with contextlib.suppress(FileNotFoundError, ValueError):
                return int(self.pid_path.read_text())
            if time.monotonic() > deadline:
                raise AssertionError(f"no program behind client {self.pid} after {timeout} s")
            time.sleep(0.005)
        return None

    def send_signal(self, sig: int) -> None:
        pid = self.program_pid()
        if pid is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)


_zygotes: dict[str, Zygote] = {}
_zygotes_lock = threading.Lock()


def zygote(kind: str) -> Zygote:
    """This process's zygote for ``kind`` (started or joined on first use)."""
    with _zygotes_lock:
        if kind not in _zygotes or not _zygotes[kind].alive():
            if kind in _zygotes:  # it died: its lock given back, no one waited for
                _zygotes[kind].close(wait=False)
            _zygotes[kind] = Zygote(kind)
        return _zygotes[kind]


@atexit.register
def close_all() -> None:
    """Stop every zygote of this process (``tests/conftest.py`` at the session's end): first
    every lock given back, then each zygote this process started stopped once the other
    workers are done with it (two workers that started one each wait for no one)."""
    with _zygotes_lock:
        for each in _zygotes.values():
            each.release()
        for each in _zygotes.values():
            each.close()
        _zygotes.clear()


def popen(
    kind: str, argv: Sequence[str], *, terminal: bool = False, **options: Any
) -> subprocess.Popen[Any]:
    """``subprocess.Popen(argv, **options)`` for ``argv`` = ``[python, -m, MODULE, ...]`` or
    ``[python, SCRIPT, ...]``, the program forked from the ``kind`` zygote. Falls back to a
    plain ``Popen`` where a fork would not run what the argv says: another interpreter, an
    option before the module or script, an ``env`` without the ``PYTHONPATH`` this process
    has, or one that adds a directory holding a module the zygote imported, or a
    ``sitecustomize`` (``_imports_as_the_zygote``); and under ``RHO_TEST_NO_ZYGOTE=1``.
    ``terminal``: stdin is a terminal the program takes as its controlling terminal, in a
    session of its own (the client stays out of it: ^C on the terminal is the program's)."""
    env: Mapping[str, str] = options.get("env") or os.environ
    plain = (
        os.environ.get("RHO_TEST_NO_ZYGOTE") == "1"
        or len(argv) < 2
        or argv[0] != sys.executable
        or (argv[1].startswith("-") and argv[1] != "-m")
        or not _imports_as_the_zygote(kind, env.get("PYTHONPATH"))
    )
    if plain:
        if terminal:
            options["preexec_fn"] = zygote_serve.take_terminal
        return subprocess.Popen(argv, **options)
    where = zygote(kind)
    pid_path = where.pid_file()
    client = [sys.executable, "-I", "-S", str(CLIENT), *(["--terminal"] if terminal else [])]
    client += [str(where.socket_path), str(pid_path)]
    process = ForkedPopen([*client, *argv[1:]], **options)
    process.pid_path = pid_path
    return process


def _imports_as_the_zygote(kind: str, pythonpath: str | None) -> bool:
    """Whether a Python started with ``pythonpath`` imports what the zygote did. Its
    directories are this process's, the sources this process imported ``rho_entry`` from (a
    test passes them on so that a cold process runs them; in CI the editable install puts
    them on the path instead), or absolute directories that hold no module the zygote has
    imported and no ``sitecustomize``/``usercustomize`` (which a cold Python runs at its
    start): a hooks module's directory. The program puts them first on its ``sys.path``, as
    Python does (``_take_pythonpath``). A hooks directory started three cold CLIs a test
    (about 0.3 s of CPU each) before."""
    if pythonpath == os.environ.get("PYTHONPATH"):
        return True
    if not pythonpath:
        return False
    held = {os.path.realpath(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p}
    spec = importlib.util.find_spec("rho_entry")
    if spec is not None and spec.origin is not None:
        held.add(str(Path(spec.origin).resolve().parents[1]))
    added = [p for p in pythonpath.split(os.pathsep) if os.path.realpath(p) not in held]
    if not all(added):  # an empty entry: the working directory, which the check cannot know
        return False
    return not added or (all(map(os.path.isabs, added)) and not _shadows(kind, added))


def _shadows(kind: str, directories: Sequence[str]) -> bool:
    """Whether a module or package in ``directories`` has the name of one the ``kind``
    zygote imported (which a cold Python would import from there instead) or of a file a
    cold Python's start runs."""
    imported = set((zygote(kind).dir / MODULES).read_text().split())
    imported |= {"sitecustomize", "usercustomize"}
    for directory in directories:
        try:
            names = os.listdir(directory)
        except FileNotFoundError:
            continue  # nothing to import there yet, for a cold Python or a fork
        except OSError:
            return True
        if any(name.split(".")[0] in imported for name in names):
            return True
    return False


def run(
    kind: str, argv: Sequence[str], *, timeout: float, input: str | None = None, **options: Any
) -> subprocess.CompletedProcess[Any]:
    """``subprocess.run(argv, capture_output=True, timeout=..., **options)`` through ``popen``
    (the program killed when the timeout passes, as ``run`` does)."""
    stdin = subprocess.PIPE if input is not None else options.pop("stdin", None)
    with popen(
        kind, argv, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **options
    ) as process:
        try:
            out, err = process.communicate(input, timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            raise
    return subprocess.CompletedProcess(list(argv), process.returncode, out, err)


def command(kind: str, argv: Sequence[str]) -> list[str]:
    """The argv that runs ``argv`` (``[python, SCRIPT, ...]``) forked from the ``kind``
    zygote, for a program another program starts (an MCP server's ``command``); no pid file,
    so only signals sent to the client reach the program."""
    assert argv[0] == sys.executable, argv
    where = zygote(kind)
    return [sys.executable, "-I", "-S", str(CLIENT), str(where.socket_path), "-", *argv[1:]]


# -- the zygote (its plumbing, the docs CLI zygote's too: zygote_serve) -------------------------


# The top-level names of the modules a zygote imported, one a line, beside its socket: a
# directory a program's PYTHONPATH adds is forked only if it holds none of them.
MODULES = "modules"


def _say_modules(socket_path: str) -> None:
    names = sorted({name.split(".")[0] for name in sys.modules})
    path = Path(socket_path).parent / MODULES
    path.with_suffix(".tmp").write_text("\n".join(names) + "\n")
    path.with_suffix(".tmp").replace(path)  # whole before the socket appears


def _take_pythonpath(own: str | None) -> None:
    """The program's ``PYTHONPATH`` on ``sys.path`` where it differs from the zygote's
    (``own``): its directories first, made absolute and without repeats as ``site`` makes
    them, the zygote's own taken off; the rest (the standard library, site-packages) as
    they were."""
    given = os.environ.get("PYTHONPATH")
    if given == own:
        return
    theirs = {os.path.abspath(p) for p in (own or "").split(os.pathsep) if p}
    first = list(dict.fromkeys(os.path.abspath(p) for p in (given or "").split(os.pathsep) if p))
    sys.path[:] = [*first, *(p for p in sys.path if p not in theirs and p not in first)]


def main() -> None:
    sys.path.pop(0)  # this file's directory: the program sees what `python` would show it
    zygote_serve.preload(sys.argv[2:])
    _say_modules(sys.argv[1])
    own = os.environ.get("PYTHONPATH")
    conn, request, fds = zygote_serve.serve(sys.argv[1])
    zygote_serve.become(conn, request, fds)
    _take_pythonpath(own)
    zygote_serve.end(zygote_serve.run_python(request["argv"]))


if __name__ == "__main__":
    main()
