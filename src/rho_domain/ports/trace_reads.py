"""Reading a trace again from where a reader stopped, without reading its last line again.

A reader that keeps counts over a trace (a server's listing: ``Tallies``) reads only the lines
appended since its last read, and must notice a trace replaced or rewritten since. It asked
for its last line again and compared the bytes: a last line of 100 MB cost ~0.2 s of CPU per
listing poll per session, and the reader held the 100 MB. Now the store hands out, with each
read, a ``TraceTail``: the last line's number and a short ``check`` only the store reads (the
file store: the file's identity, where the line lies and its first bytes; PostgreSQL: the
row's version), and the next read (``SessionCatalog.trace_reads``) judges the trace against
it, reading only what follows. A trace that no longer holds the tail is read whole
(``restarted``): the reader counts it again from its start.

``reads_by_digest`` is the default for a store without such a check: it reads the last line
again and compares its digest (the reader holds 32 bytes, not the line).
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable, Mapping

import attrs

from rho_domain.errors import StoreError
from rho_domain.value_methods import value_eq, value_hash, value_repr


@attrs.frozen(kw_only=True)
class TraceLine:
    """One persisted event as the store's codec wrote it (a ``trace.jsonl`` line without its
    newline). ``seq`` is its line number, 1 for the first: ``after=seq`` continues after it."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    seq: int
    data: bytes


@attrs.frozen(kw_only=True)
class TraceTail:
    """Where a read of a trace ended: ``seq`` lines (0: none), and the store's ``check`` of
    that point, opaque to the reader (the same store judges it at the next read)."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    seq: int
    check: str


@attrs.frozen(kw_only=True)
class TraceRead:
    """One ``trace_reads`` answer: ``lines`` after the tail asked with, or, when ``restarted``
    (no tail given, or the trace no longer holds it), every line from the first; ``tail`` is
    where the next read starts."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    lines: tuple[TraceLine, ...]
    restarted: bool
    tail: TraceTail


def line_check(line: TraceLine | None) -> TraceTail:
    """The tail after ``line`` (None: no line yet) as ``reads_by_digest`` checks it."""
    if line is None:
        return TraceTail(seq=0, check="")
    return TraceTail(seq=line.seq, check=hashlib.blake2b(line.data, digest_size=16).hexdigest())


Trace = Callable[[str, int], Awaitable[tuple[TraceLine, ...]]]


async def reads_by_digest(
    trace: Trace, tails: Mapping[str, TraceTail | None]
) -> dict[str, TraceRead | None]:
    """``SessionCatalog.trace_reads`` for a store that only reads lines (``trace(id,
    after)``): the tail's line is read again and its digest compared. None for a session
    that cannot be read now (``StoreError``)."""
    found: dict[str, TraceRead | None] = {}
    for session_id, tail in tails.items():
        try:
            found[session_id] = await _read_by_digest(trace, session_id, tail)
        except StoreError:  # SessionNotFound included
            found[session_id] = None
    return found


async def _read_by_digest(trace: Trace, session_id: str, tail: TraceTail | None) -> TraceRead:
    if tail is not None and tail.seq:
        lines = await trace(session_id, tail.seq - 1)
        if lines and line_check(lines[0]) == tail:
            return TraceRead(lines=lines[1:], restarted=False, tail=line_check(lines[-1]))
    lines = await trace(session_id, 0)
    return TraceRead(lines=lines, restarted=True, tail=line_check(lines[-1] if lines else None))
