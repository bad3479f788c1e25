"""read: numbered lines of a text file, streamed in chunks (never loaded whole).

``offset`` is the first line (1-based), ``limit`` the number of lines; long lines are cut. The
work is bounded whatever the file's size or shape: at most ``MAX_SCAN`` bytes are scanned (in
``CHUNK`` pieces), and at most ``MAX_LINE * 4`` bytes of any one line are kept, so a 5 GiB file
with a single line costs what a 64 MiB one does. The line count is exact when the whole file
was scanned, else stated as a lower bound ("at least N"). Binary files (a NUL byte in the first
8 KiB) are refused with a hint, unless they begin with a UTF-16 byte order mark (then
decoded); undecodable bytes are replaced; a UTF-8 byte order mark is not shown. The executor
refuses FIFOs, devices, secrets and paths outside.
"""

from __future__ import annotations

import codecs
from collections.abc import Mapping
from typing import Any

from rho_domain.errors import ToolError
from rho_domain.tools.base import READ_ONLY, ToolContext, ToolHandler, ToolOutput, ToolPolicy

CHUNK = 1 << 20
MAX_SCAN = 64 << 20
MAX_LINE = 2000
DEFAULT_LIMIT = 2000
_UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)


class ReadHandler(ToolHandler):
    """``read``: numbered lines of a text file, a window at a time, in bounded time and memory."""

    name = "read"
    description = (
        "Read a text file with numbered lines. offset: first line (1-based, default 1); limit: "
        f"number of lines (default {DEFAULT_LIMIT}). Lines longer than {MAX_LINE} characters "
        "are cut. Binary files are refused."
    )
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "File path, relative to the workspace."},
            "offset": {"type": "integer", "minimum": 1},
            "limit": {"type": "integer", "minimum": 1, "maximum": 10000},
        },
        "required": ["path"],
        "additionalProperties": False,
    }

    def policy_for(self, arguments: Mapping[str, Any]) -> ToolPolicy:
        """Reading never changes anything."""
        return READ_ONLY

    async def handle(self, arguments: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
        """See ``ToolHandler.handle``."""
        path = str(arguments["path"])
        first = int(arguments.get("offset") or 1)
        limit = int(arguments.get("limit") or DEFAULT_LIMIT)
        last = first + limit - 1
        lines: list[str] = []
        total = 0
        position = 0
        pending = b""
        cut_lines = 0
        ended = False
        utf16: codecs.IncrementalDecoder | None = None
        while position < MAX_SCAN:
            chunk = await ctx.executor.read(path, offset=position, length=CHUNK)
            if position == 0:
                utf16 = _utf16_decoder(path, chunk)
            if not chunk:
                ended = True
                break
            position += len(chunk)
            ended = len(chunk) < CHUNK  # a short read is the end of a regular file
            data = pending + _as_utf8(utf16, chunk, ended)
            complete = data.count(b"\n")
            if total + complete < first or total >= last:
                # Outside the window: count in C, never a Python step per line (a chunk of
                # a million empty lines held the event loop 0.1-0.2 s).
                pending = data[data.rfind(b"\n") + 1 :]
            else:
                parts = data.split(b"\n")
                pending = parts.pop()
                for number in range(max(first, total + 1), min(last, total + complete) + 1):
                    cut_lines += _keep(lines, number, parts[number - total - 1])
            total += complete
            if len(pending) > MAX_LINE * 4:
                pending = pending[: MAX_LINE * 4]  # a giant line: keep only what is shown
            if ended:
                break
        if pending:
            total += 1
            if first <= total <= last:
                cut_lines += _keep(lines, total, pending)
        if ended and total and first > total:
            raise ToolError(f"offset {first} is past the end of {path} ({total} lines)")
        if not ended and first > total:
            raise ToolError(
                f"offset {first} is beyond the first {MAX_SCAN:,} bytes of {path} "
                f"({total:,}+ lines there); use bash `tail -n` or `sed -n` for deeper lines"
            )
        notes = []
        shown_last = min(last, total)
        count = f"{total}" if ended else f"at least {total} (scanned the first {MAX_SCAN:,} bytes)"
        if (first > 1 and total) or shown_last < total or not ended:  # an empty file: none
            notes.append(f"lines {first}-{shown_last} of {count}; use offset/limit for more")
        if cut_lines:
            notes.append(f"{cut_lines} line(s) cut at {MAX_LINE} characters")
        body = "\n".join(lines) if lines else "(empty file)"
        footer = f"\n[{'; '.join(notes)}]" if notes else ""
        return ToolOutput(
            content=body + footer,
            metadata={
                "path": path,
                "total_lines": total,
                "first": first,
                "last": shown_last,
                "complete": ended,
            },
        )


def _utf16_decoder(path: str, head: bytes) -> codecs.IncrementalDecoder | None:
    """A decoder for a file beginning with a UTF-16 byte order mark: text all the same
    (PowerShell's ``>``, SQL Server's scripts), read as UTF-8 a chunk at a time (a character
    split between chunks waits for the next). None for any other text. Raises ToolError for
    a binary file (a NUL byte in the first 8 KiB)."""
    if head.startswith(_UTF16_BOMS):
        return codecs.getincrementaldecoder("utf-16")("replace")
    if b"\x00" in head[:8192]:
        raise ToolError(f"{path} looks binary (NUL bytes); inspect it with bash `file` or `xxd`")
    return None


def _as_utf8(utf16: codecs.IncrementalDecoder | None, chunk: bytes, last: bool) -> bytes:
    return chunk if utf16 is None else utf16.decode(chunk, final=last).encode("utf-8", "replace")


def _keep(lines: list[str], number: int, raw: bytes) -> int:
    if number == 1:  # a UTF-8 byte order mark is no text: edit keeps it and matches without it
        raw = raw.removeprefix(b"\xef\xbb\xbf")
    text = raw.decode("utf-8", "replace").rstrip("\r")
    cut = len(text) > MAX_LINE
    if cut:
        text = text[:MAX_LINE] + " [...]"
    lines.append(f"{number:>6}\t{text}")
    return int(cut)
