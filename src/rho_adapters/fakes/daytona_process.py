"""FakeDaytona's ``POST /process/execute``, run as the two generations of the daemon run it.

* ``"argv"`` (the daemon before March 2026, daytonaio/daytona
  ``apps/daemon/pkg/toolbox/process/execute.go`` up to #3918): the command is split by
  ``parse_command`` and its words are exec'd, no shell; stdin is /dev/null.
* ``"shell"`` (#3918 on): the command text is the stdin of the image's shell (the first of
  zsh and bash in /etc/shells, else ``$SHELL``, else sh; here bash).

Both join stdout and stderr, run in their own process group (killed whole on timeout: 408)
and answer ``{"exitCode", "result"}``; a program that cannot start answers exit code -1 and
Go's error text.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import tempfile
from typing import Any, Literal

import httpx

Daemon = Literal["argv", "shell"]
OnTimeout = Literal["kill", "leave", "ignore"]
"""What a daemon does at a command's timeout: kill its group and answer 408 (today's), answer
408 and leave it running, or ignore the timeout (answer when the command ends)."""
_EXECUTE = "/process/execute"


def parse_command(command: str) -> list[str]:
    """The daemon's ``parseCommand``: words split on spaces outside quotes; a ``"`` or ``'``
    opens a quote that only the same character closes (the other kind is kept literally
    inside); the quote characters are dropped. No backslash escapes, no expansions, no
    redirections, and tabs and newlines are ordinary characters."""
    args: list[str] = []
    current: list[str] = []
    quote = ""
    for char in command:
        if char in "\"'":
            if not quote:
                quote = char
            elif quote == char:
                quote = ""
            else:
                current.append(char)
        elif char == " " and not quote:
            if current:
                args.append("".join(current))
                current = []
        else:
            current.append(char)
    if current:
        args.append("".join(current))
    return args


def _error(status: int, message: str) -> httpx.Response:
    body = {"statusCode": status, "message": message, "code": "Error", "path": _EXECUTE}
    return httpx.Response(status, json=body)


def _start_error(argv0: str, exc: OSError) -> str:
    """Go's ``cmd.Start`` error text for a program that could not be started."""
    if isinstance(exc, FileNotFoundError) and "/" not in argv0:
        return f'exec: "{argv0}": executable file not found in $PATH'
    return f"fork/exec {argv0}: {(exc.strerror or str(exc)).lower()}"


async def execute(
    spec: dict[str, Any],
    env: dict[str, str],
    daemon: Daemon,
    *,
    on_timeout: OnTimeout = "kill",
    left: set[asyncio.Future[Any]] | None = None,
) -> httpx.Response:
    """Answer one execute request body ``spec`` in a sandbox whose env vars are ``env``, doing
    ``on_timeout`` at its timeout (``OnTimeout``); a command left running is reaped by a
    task kept in ``left`` until it ends."""
    left = set() if left is None else left
    command = str(spec.get("command") or "")
    words = parse_command(command) if daemon == "argv" else ["/bin/bash"]
    if not command.strip() or not words:
        return _error(400, "empty command")
    timeout = spec.get("timeout") or 0 if on_timeout != "ignore" else 0
    # The shell daemon's bash reads the command from a file, not a pipe: from a pipe it reads
    # one byte at a time, 4-5 ms of CPU for a command of 20 KB; from a file it reads blocks
    # and seeks back, with the same meaning.
    with tempfile.TemporaryFile() as stdin:
        if daemon == "shell":
            stdin.write(command.encode())
            stdin.seek(0)
        try:
            proc = await asyncio.create_subprocess_exec(
                *words,
                stdin=stdin if daemon == "shell" else asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                cwd=spec.get("cwd") or None,
                env={**os.environ, **env},  # the sandbox's env vars, as Daytona sets them
                start_new_session=True,
            )
        except OSError as exc:
            return httpx.Response(200, json={"exitCode": -1, "result": _start_error(words[0], exc)})
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), timeout if timeout > 0 else None)
    except TimeoutError:
        if on_timeout == "kill":
            _kill(proc)
            await proc.wait()
        else:  # left running: its output drained and the process reaped whenever it ends
            left.add(task := asyncio.ensure_future(proc.communicate()))
            task.add_done_callback(left.discard)
        return _error(408, "command execution timeout")
    except BaseException:
        _kill(proc)  # the request was abandoned (cancellation): the fake's process ends too
        raise
    result = out.decode("utf-8", "replace")
    code = max(-1, proc.returncode or 0)  # a signal's negative code: Go's ExitCode() says -1
    return httpx.Response(200, json={"exitCode": code, "result": result})


def _kill(proc: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
