"""Running processes: pipelines of argvs wired by the harness, each stage in its own session.

Guarantees: stdin is /dev/null (or the stage's file/here-document); every process starts in a
fresh process group (``start_new_session``); on timeout, on cancellation of the awaiting task
and when the command ended but something still holds its output pipe, every group is killed
with SIGKILL, so no grandchild outlives the call. Output (stdout of the last stage plus every
captured stderr) is read while it streams and kept within a byte cap: the head and the tail
are kept, the middle is counted in ``omitted``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import resource
import signal
from collections.abc import Callable, Mapping, Sequence

import attrs

OUTPUT_GRACE = 1.0  # seconds to wait for the output pipe to close after the processes exit


@attrs.define
class Capture:
    """Head + tail byte buffer with a fixed cap."""

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

    def text(self) -> str:
        """The captured output as text, with a marker where the middle was omitted."""
        head = self.head.decode("utf-8", "replace")
        tail = self.tail.decode("utf-8", "replace")
        if self.omitted:
            return f"{head}\n[... {self.omitted:,} bytes of output omitted ...]\n{tail}"
        return head + tail


@attrs.frozen(kw_only=True)
class Spawn:
    """One process to start: argv (already resolved/sandboxed), fds to use, where to run."""

    argv: tuple[str, ...]
    stdin: int
    stdout: int
    stderr: int


def restricted_limits(cpu_seconds: float, file_size: int, nproc: int) -> Callable[[], None]:
    """A preexec function applying rlimits (file size, processes, CPU, no core dumps)."""

    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (file_size, file_size))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        cpu = int(cpu_seconds) + 1
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))

    return apply


def _kill_groups(procs: Sequence[asyncio.subprocess.Process]) -> None:
    for proc in procs:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)


async def run_processes(
    spawns: Sequence[Spawn],
    out_read: int,
    *,
    cwd: str,
    env: Mapping[str, str],
    timeout: float,
    cap: int,
    preexec: Callable[[], None] | None,
    close_after_spawn: Sequence[int],
) -> tuple[int | None, str, bool, int]:
    """Start ``spawns``, collect ``out_read`` and return (exit code, output, timed out, omitted).

    The caller created the pipes; every descriptor in ``close_after_spawn`` is closed in this
    process once the children hold their copies, so EOF arrives when they are done.
    """
    procs: list[asyncio.subprocess.Process] = []
    capture = Capture(cap)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 20)
    transport = None
    timed_out = False
    finished = False
    try:
        try:
            for spawn in spawns:
                procs.append(
                    await asyncio.create_subprocess_exec(
                        *spawn.argv,
                        stdin=spawn.stdin,
                        stdout=spawn.stdout,
                        stderr=spawn.stderr,
                        cwd=cwd,
                        env=dict(env),
                        start_new_session=True,
                        preexec_fn=preexec,
                        close_fds=True,
                    )
                )
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
                await _drain(reader, capture, procs)
        except TimeoutError:
            timed_out = True
        finished = not timed_out
    finally:
        if not finished:
            _kill_groups(procs)  # timeout or cancellation: the whole groups go
        for proc in procs:
            with contextlib.suppress(ProcessLookupError):
                await asyncio.shield(proc.wait())
        if transport is not None:
            transport.close()
    code = procs[-1].returncode if procs and not timed_out else None
    if code is not None and code < 0:
        code = 128 - code  # killed by a signal, reported like bash does
    return code, capture.text(), timed_out, capture.omitted


async def _drain(
    reader: asyncio.StreamReader, capture: Capture, procs: Sequence[asyncio.subprocess.Process]
) -> None:
    async def read_all() -> None:
        while chunk := await reader.read(1 << 16):
            capture.add(chunk)

    read_task = asyncio.create_task(read_all())
    try:
        await asyncio.gather(*(p.wait() for p in procs))
        try:
            async with asyncio.timeout(OUTPUT_GRACE):
                await asyncio.shield(read_task)
        except TimeoutError:
            # A background grandchild still holds the pipe: the command is over, end it.
            _kill_groups(procs)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(OUTPUT_GRACE):
                    await asyncio.shield(read_task)
    finally:
        read_task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await read_task
