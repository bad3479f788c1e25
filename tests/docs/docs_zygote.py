"""A Python that has imported the library once and forks a child per docs block.

A Python block runs as ``python block.py`` (or ``python -m pytest test_block.py``) would: in
a process of its own, with the block's working directory, environment, argv and files as
stdin, stdout and stderr; it ends the way an interpreter ends (``atexit`` handlers, a flush of
stdout, non-daemon threads joined) and its exit status is the block's. What it does not pay is
the interpreter's start and the imports of ``rho_entry``, the fakes, httpx and pytest: about
0.35 s of CPU in a 0.7 s block, 21 blocks a run. The zygote starts no thread and opens no
event loop before it forks, so each child starts from a plain, quiet process.

Run as a program: ``python docs_zygote.py SOCKET``; it serves until ``Zygote.close``
(SIGTERM) or until the process that started it ends. Its plumbing (the socket, the keepers,
the fork, a program's start, run and end) is ``program_zygote``'s:
``tests/cli/zygote_serve.py``; what is its own is ``PRELOAD`` and the client, ``Zygote.run``,
which hands a block's files as its standard streams.
"""

from __future__ import annotations

import array
import contextlib
import json
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent

PRELOAD = (
    "asyncio",
    "httpx",
    "pytest",
    "rho_agent",
    "rho_entry",
    # the fakes' package names them lazily: the modules the documents' examples use
    "rho_adapters.fakes.anthropic_messages",
    "rho_adapters.fakes.clock",
    "rho_adapters.fakes.memory_executor",
    "rho_adapters.fakes.memory_store",
    "rho_adapters.fakes.replay_model",
    "rho_adapters.fakes.scripted_model",
    "rho_adapters.fakes.wire_transport",
    "rho_adapters.model",
    "rho_adapters.store",
)


class Zygote:
    """The forking Python (``close`` stops it)."""

    def __init__(self, cwd: Path, env: Mapping[str, str]) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="docs-zygote-"))  # short: a socket's path
        self.socket_path = self.dir / "python.sock"
        log_path = self.dir / "zygote.log"
        with log_path.open("wb") as log:  # a file, not a pipe: the forks hold it
            self.process = subprocess.Popen(
                [sys.executable, __file__, str(self.socket_path)],
                cwd=cwd,
                env=dict(env),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=log,
            )
        deadline = time.monotonic() + 60
        while not self.socket_path.exists():  # it binds once the library is imported
            if self.process.poll() is not None or time.monotonic() > deadline:
                said = log_path.read_text()
                self.close()
                raise AssertionError(f"the docs zygote did not start: {said}")
            time.sleep(0.02)

    def run(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        stdin: str,
        scratch: Path,
        timeout: float,
    ) -> subprocess.CompletedProcess[str]:
        """Run ``argv`` (``[python, script, ...]`` or ``[python, "-m", module, ...]``) in a
        forked child; raise ``subprocess.TimeoutExpired`` (the child killed) past ``timeout``."""
        files = {name: scratch / f".zygote.{name}" for name in ("stdin", "stdout", "stderr")}
        files["stdin"].write_text(stdin, encoding="utf-8")
        request = {"argv": list(argv[1:]), "cwd": str(cwd), "env": dict(env)}
        deadline = time.monotonic() + timeout
        with contextlib.ExitStack() as opened, socket.socket(socket.AF_UNIX) as conn:
            streams = array.array(
                "i",
                [
                    opened.enter_context(files["stdin"].open("rb")).fileno(),
                    opened.enter_context(files["stdout"].open("wb")).fileno(),
                    opened.enter_context(files["stderr"].open("wb")).fileno(),
                ],
            )
            conn.connect(str(self.socket_path))
            data = json.dumps(request).encode() + b"\n"
            conn.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, streams.tobytes())])
            opened.close()  # the child holds its own copies
            answers = _Answers(conn)
            answers.next(deadline, "pid")
            try:
                code = int(answers.next(deadline, "exit"))
            except subprocess.TimeoutExpired:
                conn.sendall(f"signal {signal.SIGKILL}\n".encode())  # the keeper kills it
                answers.next(time.monotonic() + 10, "exit")
                raise subprocess.TimeoutExpired(list(argv), timeout) from None
        out, err = (
            files[name].read_text(encoding="utf-8", errors="replace")
            for name in ("stdout", "stderr")
        )
        return subprocess.CompletedProcess(list(argv), code, out, err)

    def close(self) -> None:
        """Stop the zygote (SIGTERM) and remove its directory."""
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(10)
        shutil.rmtree(self.dir, ignore_errors=True)


class _Answers:
    """The keeper's lines on ``conn``: ``pid N``, then ``exit CODE``."""

    def __init__(self, conn: socket.socket) -> None:
        self._conn = conn
        self._pending = b""

    def next(self, deadline: float, word: str) -> str:
        """The value of the next line, which must start with ``word``; ``TimeoutExpired``
        past ``deadline``."""
        while b"\n" not in self._pending:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._conn], [], [], left)[0]:
                if word == "pid":
                    raise AssertionError("the docs zygote does not answer")
                raise subprocess.TimeoutExpired(["docs block"], 0)
            chunk = self._conn.recv(256)
            if not chunk:
                raise AssertionError("the docs zygote went away")
            self._pending += chunk
        line, _, self._pending = self._pending.partition(b"\n")
        said, _, value = line.decode().partition(" ")
        assert said == word, f"the docs zygote said {line!r}, not {word}"
        return value


# -- the zygote (its plumbing is program_zygote's: tests/cli/zygote_serve.py) ------------------


def main() -> None:
    # this file's directory goes (a block sees only its own), and tests/cli, where the
    # plumbing is, stands there for the import only
    sys.path[0] = str(HERE.parent / "cli")
    import zygote_serve

    sys.path.pop(0)
    zygote_serve.preload(PRELOAD)
    conn, request, fds = zygote_serve.serve(sys.argv[1])
    zygote_serve.become(conn, request, fds)
    zygote_serve.end(zygote_serve.run_python(request["argv"]))


if __name__ == "__main__":
    main()
