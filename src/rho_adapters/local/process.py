"""Running processes: pipelines of argvs wired by the harness, each stage in its own session.

Guarantees: stdin is /dev/null (or the stage's file/here-document); every process starts in a
fresh process group (``start_new_session``); on timeout, on cancellation of the awaiting task
and when the command ended, every group is killed with SIGKILL (what a command leaves running,
``nohup cmd >/dev/null &`` say, holds no pipe, so the pipe's end says nothing of it), so no
grandchild outlives the call; what left its group is the guard's (``guard.py``). Output
(stdout of the last stage plus every captured stderr) is read while it streams and kept within
a byte cap: the head and the tail are kept, the middle is counted in ``omitted``. Past
``kill_after`` bytes in all (the output limit) reading stops and every group is killed:
``yes`` ends there, not at the timeout.
Resource limits are not set here: the guard (``guard.py``) or ``rlimits.limited`` sets them.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from rho_domain.value_methods import value_eq, value_hash, value_repr

OUTPUT_GRACE = 1.0  # seconds to wait for the output pipe to close after the processes exit


@attrs.define
class Capture:
    """Head + tail byte buffer with a fixed cap."""

    __repr__ = value_repr
    __eq__ = value_eq

    cap: int
    head: bytearray = attrs.field(factory=bytearray)
    tail: bytearray = attrs.field(factory=bytearray)
    omitted: int = 0

    def add(self, chunk: bytes) -> None:
        """Keep ``chunk`` within the cap: the first half as head, the rest as a rolling tail."""
        room = self.cap // 2 - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if not chunk:
            return
        self.tail += chunk
        excess = len(self.tail) - (self.cap - self.cap // 2)
        if excess > 0:
            del self.tail[:excess]
            self.omitted += excess

    @property
    def total(self) -> int:
        """Bytes seen so far, kept or not."""
        return len(self.head) + len(self.tail) + self.omitted

    def text(self, undecodable: str = "replace") -> str:
        """The captured output as text, with a marker where the middle was omitted; bytes
        that are not UTF-8 decoded by the ``undecodable`` error handler."""
        head = self.head.decode("utf-8", undecodable)
        tail = self.tail.decode("utf-8", undecodable)
        if self.omitted:
            return f"{head}\n[... {self.omitted:,} bytes of output omitted ...]\n{tail}"
        return head + tail


@attrs.frozen(kw_only=True)
class Finished:
    """How a run ended: ``code`` (None when killed for the timeout; 128 + N for signal N), the
    kept ``output``, ``omitted`` bytes, and whether the timeout or the output limit ended it."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    code: int | None
    output: str
    timed_out: bool
    omitted: int
    output_limited: bool = False


@attrs.frozen(kw_only=True)
class Spawn:
    """One process to start: argv (already resolved/sandboxed), fds to use (``pass_fds``:
    kept open in the child under the same numbers), where to run."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    argv: tuple[str, ...]
    stdin: int
    stdout: int
    stderr: int
    pass_fds: tuple[int, ...] = ()


def _kill_groups(procs: Sequence[asyncio.subprocess.Process]) -> None:
    """SIGKILL every stage's process group and every descendant that left it.

    bubblewrap's sandbox init leaves the group (``--new-session``) and arms its own death
    signal (``--die-with-parent``) only once it has been cloned: a bwrap killed in between
    left the init and the command running, reparented to pid 1 (seen under load, when a call
    was cancelled as it started). So the groups are stopped first (a stopped process cannot
    fork), their descendants are read from /proc while nothing can change, and then all of
    them are killed; killing a sandbox's init ends everything in its PID namespace."""
    leaders = [proc.pid for proc in procs]  # an ended leader's group may still have members
    for pid in leaders:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGSTOP)
    _until_stopped(leaders)
    strays = _descendants(leaders)
    for pid in leaders:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)
    for pid in strays:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def _until_stopped(pids: Sequence[int], *, polls: int = 50) -> None:
    """Wait (at most ~50 ms) until each of ``pids`` is stopped or gone."""
    for _ in range(polls):
        if all(_state(pid) in ("T", "t", "Z", "X", "") for pid in pids):
            return
        time.sleep(0.001)


def _state(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return ""


def _descendants(pids: Sequence[int]) -> list[int]:
    """Every process below ``pids`` (Linux ``/proc/PID/task/TID/children``; none elsewhere)."""
    found: list[int] = []
    queue = list(pids)
    while queue:
        pid = queue.pop()
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                with open(f"/proc/{pid}/task/{task}/children") as children:
                    below = [int(child) for child in children.read().split()]
            except (OSError, ValueError):
                continue
            found.extend(below)
            queue.extend(below)
    return found


async def run_processes(
    spawns: Sequence[Spawn],
    out_read: int,
    *,
    cwd: str,
    env: Mapping[str, str],
    timeout: float,
    cap: int,
    close_after_spawn: Sequence[int],
    kill_after: int | None = None,
    undecodable: str = "replace",
) -> Finished:
    """Start ``spawns``, collect ``out_read`` (at most ``kill_after`` bytes) and say how it ended.

    The caller created the pipes; every descriptor in ``close_after_spawn`` is closed in this
    process once the children hold their copies, so EOF arrives when they are done.
    """
    procs: list[asyncio.subprocess.Process] = []
    capture = Capture(cap)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 20)
    transport = None
    timed_out = False
    limited = False
    try:
        try:
            for spawn in spawns:
                starting = asyncio.ensure_future(
                    asyncio.create_subprocess_exec(
                        *spawn.argv,
                        stdin=spawn.stdin,
                        stdout=spawn.stdout,
                        stderr=spawn.stderr,
                        cwd=cwd,
                        env=dict(env),
                        start_new_session=True,
                        close_fds=True,
                        pass_fds=spawn.pass_fds,
                    )
                )
                try:
                    procs.append(await asyncio.shield(starting))
                except asyncio.CancelledError:
                    # Cancelled while the process was being started: it exists (or fails to),
                    # so it is waited for and then killed with its group below. Left to
                    # asyncio, only its leader would be killed, and a sandbox it had started
                    # would run on.
                    with contextlib.suppress(Exception):
                        procs.append(await starting)
                    raise
        finally:
            for fd in close_after_spawn:
                with contextlib.suppress(OSError):
                    os.close(fd)
        pipe = os.fdopen(out_read, "rb", buffering=0)
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), pipe
        )
        try:
            async with asyncio.timeout(timeout):
                limited = await _drain(reader, capture, procs, kill_after)
        except TimeoutError:
            timed_out = True
    finally:
        # Timeout or cancellation: the whole groups go. Ended: what the stages left running
        # in their groups goes too (an empty group costs a failed killpg each).
        _kill_groups(procs)
        for proc in procs:
            with contextlib.suppress(ProcessLookupError):
                await asyncio.shield(proc.wait())
        if transport is not None:
            transport.close()
    code = procs[-1].returncode if procs and not timed_out else None
    if code is not None and code < 0:
        code = 128 - code  # killed by a signal, reported like bash does
    return Finished(
        code=code,
        output=capture.text(undecodable),
        timed_out=timed_out,
        omitted=capture.omitted,
        output_limited=limited,
    )


async def _drain(
    reader: asyncio.StreamReader,
    capture: Capture,
    procs: Sequence[asyncio.subprocess.Process],
    kill_after: int | None,
) -> bool:
    """Read until EOF, or until ``kill_after`` bytes: then kill the groups and return True."""

    async def read_all() -> bool:
        while chunk := await reader.read(1 << 16):
            if kill_after is not None and capture.total + len(chunk) > kill_after:
                capture.add(chunk[: max(0, kill_after - capture.total)])
                _kill_groups(procs)
                return True
            capture.add(chunk)
        return False

    read_task = asyncio.create_task(read_all())
    exited = asyncio.ensure_future(asyncio.gather(*(p.wait() for p in procs)))
    try:
        either: list[asyncio.Future[Any]] = [read_task, exited]
        await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
        if read_task.done() and read_task.result():
            return True  # the output limit: the groups are dead, their pipe is not read
        await exited
        try:
            async with asyncio.timeout(OUTPUT_GRACE):
                await asyncio.shield(read_task)
        except TimeoutError:
            # A background grandchild still holds the pipe: the command is over, end it.
            _kill_groups(procs)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(OUTPUT_GRACE):
                    await asyncio.shield(read_task)
        return False
    finally:
        for task in (read_task, exited):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
