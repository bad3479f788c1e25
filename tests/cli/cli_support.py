"""Helpers to run ``rho-agent``: in this process, in a subprocess, or on a pseudo-terminal."""

from __future__ import annotations

import io
import os
import re
import select
import subprocess
import sys
import time
from pathlib import Path

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\r")


def clean_env(home: Path, **extra: str) -> dict[str, str]:
    """A minimal environment: no API keys or model settings leak in from the host."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "RHO_AGENT_HOME": str(home / "rho"),
        "NO_COLOR": "1",
        "LANG": "C.UTF-8",
        "PYTHONIOENCODING": "utf-8",
    }
    if os.environ.get("PYTHONPATH"):  # the sources under test (a worktree's src)
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    env.update(extra)
    return env


def rho(
    *args: str,
    cwd: Path,
    home: Path,
    stdin: str | None = None,
    **env: str,
) -> subprocess.CompletedProcess[str]:
    """``rho-agent ARGS`` run by ``rho_entry.cli.main`` in this process, as ``rho_process``
    would run it: the same minimal environment, ``cwd`` as the working directory, ``stdin``
    as standard input (not a terminal), and what it printed captured as text. Everything is
    put back afterwards. A process costs ~0.2 s of CPU; most CLI tests test what the command
    does, not the process, and those that do (signals, a terminal, pipes, the entry point)
    use ``rho_process``."""
    from rho_entry.cli import main

    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    saved_streams = sys.stdin, sys.stdout, sys.stderr
    out, err = io.StringIO(), io.StringIO()
    os.environ.clear()
    os.environ.update(clean_env(home, **env))
    try:
        os.chdir(cwd)
        sys.stdin, sys.stdout, sys.stderr = io.StringIO(stdin or ""), out, err
        try:
            code = main(list(args))
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved_streams
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
    return subprocess.CompletedProcess(["rho-agent", *args], code, out.getvalue(), err.getvalue())


def rho_process(
    *args: str,
    cwd: Path,
    home: Path,
    stdin: str | None = None,
    timeout: float = 60,
    **env: str,
) -> subprocess.CompletedProcess[str]:
    """``python -m rho_entry ARGS`` in a process of its own (see ``rho``), forked from the
    CLI's zygote (``program_zygote.run``: the interpreter's start and imports, about 0.25 s
    of CPU a process, are not what its callers test; an ``env`` whose ``PYTHONPATH`` adds a
    directory, such as a hooks module's, still starts cold). Tests whose subject is the
    start, the encoding of the standard streams or the process group keep
    ``subprocess.run``."""
    import program_zygote

    return program_zygote.run(
        "rho",
        [sys.executable, "-m", "rho_entry", *args],
        cwd=cwd,
        env=clean_env(home, **env),
        input=stdin if stdin is not None else "",
        text=True,
        timeout=timeout,
    )


class Terminal:
    """``rho-agent`` on a pseudo-terminal: ``send`` keys, ``expect`` output (ANSI stripped).

    The program is forked from the CLI's zygote (``program_zygote``: its interpreter and
    imports, about 0.2 s of CPU, are not what these tests test), in a session of its own whose
    controlling terminal is the pty, as a terminal's shell starts it: ^C on the pty is its
    SIGINT, and ``proc`` is the client whose status and signals are the program's."""

    def __init__(self, *args: str, cwd: Path, home: Path, **env: str) -> None:
        import pty

        import program_zygote

        self.master, slave = pty.openpty()
        self.proc = program_zygote.popen(
            "rho",
            [sys.executable, "-m", "rho_entry", *args],
            terminal=True,  # so that ^C on the pty is SIGINT
            cwd=cwd,
            env=clean_env(home, TERM="xterm", **env),
            stdin=slave,
            stdout=slave,
            stderr=slave,
            close_fds=True,
        )
        os.close(slave)
        self.output = ""
        self.raw = b""  # every byte the program wrote, ANSI sequences included
        self._seen = 0

    def send(self, text: str) -> None:
        os.write(self.master, text.encode())

    def expect(self, pattern: str, timeout: float = 30) -> str:
        """Wait until ``pattern`` (a regex) appears after the previous match."""
        regex = re.compile(pattern)
        deadline = time.monotonic() + timeout
        while True:
            match = regex.search(self.output, self._seen)
            if match:
                self._seen = match.end()
                return match.group(0)
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not self._read(remaining):
                tail = self.output[self._seen :][-2000:]
                raise AssertionError(f"{pattern!r} not seen; output since last match:\n{tail}")

    def _read(self, timeout: float) -> bool:
        ready, _, _ = select.select([self.master], [], [], min(timeout, 0.5))
        if not ready:
            return self.proc.poll() is None or timeout > 0.5
        try:
            data = os.read(self.master, 65536)
        except OSError:  # the child closed the terminal
            return False
        if not data:
            return False
        self.raw += data
        self.output += ANSI.sub("", data.decode(errors="replace"))
        return True

    def wait_until_reading_keys(self, timeout: float = 30) -> None:
        """Wait until the program is blocked reading the terminal (Linux: its main thread is
        in ``select``/``pselect6``). readline prints the prompt before it starts waiting, and a
        Ctrl+C that lands in between only trips Python's flag without waking the wait: the
        keypress is lost. Sending keys after this returns has no such race."""
        deadline = time.monotonic() + timeout
        waiting = {"23", "270", "7", "271"}  # select, pselect6, poll, ppoll on x86_64
        program = getattr(self.proc, "program_pid", lambda: self.proc.pid)()
        while True:
            if program is None:
                raise AssertionError("the program ended before it waited for a key")
            with open(f"/proc/{program}/syscall") as status:
                if status.read().split(" ", 1)[0] in waiting:
                    return
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise AssertionError("the program never waited for a key")
            self._read(0.01)

    def wait(self, timeout: float = 30) -> int:
        deadline = time.monotonic() + timeout
        while self.proc.poll() is None and time.monotonic() < deadline:
            self._read(0.2)
        return self.proc.wait(timeout=1)

    def hang_up(self, timeout: float = 30) -> int:
        """Close the terminal, as closing its window or losing the ssh connection does (the
        kernel sends the program, its controlling process, SIGHUP); returns the program's
        exit status."""
        os.close(self.master)
        self.master = -1
        return self.proc.wait(timeout=timeout)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        if self.master >= 0:
            os.close(self.master)
