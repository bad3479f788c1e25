"""ProcessLineSearcher: the ``LineSearcher`` port in a worker process that can be killed.

A regex match cannot be interrupted inside the interpreter that runs it (``re`` holds the
GIL), so each search gets its own ``python -I`` process running ``_WORKER`` (the standard
library only: no import of ours, so it starts in about 20 ms), with 1 GiB of address space.
Texts go over its stdin and the matching line numbers come back over its stdout, framed by an
8-byte length. When the search ends early (the caller's deadline, a cancel, an error) the
process is killed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import struct
import sys
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Sequence

from rho_domain.errors import ToolError
from rho_domain.ports.line_search import LineSearcher

_HEADER = struct.Struct(">Q")
_MAX_REPLY = 64 << 20  # line numbers of one text, as JSON
WORKER_MEMORY = 1 << 30  # bytes of address space a worker may use

_WORKER = r"""
import json, os, re, resource, struct, sys
# Memory too is bounded: a pattern or a text that needs more fails here, not in the agent.
resource.setrlimit(resource.RLIMIT_AS, (WORKER_MEMORY, WORKER_MEMORY))
# A runaway pattern burns a core until the deadline: never ahead of the agent's event loop.
os.nice(10)
header = struct.Struct(">Q")
read, write = sys.stdin.buffer.read, sys.stdout.buffer.write

def receive():
    head = read(8)
    if len(head) < 8:
        return None
    return read(header.unpack(head)[0])

def send(data):
    write(header.pack(len(data)) + data)
    sys.stdout.buffer.flush()

spec = json.loads(receive())
try:
    regex = re.compile(spec["pattern"], re.IGNORECASE if spec["ignore_case"] else 0)
except (re.error, OverflowError, RecursionError, ValueError) as exc:
    send(json.dumps({"error": str(exc)}).encode())
    sys.exit(0)
send(b"{}")
while (data := receive()) is not None:
    text = data.decode("utf-8", "replace")
    try:
        if spec["whole"]:  # found: one answer for the whole text
            hits = [0] if regex.search(text) else []
        else:
            hits = [i for i, line in enumerate(text.splitlines()) if regex.search(line)]
    except MemoryError:
        send(json.dumps({"memory": True}).encode())
        sys.exit(0)
    send(json.dumps(hits).encode())
""".replace("WORKER_MEMORY", str(WORKER_MEMORY))


class ProcessLineSearcher(LineSearcher):
    """``LineSearcher`` in one worker process per search (killed when it is abandoned)."""

    async def search(
        self, pattern: str, texts: AsyncIterable[str], *, ignore_case: bool
    ) -> AsyncIterator[tuple[int, ...]]:
        """See ``LineSearcher.search``."""
        async with _worker(pattern, ignore_case=ignore_case, whole=False) as ask:
            async for text in texts:
                yield await ask(text)

    async def found(self, pattern: str, texts: Sequence[str]) -> tuple[bool, ...]:
        """See ``LineSearcher.found``."""
        async with _worker(pattern, ignore_case=False, whole=True) as ask:
            return tuple([bool(await ask(text)) for text in texts])


@contextlib.asynccontextmanager
async def _worker(
    pattern: str, *, ignore_case: bool, whole: bool
) -> AsyncIterator[Callable[[str], Awaitable[tuple[int, ...]]]]:
    """A worker holding ``pattern`` compiled, as the function that sends it one text and
    returns its answer; killed on the way out unless it ended."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-I",
        "-c",
        _WORKER,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )

    async def ask(text: str) -> tuple[int, ...]:
        await _send(proc, text)
        hits = json.loads(await _receive(proc))
        if isinstance(hits, dict):
            raise ToolError(
                f"the pattern needs more than {WORKER_MEMORY >> 20:,} MiB of memory on "
                "this text; simplify it (a group repeated by * or + keeps a state per "
                "repetition)"
            )
        return tuple(hits)

    try:
        spec = {"pattern": pattern, "ignore_case": ignore_case, "whole": whole}
        await _send(proc, json.dumps(spec))
        answer = json.loads(await _receive(proc))
        if "error" in answer:
            raise ToolError(f"invalid regular expression: {answer['error']}")
        yield ask
        assert proc.stdin is not None
        proc.stdin.close()
        await proc.wait()
    finally:
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            # Reaping a killed process is immediate; shielded so a second cancel cannot
            # leave a zombie behind.
            await asyncio.shield(proc.wait())


async def _send(proc: asyncio.subprocess.Process, text: str) -> None:
    assert proc.stdin is not None
    data = text.encode("utf-8", "replace")
    proc.stdin.write(_HEADER.pack(len(data)) + data)
    await proc.stdin.drain()


async def _receive(proc: asyncio.subprocess.Process) -> bytes:
    assert proc.stdout is not None
    try:
        (size,) = _HEADER.unpack(await proc.stdout.readexactly(_HEADER.size))
        if size > _MAX_REPLY:
            raise ToolError(f"the regex worker's answer is too large ({size:,} bytes)")
        return await proc.stdout.readexactly(size)
    except asyncio.IncompleteReadError:
        raise ToolError("the regex worker ended unexpectedly") from None
