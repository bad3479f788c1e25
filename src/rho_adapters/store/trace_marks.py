"""TraceMarks: where each session's trace.jsonl was last read up to, so the next read seeks.

A server lists its sessions every two seconds (the dashboard) and tails the traces it streams;
reading a whole trace each time would cost the store's size at every poll. A mark is a line
boundary and that line's number: ``lines_after(paths, after)`` reads from the mark when
``after`` is at or past the line before it (only what was appended since; the last line read
again only for a read from just before it), from the start otherwise (a client replaying
from further back). A poll asks from its last line: a last line of 300 MB, read again at
each poll of a server's stream, cost 0.86 s of CPU a poll on the event loop. A file replaced
(another inode) or grown shorter (rewritten) is read from the start again. Only complete
lines are given: a line being written is read next time, and the bytes of an unfinished
last line are looked at once (``scanned``): each poll reads only what was appended since, so
a trace whose last line never ends (900 MB of it, under the bound) costs a poll what was
appended, not the whole tail again (0.8 s of CPU per poll before: a watch, five polls a
second, took a core, on the server's event loop).

Marks are small (a path's identity, an offset, a number) and capped at ``limit`` sessions:
past it the mark kept longest ago goes (one whole read for that trace when it is read again).
All of them were cleared at once before, and at the cap even a mark's update cleared them:
a listing of as many sessions as the cap re-read every trace whole at every poll.

A line rewritten in place with the same length (its first ``HEAD`` bytes and newlines where
they were) is not read again from a mark, by design: only a stream (which never sends a line
twice) and the listing's counts read from marks, and what decides (a session's detail and
its pending approvals with their digests, an answer, a resume) reads the trace whole
(``load_recording``), so it shows and binds the line as it is now. Noticing it here would
cost what the marks save: the line read again at each poll.
"""

from __future__ import annotations

import os
import threading
from typing import IO

import attrs

from rho_adapters.store.confined import open_file, read_at_most, too_large
from rho_adapters.store.layout import SessionPaths
from rho_adapters.store.trace import TRACE_BYTES
from rho_domain.errors import StoreError
from rho_domain.ports.trace_reads import TraceLine, TraceRead, TraceTail
from rho_domain.value_methods import value_eq, value_hash, value_repr

MARKS_LIMIT = 10_000


@attrs.frozen
class _Mark:
    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    identity: tuple[int, int]  # (device, inode)
    offset: int  # bytes up to the end of line ``seq``
    seq: int
    last: int  # where line ``seq`` starts (``offset`` when seq is 0)
    scanned: int  # the bytes from ``offset`` up to here hold no newline (an unfinished line)
    head: bytes = b""  # line ``seq``'s first bytes (``HEAD``): a line rewritten in place


HEAD = 32
"""Bytes of the mark's line kept and compared (one small pread): its kind and time."""

_SCAN = 1 << 20  # bytes looked at at once for a newline in an unfinished tail


def _newline_between(handle: IO[bytes], start: int, end: int) -> bool:
    """Whether the open file's bytes ``start .. end`` hold a newline, read a chunk at a time
    (the tail may be most of a gigabyte: never held whole)."""
    handle.seek(start)
    while start < end:
        chunk = handle.read(min(_SCAN, end - start))
        if not chunk:
            return False
        if b"\n" in chunk:
            return True
        start += len(chunk)
    return False


def _holds(handle: IO[bytes], info: os.stat_result, mark: _Mark) -> bool:
    """Whether the open trace is still the one ``mark`` was taken on: the same inode, no
    shorter, and a line still ending at the mark and before its last line. A trace
    rewritten in place (``cp`` over it: the same inode, truncated then written) or a new
    file given a freed inode's number, grown past the mark between two polls, passed the
    inode and size checks: the read went on from the old offset, and its first 'line' was
    the tail of another (``1}``) under a number that was not its own."""
    if (info.st_dev, info.st_ino) != mark.identity or info.st_size < mark.offset:
        return False
    fd = handle.fileno()
    if mark.head and os.pread(fd, len(mark.head), mark.last) != mark.head:
        return False  # the line rewritten in place, its newlines where they were
    return all(os.pread(fd, 1, end - 1) == b"\n" for end in (mark.last, mark.offset) if end)


class TraceMarks:
    """Line-numbered reads of trace files, resumed from the last position read (thread-safe)."""

    def __init__(self, *, limit: int = MARKS_LIMIT) -> None:
        self._marks: dict[str, _Mark] = {}
        self._lock = threading.Lock()
        self._limit = limit

    def lines_after(self, paths: SessionPaths, after: int) -> tuple[TraceLine, ...]:
        """The complete lines numbered above ``after`` (1 for the first line; a blank line
        keeps its number). Missing trace: none. Raises ``StoreError`` (a link, unreadable)."""
        first, data = self._read(paths, after)
        lines = data.split(b"\n")[:-1]
        return tuple(
            TraceLine(seq=seq, data=line) for seq, line in enumerate(lines, first) if seq > after
        )

    def resumes(self, paths: SessionPaths, after: int, *, within: int) -> bool:
        """Whether a read after ``after`` would start at this trace's mark (not its start)
        and read no more than ``within`` bytes: a caller reads such a read inline. A trace
        replaced, rewritten or grown by more is not one (it was read whole on the event loop
        because a mark existed)."""
        with self._lock:
            mark = self._marks.get(str(paths.dir))
        if mark is None or after < mark.seq - 1:
            return False
        try:
            with open_file(paths.trace, "rb") as handle:
                info = os.fstat(handle.fileno())
                usable = _holds(handle, info, mark)
        except OSError:
            return False  # the read says what is wrong
        start = mark.last if mark.seq and after == mark.seq - 1 else mark.offset
        return usable and info.st_size - start <= within

    def last_seq(self, paths: SessionPaths) -> int:
        """The number of the last complete line (0: none yet), reading only what is new."""
        first, data = self._read(paths, 1 << 62)
        return first - 1 + data.count(b"\n")

    def tail_read(self, paths: SessionPaths, tail: TraceTail | None) -> TraceRead:
        """``SessionCatalog.trace_reads`` for one trace: the lines after ``tail`` (a tail
        this method gave) when the trace still holds it (``_holds``: the same file, a line
        ending where the tail's did, its first bytes the same), else every line
        (``restarted``). Only what follows the tail is read: the tail's line is not read
        again, and the shared marks are neither used nor moved (a stream's reads move them).
        Raises ``StoreError`` (a link, unreadable, past the bound)."""
        mark = _mark_of(tail)
        after = tail.seq if mark is not None and tail is not None else 0
        first, data, kept, resumed = _read_from(paths, after, mark)
        lines = data.split(b"\n")[:-1]
        found = tuple(TraceLine(seq=seq, data=line) for seq, line in enumerate(lines, first))
        if kept is None:  # no trace (yet), or no line ends in it
            return TraceRead(lines=(), restarted=not resumed, tail=TraceTail(seq=0, check=""))
        return TraceRead(lines=found, restarted=not resumed, tail=_tail_of(kept))

    def _read(self, paths: SessionPaths, after: int) -> tuple[int, bytes]:
        """(the number of the first line in the bytes, the complete lines' bytes) from the
        mark when it may be used, and the mark moved to the end of what was read."""
        with self._lock:
            mark = self._marks.get(str(paths.dir))
        first, data, kept, _ = _read_from(paths, after, mark)
        if kept is not None:
            self._keep(paths, kept)
        return first, data

    def _keep(self, paths: SessionPaths, mark: _Mark) -> None:
        key = str(paths.dir)
        with self._lock:
            self._marks.pop(key, None)  # kept again: now the newest (dicts keep their order)
            while len(self._marks) >= self._limit:
                del self._marks[next(iter(self._marks))]  # the one kept longest ago
            self._marks[key] = mark


def _read_from(
    paths: SessionPaths, after: int, mark: _Mark | None
) -> tuple[int, bytes, _Mark | None, bool]:
    """(the number of the first line in the bytes, the complete lines' bytes, the mark at
    their end, whether the read went on from ``mark``) for a read after ``after``."""
    try:
        with open_file(paths.trace, "rb") as handle:  # never through a link
            info = os.fstat(handle.fileno())
            if info.st_size > TRACE_BYTES:
                # the whole trace's bound, not the mark's: read from a mark, only what
                # followed it was bounded, and a trace grown past the bound in one
                # unfinished line (a sparse file of zeros) was read again, up to a
                # gigabyte into memory, at every listing and poll of the stream
                raise too_large(paths.trace, TRACE_BYTES)
            identity = (info.st_dev, info.st_ino)
            resumed = mark is not None and after >= mark.seq - 1 and _holds(handle, info, mark)
            if mark is None or not resumed:
                mark = _Mark(identity, 0, 0, 0, 0)
            start, first = (mark.offset, mark.seq + 1) if after >= mark.seq else (0, 1)
            if mark.seq and after == mark.seq - 1:
                start, first = mark.last, mark.seq
            scanned = mark.scanned if mark.scanned <= info.st_size else mark.offset
            if not _newline_between(handle, scanned, info.st_size):
                # no line ended since: only the new bytes were looked at
                handle.seek(start)
                data = handle.read(mark.offset - start)
                return first, data, attrs.evolve(mark, scanned=info.st_size), resumed
            handle.seek(start)
            data = read_at_most(handle, paths.trace, TRACE_BYTES)
    except FileNotFoundError:
        return 1, b"", None, False
    except OSError as exc:
        raise StoreError(f"cannot read {paths.trace}: {exc.strerror or exc}") from exc
    end = data.rfind(b"\n") + 1
    count = data.count(b"\n", 0, end)
    if not count:
        return first, b"", None, resumed
    last = data.rfind(b"\n", 0, end - 1) + 1
    head = data[last : min(last + HEAD, end - 1)]
    kept = _Mark(identity, start + end, first - 1 + count, start + last, start + len(data), head)
    return first, data[:end], kept, resumed


def _tail_of(mark: _Mark) -> TraceTail:
    device, inode = mark.identity
    fields = (device, inode, mark.offset, mark.last, mark.scanned)
    return TraceTail(seq=mark.seq, check=":".join(map(str, fields)) + ":" + mark.head.hex())


def _mark_of(tail: TraceTail | None) -> _Mark | None:
    """The mark ``_tail_of`` wrote as ``tail``'s check (None: no tail, or not one of ours)."""
    if tail is None or not tail.check:
        return None
    try:
        *numbers, head = tail.check.split(":")
        device, inode, offset, last, scanned = map(int, numbers)
        return _Mark((device, inode), offset, tail.seq, last, scanned, bytes.fromhex(head))
    except ValueError:
        return None
