"""``rho-agent`` for the docs' bash blocks, forked from a Python that has imported the CLI.

A bash block's ``rho-agent ...`` is the console script the README's activation puts on PATH:
``main()`` of ``rho_entry.cli`` in a new interpreter, about 0.3 s of CPU before it does
anything (the interpreter, the CLI's imports), 42 commands a run. Here the commands still
run in a process of their own with the shell's standard streams, working directory,
environment and arguments, and exit as the console script exits (``sys.exit(main())``, then
the interpreter's end: ``atexit``, flushes, non-daemon threads); what they do not pay is
the start. ``SHELL_FUNCTION`` is how the block's shell reaches it: a function named
``rho-agent`` that first checks the PATH has a ``rho-agent`` (a reader's shell without the
README's activation says ``command not found``, exit 127), then runs ``docs_cli_client.py``,
which hands its streams (``SCM_RIGHTS``), directory, environment and arguments to this
process and exits with the command's status. ``exec rho-agent`` (the servers the runner
starts and signals) and any program that runs ``rho-agent`` by path still run the console
script itself.

Run as a program: ``python docs_cli_zygote.py SOCKET``; it serves until its socket's parent
directory is closed by ``CliZygote.close`` (SIGTERM).
"""

from __future__ import annotations

import array
import atexit
import contextlib
import gc
import json
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CLIENT = HERE / "docs_cli_client.py"

# What the commands import before they do anything (the CLI, a run's path: the facade and
# its wiring, the local executor, the file store, the loop; the listing, monitor, export and
# stats commands), loaded once and shared by every fork. A command imports the rest itself.
PRELOAD = (
    "asyncio",
    "httpx",
    "yaml",
    "rho_entry.cli",
    "rho_entry.cli.main",
    "rho_entry.cli.app",
    "rho_entry.cli.parser",
    "rho_entry.cli.pipes",
    "rho_entry.cli.render",
    "rho_entry.cli.monitor",
    "rho_entry.cli.export",
    "rho_entry.cli.stats",
    "rho_entry.cli.sessions",
    "rho_entry.agent",
    "rho_entry.facade",
    "rho_entry.wiring",
    "rho_entry.otel",
    "rho_entry.seed_api.tools",
    "rho_entry.config.stores",
    "rho_entry.config.config_files",
    "rho_entry.config.prices",
    "rho_entry.config.prompts",
    "rho_adapters.model",
    "rho_adapters.local.executor",
    "rho_adapters.store.files",
    "rho_domain.loop.session",
)

MAX_REQUEST = 1 << 20  # a request is argv, cwd and the environment: far below this

# The function a block's shell gets (BASH_FUNC_rho-agent%% in its environment).
SHELL_FUNCTION = (
    "() { if ! type -P rho-agent >/dev/null; then "
    'echo "bash: rho-agent: command not found" >&2; return 127; fi; '
    '"$RHO_DOCS_PYTHON" -I -S "$RHO_DOCS_CLIENT" "$@"; }'
)


class CliZygote:
    """The forking Python for ``rho-agent`` commands (``close`` stops it)."""

    def __init__(self, run_dir: Path, env: dict[str, str]) -> None:
        self.socket_path = run_dir / "rho-agent.sock"
        with (run_dir / "rho-agent-zygote.log").open("wb") as log:  # not a pipe: forks hold it
            self.process = subprocess.Popen(
                [sys.executable, __file__, str(self.socket_path)],
                cwd=run_dir,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=log,
            )
        deadline = time.monotonic() + 60
        while not self.socket_path.exists():  # it binds once the CLI is imported
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.process.kill()
                self.process.wait()
                said = (self.socket_path.parent / "rho-agent-zygote.log").read_text()
                raise AssertionError(f"the docs CLI zygote did not start: {said}")
            time.sleep(0.02)

    def shell_env(self) -> dict[str, str]:
        """What a block's shell needs in its environment to run ``rho-agent`` through here."""
        return {
            "BASH_FUNC_rho-agent%%": SHELL_FUNCTION,
            "RHO_DOCS_PYTHON": sys.executable,
            "RHO_DOCS_CLIENT": str(CLIENT),
            "RHO_DOCS_CLI_SOCKET": str(self.socket_path),
        }

    def close(self) -> None:
        """Stop the zygote (commands still running end with their shells)."""
        self.process.terminate()
        self.process.wait(10)


# -- the zygote --------------------------------------------------------------------------------


def _serve(path: str) -> tuple[socket.socket, dict[str, object], list[int]] | None:
    """Accept a command per connection and fork a process that sees it through; return the
    connection and request in the process that is to become the command."""
    # each ended keeper is reaped at once (no zombies), by wait: its CPU time and its
    # command's then count in the zygote's children, and so in the test process's
    signal.signal(signal.SIGCHLD, _reap)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path + ".tmp")
    listener.listen(64)
    os.rename(path + ".tmp", path)  # the path appears once it accepts
    while True:
        try:
            conn, _ = listener.accept()
        except InterruptedError:
            continue
        if os.fork() == 0:  # the command's keeper: runs it, reports its status
            listener.close()
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


def _receive(conn: socket.socket) -> tuple[dict[str, object], list[int]]:
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
    request: dict[str, object] = json.loads(data)
    return request, list(fds)


def _keep(conn: socket.socket, pid: int) -> None:
    """Wait for the command; send its exit status as a shell reports it (128 + a signal). A
    client that goes away (its shell killed) takes the command with it."""
    ended = os.pidfd_open(pid)
    while True:
        ready, _, _ = select.select([ended, conn.fileno()], [], [])
        if ended in ready:
            _, status = os.waitpid(pid, 0)
            code = os.waitstatus_to_exitcode(status)
            conn.sendall(f"{code if code >= 0 else 128 - code}\n".encode())
            return
        if not conn.recv(1):
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return


def _become(conn: socket.socket, request: dict[str, object], fds: list[int]) -> None:
    """In the command's process: take the shell's streams, directory, environment, argv."""
    conn.close()
    for signum in (signal.SIGCHLD, signal.SIGTERM):  # the zygote's own handling, undone
        signal.signal(signum, signal.SIG_DFL)
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    cwd, env, argv = request["cwd"], request["env"], request["argv"]
    assert isinstance(cwd, str)
    assert isinstance(env, dict)
    assert isinstance(argv, list)
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    tempfile.tempdir = None  # as a new process, take TMPDIR from the shell's environment
    sys.argv = ["rho-agent", *argv]


def main() -> None:
    import importlib

    sys.path.pop(0)  # this file's directory: the command sees what the console script sees
    for name in PRELOAD:
        importlib.import_module(name)
    gc.freeze()  # the preloaded objects stay out of the forks' collections: no copy-on-write
    path = sys.argv[1]
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    served = _serve(path)
    if served is None:
        return
    _become(*served)
    from rho_entry.cli import main as rho_agent

    try:
        code = rho_agent()  # as the console script: sys.exit(main())
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    # the interpreter's end as a program sees it (non-daemon threads joined, atexit
    # handlers, streams flushed), without tearing down the modules the zygote had imported
    threading._shutdown()  # type: ignore[attr-defined]
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


if __name__ == "__main__":
    main()
