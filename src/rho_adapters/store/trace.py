"""trace.jsonl: reading (with torn-line tolerance) and replaying it into State.

A process killed mid-write leaves at most one incomplete line, at the end. Readers skip it with
a ``TornTraceWarning`` (and a log record), never an error; the store moves it aside when it
next opens the session so that appends start on a clean line. A complete line that cannot be
decoded (a crash that left garbage and then a newline, a hand edit) is skipped the same way and
moved aside too, so that it is reported once, not on every open. A line of a newer format version
is an error (``TraceFormatError``): silently dropping it would resume the wrong history.
"""

from __future__ import annotations

import contextlib
import gc
import json
import logging
import warnings
from collections.abc import Iterable, Iterator
from pathlib import Path

import attrs

from rho_adapters.codec import FutureTraceVersion, decode_event_line, event_from_dict
from rho_adapters.store.confined import read_bytes
from rho_domain.errors import TraceFormatError
from rho_domain.events import Event
from rho_domain.state import State
from rho_domain.value_methods import value_eq, value_hash, value_repr

log = logging.getLogger("rho_adapters.store")


class TornTraceWarning(UserWarning):
    """A trace line was incomplete or unreadable and was skipped."""


@attrs.frozen
class TraceRead:
    """Decoded events; ``valid_bytes`` is the length of the clean prefix (complete lines), and
    ``torn`` the bytes after it that were skipped (empty when the file is clean)."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    events: tuple[Event, ...]
    valid_bytes: int
    torn: bytes = b""
    skipped: tuple[bytes, ...] = ()
    """Complete lines (newline included) in the clean prefix that could not be decoded."""


def _skip(source: str, what: str) -> None:
    message = f"{source}: skipped {what}"
    log.warning(message)
    warnings.warn(message, TornTraceWarning, stacklevel=3)


def parse_trace(data: bytes, *, source: str = "trace.jsonl") -> TraceRead:
    """Decode a whole trace. The fast path parses every complete line in one ``json.loads``
    (one C call instead of one per line); a corrupt line falls back to line-by-line."""
    end = data.rfind(b"\n") + 1
    body, tail = data[:end], data[end:]
    skipped: list[bytes] = []
    with _gc_paused():
        try:
            # Fast path: one json.loads over the whole body turned into an array (the newline
            # separators become commas in one C-level replace).
            dicts = json.loads(b"[" + body[:-1].replace(b"\n", b",") + b"]") if body else []
            if not all(isinstance(d, dict) for d in dicts):
                raise ValueError("a line that is not a JSON object")  # find it line by line
            events = [event_from_dict(d) for d in dicts]
        # a blank or corrupt line somewhere (one nested too deep for json: RecursionError),
        # or one that decodes to no event: line by line, which names it by its number
        except (ValueError, RecursionError, TraceFormatError):
            events = list(_decode_each(body.split(b"\n"), source, skipped))
    valid, torn = end, b""
    if tail.strip():
        try:
            events.append(decode_event_line(tail))  # complete, only its newline is missing
            valid = len(data)
        except FutureTraceVersion as exc:
            raise _placed(exc, f"{source}: its last line") from exc
        except TraceFormatError as exc:
            torn = tail
            _skip(source, f"a torn last line ({len(tail)} bytes): {exc}")
    return TraceRead(events=tuple(events), valid_bytes=valid, torn=torn, skipped=tuple(skipped))


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    # Decoding allocates ~10 objects per line and none of them form cycles; letting the cyclic
    # collector rescan the growing heap every few thousand allocations made 100k-line replays
    # superlinear and ~40% slower.
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _decode_each(lines: Iterable[bytes], source: str, skipped: list[bytes]) -> Iterable[Event]:
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except (ValueError, RecursionError):
            _skip(source, f"unreadable line {number} ({len(line)} bytes)")
            skipped.append(line + b"\n")
            continue
        if not isinstance(data, dict):
            _skip(source, f"line {number}: not a JSON object")
            skipped.append(line + b"\n")
            continue
        try:
            yield event_from_dict(data)
        except TraceFormatError as exc:
            raise _placed(exc, f"{source}: line {number}") from exc


def _placed(exc: TraceFormatError, where: str) -> TraceFormatError:
    """``exc`` naming the file and line, and what the reader can do: it said "unknown event
    kind 'checkpoint' in trace" and no more, so the user could not tell which session's file
    held it, nor that a newer rho-agent had written it. The file is left as it is (a line
    that decodes to no event is never moved aside: it may hold history)."""
    if isinstance(exc, FutureTraceVersion):
        return FutureTraceVersion(f"{where}: {exc}; the file was left as it is")
    return TraceFormatError(
        f"{where}: {exc}. A newer rho-agent may have written it (upgrade rho-agent to read "
        "this session), or the line was edited; the file was left as it is"
    )


TRACE_BYTES = 1 << 30
"""The most a session's trace may hold to be read (resumed, exported, its approvals listed,
watched from its start): read whole, a trace costs its size in memory, several times over
once decoded, and one planted past any size (a sparse trace.jsonl of gigabytes, a gigabyte
row in a PostgreSQL store) made each of those reads fail with MemoryError or be killed. A
session writes far less: each tool's output is cut to 256 KiB, a model's answer to 64 MiB."""


def read_trace(path: Path) -> TraceRead:
    """Read and decode a trace file (missing file: no events; a link, or one past
    ``TRACE_BYTES``: StoreError naming it)."""
    try:
        data = read_bytes(path, limit=TRACE_BYTES)  # never through a link (``confined``)
    except FileNotFoundError:
        return TraceRead(events=(), valid_bytes=0)
    return parse_trace(data, source=str(path))


def state_from_jsonl(source: Path | str | bytes) -> State:
    """Rebuild a session's State from a trace file path or its bytes.

    Messages (compaction included), usage totals, status, pending approvals and the directive
    offset come back exactly; a tool call left without a result gets a synthetic interrupted
    result (``State.from_events`` repairs it) so the next model request is valid.
    """
    if isinstance(source, bytes):
        events = parse_trace(source).events
    else:
        events = read_trace(Path(source)).events
    return State.from_events(events)
