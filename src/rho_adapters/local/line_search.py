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
from collections.abc import AsyncIterable, AsyncIterator

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
    lines = data.decode("utf-8", "replace").splitlines()
    try:
        hits = [i for i, text in enumerate(lines) if regex.search(text)]
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
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-I",
            "-c",
            _WORKER,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
        )
        try:
            await _send(proc, json.dumps({"pattern": pattern, "ignore_case": ignore_case}))
            answer = json.loads(await _receive(proc))
            if "error" in answer:
                raise ToolError(f"invalid regular expression: {answer['error']}")
            async for text in texts:
                await _send(proc, text)
                hits = json.loads(await _receive(proc))
                if isinstance(hits, dict):
                    raise ToolError(
                        f"the pattern needs more than {WORKER_MEMORY >> 20:,} MiB of memory on "
                        "this text; simplify it (a group repeated by * or + keeps a state per "
                        "repetition)"
                    )
                yield tuple(hits)
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
