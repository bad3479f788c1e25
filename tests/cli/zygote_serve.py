"""The zygote's half of the tests' fork servers: ``program_zygote`` (the programs a test
starts), ``tests/docs/docs_cli_zygote`` (the docs' ``rho-agent`` commands) and
``tests/docs/docs_zygote`` (the docs' Python blocks) serve through here, each with its own
preload list and client.

A zygote imports what its programs import (``preload``), then ``serve``s on a Unix socket:
per connection it forks a keeper, which reads the client's request (one JSON line: ``argv``,
``cwd``, ``env``; the client's standard streams with it, ``SCM_RIGHTS``), forks the program
and sees it through. The program's process returns from ``serve`` with the request, takes
the client's streams, directory and environment (``become``), runs, and ends as an
interpreter ends (``end``). The zygote ends at SIGTERM or when the process that started it
ends.

The keeper's protocol, in lines: to the client ``pid N`` once the program is forked, then
``exit CODE`` (``os.waitstatus_to_exitcode``: minus the signal that ended the program); from
the client ``signal N``, passed on to the program. A client that goes away (killed) takes its
program with it.

A zygote script imports this from tests/cli (its own directory, or put on ``sys.path`` for
the import) and takes that directory off ``sys.path`` before a program runs. A Python
program (``-m MODULE ...`` or ``SCRIPT ...``) then runs as ``python`` would run it
(``run_python``): ``program_zygote``'s programs and the docs' Python blocks
(``tests/docs/docs_zygote``).
"""

from __future__ import annotations

import array
import atexit
import contextlib
import gc
import importlib
import json
import os
import select
import signal
import socket
import sys
import tempfile
import threading
import traceback
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

MAX_REQUEST = 1 << 20  # argv, cwd and the environment: far below this


def preload(names: Iterable[str]) -> None:
    """Import ``names`` once for every fork, and take SIGTERM as the end. A module renamed
    or moved since a preload list was written is the program's to import (or to fail on, as
    it would cold); the zygote only does not share it."""
    for name in names:
        with contextlib.suppress(ModuleNotFoundError):
            importlib.import_module(name)
    if threading.active_count() != 1:  # a fork would copy a thread's locks, not the thread
        raise SystemExit(f"a preloaded module started a thread: {threading.enumerate()}")
    gc.freeze()  # the preloaded objects stay out of the forks' collections: no copy-on-write
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))


def serve(path: str) -> tuple[socket.socket, dict[str, Any], list[int]]:
    """Accept a program per connection on ``path`` and fork a keeper that sees it through;
    return the connection, request and streams in the process that is to become the
    program (the zygote and the keepers never return)."""
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
            sys.stdout.flush()
            sys.stderr.flush()
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
    program's status. A client that goes away (killed) takes the program with it."""
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


def become(conn: socket.socket, request: dict[str, Any], fds: list[int]) -> None:
    """In the program's process: take the client's streams, directory and environment, and
    the terminal on stdin as its controlling one if the request says ``terminal`` (the argv
    is the caller's to set: a script's, a module's, a console script's)."""
    conn.close()
    for signum in (signal.SIGCHLD, signal.SIGTERM):  # the zygote's own handling, undone
        signal.signal(signum, signal.SIG_DFL)
    # SIGHUP and SIGQUIT as a terminal gives them: a test run under nohup (SIGHUP ignored) or
    # started in the background by a shell without job control (SIGQUIT ignored: a CI
    # script's `cmd &`), inherited by the zygote, made every program ignore them, and the
    # tests of what they do waited out their timeouts (rho-agent keeps an inherited SIG_IGN,
    # as it should).
    for signum in (signal.SIGHUP, signal.SIGQUIT):
        signal.signal(signum, signal.SIG_DFL)
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    if request.get("terminal"):
        take_terminal()
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    tempfile.tempdir = None  # as a new process, take TMPDIR from the client's environment


def take_terminal() -> None:
    """Make the terminal on stdin this process's controlling terminal, in a session of its
    own (as a terminal's shell starts a program: ^C on it is the program's SIGINT)."""
    import fcntl
    import termios

    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


def run_python(argv: Sequence[str]) -> int:
    """Run ``argv`` (``-m MODULE ARGS`` or ``SCRIPT ARGS``) as ``python`` would, with the
    module's or the script's directory first on ``sys.path``; its status for ``end`` (minus
    SIGINT for an uncaught ``KeyboardInterrupt``; 1, with the traceback, for any other
    uncaught exception)."""
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


def end(code: int) -> None:
    """End the program with status ``code`` (minus a signal: by that signal) as the
    interpreter's end looks to it (non-daemon threads joined, ``atexit`` handlers, streams
    flushed), without tearing down the modules the zygote had imported."""
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
