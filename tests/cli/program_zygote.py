"""Python programs a test starts, forked from a Python that has imported what they import.

A test that starts ``python -m rho_entry worker ...``, ``... serve ...`` or the MCP SDK's
reference server pays the interpreter and the imports before the program does anything: about
1.3 s of CPU for a durable worker (``import dbos`` alone 0.7 s), 0.6 s for ``serve``, 0.9 s for
the SDK's server. Where that start is not what the test is about, ``popen`` starts the program
through a zygote instead: one Python per test process and per ``PRELOAD`` set (started on first
use, stopped when the session ends) that has imported those modules and forks a process per
program. The program still has a process of its own, with the standard streams, working
directory, environment and arguments it was given; it runs as ``python -m MODULE`` or
``python SCRIPT`` would (``runpy``, ``__main__``, ``sys.argv``, ``sys.path[0]``) and ends as a
program ends (``SystemExit``'s status, non-daemon threads joined, ``atexit``, flushed
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

import array
import atexit
import contextlib
import gc
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

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
    ),
    # the official MCP SDK's server (tests/mcp_tools/reference_server.py)
    "mcp": ("mcp.server.mcpserver", "pydantic"),
    # nothing: the zygote's own tests (test_program_zygote.py)
    "plain": (),
}

MAX_REQUEST = 1 << 20  # argv, cwd and the environment: far below this


class Zygote:
    """One forking Python for the ``PRELOAD[kind]`` programs (``close`` stops it)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.dir = Path(tempfile.mkdtemp(prefix=f"zygote-{kind}-"))
        self.socket_path = self.dir / "zygote.sock"
        self._count = 0
        self._lock = threading.Lock()
        log_path = self.dir / "zygote.log"
        with log_path.open("wb") as log:  # a file, not a pipe: the forks hold it
            self.process = subprocess.Popen(
                [sys.executable, __file__, str(self.socket_path), *PRELOAD[kind]],
                cwd=self.dir,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=log,
            )
        deadline = time.monotonic() + 120
        while not self.socket_path.exists():  # it binds once its modules are imported
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.close()
                raise AssertionError(f"the {kind} zygote did not start: {log_path.read_text()}")
            time.sleep(0.02)

    def pid_file(self) -> Path:
        """A new path where a client writes its program's pid."""
        with self._lock:
            self._count += 1
            return self.dir / f"program-{self._count}.pid"

    def close(self) -> None:
        """Stop the zygote (running programs end with their clients) and remove its
        directory."""
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(10)
        shutil.rmtree(self.dir, ignore_errors=True)


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
    """This process's zygote for ``kind`` (started on first use)."""
    with _zygotes_lock:
        if kind not in _zygotes or _zygotes[kind].process.poll() is not None:
            _zygotes[kind] = Zygote(kind)
        return _zygotes[kind]


@atexit.register
def close_all() -> None:
    """Stop every zygote of this process (``tests/conftest.py`` at the session's end)."""
    with _zygotes_lock:
        for each in _zygotes.values():
            each.close()
        _zygotes.clear()


def popen(kind: str, argv: Sequence[str], **options: Any) -> subprocess.Popen[Any]:
    """``subprocess.Popen(argv, **options)`` for ``argv`` = ``[python, -m, MODULE, ...]`` or
    ``[python, SCRIPT, ...]``, the program forked from the ``kind`` zygote. Falls back to a
    plain ``Popen`` where a fork would not run what the argv says: another interpreter, an
    option before the module or script, or an ``env`` whose ``PYTHONPATH`` is not this
    process's (the zygote's imports came from this one); and under ``RHO_TEST_NO_ZYGOTE=1``."""
    env: Mapping[str, str] = options.get("env") or os.environ
    plain = (
        os.environ.get("RHO_TEST_NO_ZYGOTE") == "1"
        or len(argv) < 2
        or argv[0] != sys.executable
        or (argv[1].startswith("-") and argv[1] != "-m")
        or env.get("PYTHONPATH") != os.environ.get("PYTHONPATH")
    )
    if plain:
        return subprocess.Popen(argv, **options)
    where = zygote(kind)
    pid_path = where.pid_file()
    client = [sys.executable, "-I", "-S", str(CLIENT), str(where.socket_path), str(pid_path)]
    process = ForkedPopen([*client, *argv[1:]], **options)
    process.pid_path = pid_path
    return process


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


# -- the zygote --------------------------------------------------------------------------------


def _serve(path: str) -> tuple[socket.socket, dict[str, Any], list[int]]:
    """Accept a program per connection and fork a keeper that sees it through; return the
    connection and request in the process that is to become the program."""
    # each ended keeper is reaped at once, by wait: its CPU time and its program's then count
    # in the zygote's children, and so in the test process's when the zygote ends
    signal.signal(signal.SIGCHLD, _reap)
    parent = os.pidfd_open(os.getppid())
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path + ".tmp")
    listener.listen(64)
    os.rename(path + ".tmp", path)  # the path appears once it accepts
    while True:
        try:
            ready, _, _ = select.select([listener.fileno(), parent], [], [])
        except InterruptedError:
            continue
        if parent in ready:  # the test process is gone: nobody will ask again
            os._exit(0)
        try:
            conn, _ = listener.accept()
        except (InterruptedError, BlockingIOError):
            continue
        if os.fork() == 0:  # the program's keeper: starts it, forwards signals, reports
            listener.close()
            os.close(parent)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            request, fds = _receive(conn)
            pid = os.fork()
            if pid == 0:
                return conn, request, fds
            for fd in fds:
                os.close(fd)
            _keep(conn, pid)
            os._exit(0)
        conn.close()


def _reap(signum: int, frame: object) -> None:
    del signum, frame
    try:
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass
    except ChildProcessError:  # none left
        pass


def _receive(conn: socket.socket) -> tuple[dict[str, Any], list[int]]:
    fds = array.array("i")
    data = b""
    while not data.endswith(b"\n"):
        chunk, ancillary, _, _ = conn.recvmsg(MAX_REQUEST, socket.CMSG_LEN(3 * fds.itemsize))
        if not chunk:
            os._exit(1)  # the client went away before asking anything
        data += chunk
        for level, kind, payload in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds.frombytes(payload[: len(payload) - len(payload) % fds.itemsize])
    request: dict[str, Any] = json.loads(data)
    return request, list(fds)


def _keep(conn: socket.socket, pid: int) -> None:
    """Tell the client the program's pid, pass on the signals it forwards, and send the
    program's status (``waitstatus_to_exitcode``: minus the signal that ended it). A client
    that goes away (killed) takes the program with it."""
    try:
        conn.sendall(f"pid {pid}\n".encode())
    except OSError:  # the client is gone already: so goes its program
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        return
    ended = os.pidfd_open(pid)
    pending = b""
    while True:
        ready, _, _ = select.select([ended, conn.fileno()], [], [])
        if ended in ready:
            _, status = os.waitpid(pid, 0)
            with contextlib.suppress(OSError):
                conn.sendall(f"exit {os.waitstatus_to_exitcode(status)}\n".encode())
            return
        chunk = conn.recv(256)
        if not chunk:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return
        pending += chunk
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            with contextlib.suppress(ProcessLookupError, ValueError):
                os.kill(pid, int(line.split()[1]))


def _become(conn: socket.socket, request: dict[str, Any], fds: list[int]) -> None:
    """In the program's process: take the client's streams, directory, environment, argv."""
    conn.close()
    for signum in (signal.SIGCHLD, signal.SIGTERM):  # the zygote's own handling, undone
        signal.signal(signum, signal.SIG_DFL)
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])


def _run(argv: list[str]) -> int:
    """Run ``argv`` (``-m MODULE ARGS`` or ``SCRIPT ARGS``) as ``python`` would; its status."""
    import runpy

    try:
        if argv[0] == "-m":
            sys.argv = ["-m", *argv[2:]]
            sys.path.insert(0, os.getcwd())
            runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        else:
            sys.argv = list(argv)
            sys.path.insert(0, str(Path(argv[0]).resolve().parent))
            runpy.run_path(argv[0], run_name="__main__")
        return 0
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            return exc.code or 0
        print(exc.code, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        traceback.print_exc()
        return -signal.SIGINT
    except BaseException:  # noqa: BLE001 - as the interpreter does: the traceback, status 1
        traceback.print_exc()
        return 1


def main() -> None:
    import importlib

    sys.path.pop(0)  # this file's directory: the program sees what `python` would show it
    for name in sys.argv[2:]:
        # a module renamed or moved since PRELOAD was written is the program's to import
        # (or to fail on, as it would cold); the zygote only does not share it
        with contextlib.suppress(ModuleNotFoundError):
            importlib.import_module(name)
    if threading.active_count() != 1:  # a fork would copy a thread's locks, not the thread
        raise SystemExit(f"a preloaded module started a thread: {threading.enumerate()}")
    gc.freeze()  # the preloaded objects stay out of the forks' collections: no copy-on-write
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    conn, request, fds = _serve(sys.argv[1])
    _become(conn, request, fds)
    code = _run(request["argv"])
    # the interpreter's end as a program sees it (non-daemon threads joined, atexit
    # handlers, streams flushed), without tearing down the modules the zygote had imported
    threading._shutdown()  # type: ignore[attr-defined]
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception as exc:  # noqa: BLE001 - as the interpreter: said, and status 120
            with contextlib.suppress(Exception):
                os.write(2, f"Exception ignored in: {stream!r}\n{exc!r}\n".encode())
            code = code if code else 120
    if code < 0:  # as an uncaught KeyboardInterrupt ends Python: by the signal itself
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    os._exit(code & 0xFF)


if __name__ == "__main__":
    main()
