"""The stdio transport: the server is a local program; one JSON-RPC message per line.

The program runs in a process group of its own (``start_new_session``), with only the
environment it is given (``environment``: a few harmless variables of ours and the config's
``env``, never our API keys). It is a local program outside the workspace confinement: it
runs with the user's rights, not the profile's. It runs under the guard in service mode
(``local/guard.py``), which leads its group: the server and everything it starts die with
this process, even after ``kill -9``, and what it started that left the group (``setsid``, a
daemon) is killed when it exits. Shutdown closes its stdin, then signals the whole group
(TERM, which the guard leaves to the server), then tells the guard to stop everything, then
KILL, so a server's own children do not outlive it either. A server whose stdout ends, or
that closed its stdin, is gone (``closed``) even if it runs on: it can serve nothing more.

A server without a ``cwd`` starts in a private empty directory of its own (removed when it
is closed), never in ours: ours is usually the workspace, whose files (``.npmrc``,
``uv.toml``, a ``json.py`` on ``python -m``'s ``sys.path[0]``, ``node_modules/.bin``) would
otherwise choose what runs as the user, outside the sandbox. For the same reason the ``PATH``
it inherits keeps only absolute directories: an empty or relative entry names whatever
directory the server is in when it runs a program.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import os
import shutil
import signal
import tempfile
from collections.abc import Callable, Mapping, Sequence

from rho_adapters.local.guard import STOP_SERVICE, guarded_service
from rho_adapters.mcp.transport import Message
from rho_domain.errors import McpError

# What a stdio server inherits from us, as the official SDK passes it: enough to find
# programs and a home, nothing that authenticates anyone.
INHERITED = ("HOME", "LANG", "LC_ALL", "LOGNAME", "PATH", "SHELL", "TERM", "TMPDIR", "USER")
MAX_MESSAGE = 256 * 1024 * 1024  # one line's bytes; a larger one ends the connection
_STDERR_LINES = 20
_LINE_BYTES = 1_200  # bytes kept of a stderr line: its first 300 characters are shown
_CHUNK = 64 * 1024  # bytes of stderr read at a time
_GRACE = 0.5  # seconds the server gets to exit on its own, then per signal
# seconds a server whose stdout ended is given to exit, for its exit code; past it the server
# is gone all the same: it can answer nothing more (a call waited its whole call_timeout)
_EXIT_WAIT = 2.0


def environment(given: Mapping[str, str], ours: Mapping[str, str]) -> dict[str, str]:
    """The server's whole environment: ``INHERITED`` variables of ``ours`` that are set
    (of ``PATH``, its absolute directories only), then ``given`` (the config's ``env``,
    already resolved: what the operator wrote is passed as written)."""
    env = {name: ours[name] for name in INHERITED if name in ours}
    if "PATH" in env:
        env["PATH"] = os.pathsep.join(d for d in env["PATH"].split(os.pathsep) if d[:1] == "/")
    env.update(given)
    return env


class StdioTransport:
    """Runs ``command`` and speaks JSON-RPC on its stdin and stdout."""

    answers_in_reply = False  # an answer is a line the reader meets later

    def __init__(
        self,
        server: str,
        command: Sequence[str],
        *,
        env: Mapping[str, str],
        cwd: str | None = None,
    ) -> None:
        self.server = server
        self.command = tuple(command)
        self.env = dict(env)
        self.cwd = cwd
        self._private: str | None = None  # the empty directory made for a server without cwd
        self.process: asyncio.subprocess.Process | None = None
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=_STDERR_LINES)
        self._tasks: list[asyncio.Task[None]] = []
        self._closed: Callable[[str], None] = lambda why: None
        self._closing = False  # aclose has begun: a closed stdin is ours

    async def start(self, deliver: Callable[[str], None], closed: Callable[[str], None]) -> None:
        """Start the program. Raises ``McpError`` naming the command when it cannot."""
        try:
            if self.cwd is None and self._private is None:
                self._private = tempfile.mkdtemp(prefix="rho-mcp-")
            cwd = self.cwd if self.cwd is not None else self._private
            _executable(self.command[0], self.env, cwd)
            self.process = await asyncio.create_subprocess_exec(
                *guarded_service(self.command),
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=self.env,
                cwd=cwd,
                start_new_session=True,
                limit=MAX_MESSAGE,
            )
        except OSError as exc:
            self._remove_private()
            raise McpError(
                f"MCP server {self.server!r}: cannot start {self.command[0]!r}: "
                f"{exc.strerror or exc} (check mcp_servers.{self.server}.command and cwd)",
                server=self.server,
            ) from exc
        self._closed = closed
        self._tasks = [
            asyncio.ensure_future(self._read(deliver, closed)),
            asyncio.ensure_future(self._read_stderr()),
        ]

    async def send(self, message: Message) -> None:
        """Write one line. Raises ``McpError`` when the program is not running, or closed its
        stdin and runs on (then it is gone, as one that exited: ``closed`` is called)."""
        process = self.process
        if process is None or process.stdin is None or self._closing:
            raise McpError(f"MCP server {self.server!r} is not running", server=self.server)
        try:
            if process.stdin.is_closing():  # the program closed its end of the pipe
                raise BrokenPipeError
            process.stdin.write(json.dumps(message).encode() + b"\n")
            await process.stdin.drain()
        except (ConnectionError, OSError) as exc:
            # Most often the program is exiting (a mistyped script: `python tickets_serve.py`
            # exits at once, its stdin closed before our first line): say its exit code and
            # its stderr, which say what to fix, rather than the closed pipe.
            code = await self._exit_code()
            why = "closed its input (stdin): it can read nothing more"
            if code is None:
                self._closed(why)  # it runs on, but can serve nothing: gone all the same
            else:
                why = self.why_gone(code)
            raise McpError(f"MCP server {self.server!r} {why}", server=self.server) from exc

    def negotiated(self, version: str) -> None:
        """Nothing to do: stdio carries no version after the handshake."""
        del version

    async def aclose(self) -> None:
        """Close stdin, then TERM and KILL the process group, then remove the private
        directory of a server without ``cwd``. Idempotent."""
        process = self.process
        if process is None:
            self._remove_private()
            return
        self._closing = True
        if process.stdin is not None and not process.stdin.is_closing():
            with contextlib.suppress(OSError):
                process.stdin.close()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(process.wait()), _GRACE)
        if _signal_group(process.pid, signal.SIGTERM) and process.returncode is None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(process.wait()), _GRACE)
        if process.returncode is None:  # the server ignored TERM: the guard ends everything
            with contextlib.suppress(ProcessLookupError):
                os.kill(process.pid, STOP_SERVICE)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(process.wait()), _GRACE)
        _signal_group(process.pid, signal.SIGKILL)  # what is left, guard gone or not
        for task in self._tasks:
            task.cancel()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(process.wait(), _GRACE)
        # asyncio's Process has no close(); its transport, left open, would close itself when
        # collected, on a loop that may be gone by then
        transport = getattr(process, "_transport", None)
        if transport is not None:
            transport.close()
        self._remove_private()

    def _remove_private(self) -> None:
        if self._private is not None:
            shutil.rmtree(self._private, ignore_errors=True)
            self._private = None

    def why_gone(self, code: int | None) -> str:
        """``exited (code N)``, or for ``None`` (its stdout ended, the program still running)
        that it closed its output, and the last lines it wrote to stderr."""
        tail = " | ".join(self.stderr_tail)
        said = f"; its last stderr lines: {tail}" if tail else ""
        if code is None:
            return f"closed its output (stdout): it can answer nothing more{said}"
        return f"exited (code {code}){said}"

    async def _exit_code(self) -> int | None:
        """The program's exit code once it has exited (waited ``_EXIT_WAIT`` at most), its
        stderr read to the end (``_GRACE`` at most); None while it runs on."""
        process = self.process
        assert process is not None
        try:
            code = await asyncio.wait_for(asyncio.shield(process.wait()), _EXIT_WAIT)
        except TimeoutError:
            return None
        stderr = self._tasks[1:2]  # started with the reader; absent before start
        if stderr:
            await asyncio.wait(stderr, timeout=_GRACE)
        return code

    async def _read(self, deliver: Callable[[str], None], closed: Callable[[str], None]) -> None:
        process = self.process
        assert process is not None
        assert process.stdout is not None
        why = ""
        try:
            while line := await process.stdout.readline():
                if line.strip():
                    deliver(line.decode("utf-8", errors="replace"))
        except ValueError:  # a line longer than MAX_MESSAGE
            why = f"sent a message longer than {MAX_MESSAGE} bytes; "
        code: int | None = None
        with contextlib.suppress(TimeoutError):
            code = await asyncio.wait_for(asyncio.shield(process.wait()), _EXIT_WAIT)
        await asyncio.sleep(0)  # let the stderr reader take the last lines
        closed(why + self.why_gone(code))

    async def _read_stderr(self) -> None:
        """Keep the last lines of stderr, each cut to 300 characters, read a chunk at a time:
        a line without end (a server writing forever) costs a chunk of memory, not the line
        (``readline`` held a line up to ``MAX_MESSAGE`` bytes to keep its first 300)."""
        process = self.process
        assert process is not None
        assert process.stderr is not None
        line = b""  # the start of the line being read, at most _LINE_BYTES
        while chunk := await process.stderr.read(_CHUNK):
            *ended, rest = chunk.split(b"\n")
            for part in ended:
                self._keep(line + part[:_LINE_BYTES])
                line = b""
            line = (line + rest[:_LINE_BYTES])[:_LINE_BYTES]
        self._keep(line)

    def _keep(self, line: bytes) -> None:
        text = line[:_LINE_BYTES].decode("utf-8", errors="replace").strip()
        if text:
            self.stderr_tail.append(text[:300])


def _executable(program: str, env: Mapping[str, str], cwd: str | None) -> None:
    """Raise ``OSError`` as ``exec`` would for ``program``, looked up on ``env``'s PATH
    as the server's exec looks it up: the guard execs it, so its failure would otherwise
    arrive as an exit status instead of the error that names the command."""
    if "/" in program:
        path = os.path.join(cwd or ".", program)
        if not os.path.isfile(path):
            raise FileNotFoundError(2, os.strerror(2), program)
        if not os.access(path, os.X_OK):
            raise PermissionError(13, os.strerror(13), program)
    elif shutil.which(program, path=os.pathsep.join(os.get_exec_path(dict(env)))) is None:
        raise FileNotFoundError(2, "not found on the server's PATH", program)


def _signal_group(pgid: int, signum: int) -> bool:
    """Signal the process group; False when no process of it is left."""
    try:
        os.killpg(pgid, signum)
    except ProcessLookupError:
        return False
    except PermissionError:
        return False
    return True
