"""A Python that has imported the library once and forks a child per docs block.

A Python block runs as ``python block.py`` (or ``python -m pytest test_block.py``) would: in
a process of its own, with the block's working directory, environment, argv and files as
stdin, stdout and stderr; it ends the way an interpreter ends (``atexit`` handlers, a flush of
stdout, non-daemon threads joined) and its exit status is the block's. What it does not pay is
the interpreter's start and the imports of ``rho_entry``, the fakes, httpx and pytest: about
0.35 s of CPU in a 0.7 s block, 21 blocks a run. The zygote starts no thread and opens no
event loop before it forks, so each child starts from a plain, quiet process.

The zygote reads one request (JSON) per line on its control pipe and answers the child's pid,
then its exit status. Run as a program: ``python docs_zygote.py READ_FD WRITE_FD``.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

PRELOAD = (
    "asyncio",
    "httpx",
    "pytest",
    "rho_agent",
    "rho_entry",
    "rho_adapters.fakes",
    "rho_adapters.model",
    "rho_adapters.store",
)


class Zygote:
    """The forking Python (``close`` stops it). One request at a time."""

    def __init__(self, cwd: Path, env: Mapping[str, str]) -> None:
        to_zygote_r, self._to_zygote = os.pipe()
        self._from_zygote, from_zygote_w = os.pipe()
        self.process = subprocess.Popen(
            [sys.executable, __file__, str(to_zygote_r), str(from_zygote_w)],
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            pass_fds=(to_zygote_r, from_zygote_w),
        )
        os.close(to_zygote_r)
        os.close(from_zygote_w)
        self._answers = b""

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
        request = {
            "argv": list(argv[1:]),
            "cwd": str(cwd),
            "env": dict(env),
            **{name: str(path) for name, path in files.items()},
        }
        os.write(self._to_zygote, json.dumps(request).encode() + b"\n")
        deadline = time.monotonic() + timeout
        pid = int(self._answer(deadline, None))
        try:
            code = int(self._answer(deadline, pid))
        except subprocess.TimeoutExpired:
            os.kill(pid, signal.SIGKILL)
            self._answer(time.monotonic() + 10, None)  # the zygote reaps it
            raise subprocess.TimeoutExpired(list(argv), timeout) from None
        out, err = (
            files[name].read_text(encoding="utf-8", errors="replace")
            for name in ("stdout", "stderr")
        )
        return subprocess.CompletedProcess(list(argv), code, out, err)

    def _answer(self, deadline: float, pid: int | None) -> str:
        while b"\n" not in self._answers:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._from_zygote], [], [], left)[0]:
                if pid is None:
                    raise AssertionError("the docs zygote does not answer")
                raise subprocess.TimeoutExpired([str(pid)], 0)
            chunk = os.read(self._from_zygote, 4096)
            if not chunk:
                raise AssertionError(f"the docs zygote exited ({self.process.wait()})")
            self._answers += chunk
        line, _, self._answers = self._answers.partition(b"\n")
        return line.decode()

    def close(self) -> None:
        """Stop the zygote (it exits when its control pipe closes)."""
        os.close(self._to_zygote)
        self.process.wait(10)
        os.close(self._from_zygote)


# -- the zygote --------------------------------------------------------------------------------


def _serve(requests_fd: int, answers_fd: int) -> dict[str, str] | None:
    """Fork a child per request; return the request in the child, None at the end."""
    with os.fdopen(requests_fd, "rb") as requests:
        for line in requests:
            request: dict[str, str] = json.loads(line)
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                os.close(answers_fd)
                return request
            os.write(answers_fd, f"{pid}\n".encode())
            _, status = os.waitpid(pid, 0)
            os.write(answers_fd, f"{os.waitstatus_to_exitcode(status)}\n".encode())
    return None


def _become(request: Mapping[str, object]) -> None:
    """In the child: take the block's files, directory, environment and argv, and run it."""
    import runpy
    import tempfile

    for fd, name, flags in (
        (0, "stdin", os.O_RDONLY),
        (1, "stdout", os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
        (2, "stderr", os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
    ):
        opened = os.open(str(request[name]), flags, 0o600)
        os.dup2(opened, fd)
        os.close(opened)
    os.chdir(str(request["cwd"]))
    env = request["env"]
    assert isinstance(env, dict)
    os.environ.clear()
    os.environ.update(env)
    tempfile.tempdir = None  # as a new process, take TMPDIR from the block's environment
    argv = request["argv"]
    assert isinstance(argv, list)
    if argv[0] == "-m":
        sys.argv = [argv[1], *argv[2:]]
        sys.path[0] = os.getcwd()  # as `python -m` puts the working directory first
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = list(argv)
        sys.path[0] = str(Path(argv[0]).resolve().parent)  # as `python script.py` does
        runpy.run_path(argv[0], run_name="__main__")


def main() -> None:
    import importlib

    sys.path.pop(0)  # this file's directory: a block sees only its own
    for name in PRELOAD:
        importlib.import_module(name)
    request = _serve(int(sys.argv[1]), int(sys.argv[2]))
    if request is not None:
        sys.path.insert(0, "")
        _become(request)  # the child ends here as an interpreter ends: atexit, flush, threads


if __name__ == "__main__":
    main()
