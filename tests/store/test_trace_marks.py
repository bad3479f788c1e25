"""TraceMarks: line-numbered reads of a trace resumed from where the last read ended.

The proof that a read seeks: bytes before the mark are changed in place after a first read;
a read after the mark still gives only the new lines (it never looked back), while a read
from further back (a replay) reads the file from its start and sees the change."""

from __future__ import annotations

from pathlib import Path

import pytest

from rho_adapters.store.layout import SessionPaths
from rho_adapters.store.trace_marks import HEAD, TraceMarks
from rho_domain.errors import StoreError


def _session(tmp_path: Path, *lines: bytes) -> SessionPaths:
    paths = SessionPaths(tmp_path / "s")
    paths.dir.mkdir()
    paths.trace.write_bytes(b"".join(line + b"\n" for line in lines))
    return paths


def test_a_read_after_the_mark_reads_only_what_was_appended(tmp_path: Path) -> None:
    paths = _session(tmp_path, b'{"a":1}', b'{"a":2}', b'{"a":3}')
    marks = TraceMarks()
    assert [line.seq for line in marks.lines_after(paths, 0)] == [1, 2, 3]
    with paths.trace.open("r+b") as handle:  # line 1 changed in place, same size
        handle.write(b'{"x":9}')
    with paths.trace.open("ab") as handle:
        handle.write(b'{"a":4}\n{"a":5')  # a whole line and half of one
    assert [(line.seq, line.data) for line in marks.lines_after(paths, 3)] == [(4, b'{"a":4}')]
    assert marks.last_seq(paths) == 4
    # the line before the mark is read again (a reader checks it still holds what it saw)
    assert [line.seq for line in marks.lines_after(paths, 3)] == [4]
    assert [line.seq for line in marks.lines_after(paths, 2)] == [3, 4]
    # a replay from further back reads from the start: the change is there
    assert marks.lines_after(paths, 0)[0].data == b'{"x":9}'


def test_a_replaced_or_shortened_trace_is_read_from_its_start(tmp_path: Path) -> None:
    paths = _session(tmp_path, b'{"a":1}', b'{"a":2}', b'{"a":3}')
    marks = TraceMarks()
    assert marks.last_seq(paths) == 3
    paths.trace.write_bytes(b'{"b":1}\n')  # shorter than the mark
    assert marks.last_seq(paths) == 1
    assert [line.data for line in marks.lines_after(paths, 0)] == [b'{"b":1}']
    replacement = paths.dir / "new"
    replacement.write_bytes(b'{"c":1}\n{"c":2}\n{"c":3}\n{"c":4}\n')
    replacement.replace(paths.trace)  # another inode, longer than the mark
    assert [line.data for line in marks.lines_after(paths, 3)] == [b'{"c":4}']
    assert marks.lines_after(paths, 0)[0].data == b'{"c":1}'


def test_no_trace_is_no_lines_and_a_link_is_refused(tmp_path: Path) -> None:
    paths = SessionPaths(tmp_path / "s")
    paths.dir.mkdir()
    marks = TraceMarks()
    assert (marks.lines_after(paths, 0), marks.last_seq(paths)) == ((), 0)
    secret = tmp_path / "secret.jsonl"
    secret.write_bytes(b'{"secret":1}\n')
    paths.trace.symlink_to(secret)
    with pytest.raises(StoreError):
        marks.lines_after(paths, 0)
    with pytest.raises(StoreError):
        marks.last_seq(paths)


def test_an_unfinished_last_line_is_looked_at_once_not_at_every_poll(tmp_path: Path) -> None:
    """A trace whose last line never ends (900 MB of it cost 0.8 s of CPU per poll, five polls
    a second for a watch): each poll looks only at what was appended since. The proof, as
    above: a newline put in place inside the bytes already looked at is not seen, so they
    were not read again; the line's end, appended, is."""
    for head in (b"", b'{"a":1}\n'):  # no complete line yet, or one
        paths = SessionPaths(tmp_path / f"s{len(head)}")
        paths.dir.mkdir()
        paths.trace.write_bytes(head + b"x" * 64)  # a line being written
        complete = [1] if head else []
        marks = TraceMarks()
        assert [line.seq for line in marks.lines_after(paths, 0)] == complete
        with paths.trace.open("r+b") as handle:  # inside the unfinished tail, same size
            handle.seek(len(head) + 10)
            handle.write(b"\n")
        assert marks.lines_after(paths, len(complete)) == ()
        assert marks.last_seq(paths) == len(complete)
        assert [line.seq for line in marks.lines_after(paths, 0)] == complete
        with paths.trace.open("ab") as handle:
            handle.write(b'y"}\n{"b":')
        seqs = [line.seq for line in marks.lines_after(paths, len(complete))]
        assert seqs == [len(complete) + 1, len(complete) + 2]  # the newline in place, now read
        assert marks.last_seq(paths) == len(complete) + 2


def test_a_read_after_the_last_line_does_not_read_it_again(tmp_path: Path) -> None:
    """A poll asks from its last line (a watch, a stream): that line is not read again, only
    what follows it (past its first ``HEAD`` bytes, which are compared); a read from just
    before it still gives it."""
    paths = _session(tmp_path, b'{"a":1}', b'{"a":2,"pad":"' + b"x" * HEAD + b'"}')
    marks = TraceMarks()
    assert marks.last_seq(paths) == 2
    with paths.trace.open("r+b") as handle:  # inside line 2, past its head, same size
        handle.seek(8 + HEAD + 2)
        handle.write(b"\n")
    with paths.trace.open("ab") as handle:
        handle.write(b'{"a":3}\n')
    assert [(line.seq, line.data) for line in marks.lines_after(paths, 2)] == [(3, b'{"a":3}')]
    assert marks.last_seq(paths) == 3
    assert [line.seq for line in marks.lines_after(paths, 2)] == [3]


def test_a_trace_rewritten_in_place_past_the_mark_is_read_from_its_start(
    tmp_path: Path,
) -> None:
    """``cp`` over a trace keeps its inode: truncated, then written past the mark before the
    next poll. The read went on from the old offset: its first 'line' was another's tail
    (``1}``) numbered 3. Now the mark's line ends are checked and the trace read again from
    its start; nor does such a trace (or a replaced one) count as a read to do inline."""
    paths = _session(tmp_path, b'{"a":1}', b'{"a":2}')
    marks = TraceMarks()
    assert marks.last_seq(paths) == 2
    assert marks.resumes(paths, 2, within=64)
    with paths.trace.open("r+b") as handle:  # same inode, rewritten longer
        handle.write(b'{"bbbbbbbbbbbb":1}\n{"b":2}\n{"b":3}\n')
    assert not marks.resumes(paths, 2, within=1 << 20)
    assert [(line.seq, line.data) for line in marks.lines_after(paths, 2)] == [(3, b'{"b":3}')]
    assert marks.resumes(paths, 3, within=64)
    with paths.trace.open("ab") as handle:
        handle.write(b"x" * 100 + b"\n")
    assert not marks.resumes(paths, 3, within=64)  # more than that to read: a thread's


def test_past_the_cap_only_the_mark_kept_longest_ago_goes(tmp_path: Path) -> None:
    """At the cap every mark was cleared, even by a kept mark's update: a listing of as many
    sessions as the cap read every trace whole at every poll."""
    sessions = []
    for name in "abc":
        paths = SessionPaths(tmp_path / name)
        paths.dir.mkdir()
        paths.trace.write_bytes(b'{"a":1}\n')
        sessions.append(paths)
    a, b, c = sessions
    marks = TraceMarks(limit=2)
    marks.lines_after(a, 0)
    marks.lines_after(b, 0)
    marks.lines_after(a, 1)  # a mark's update at the cap: b and a stay
    assert [marks.resumes(p, 1, within=0) for p in (a, b)] == [True, True]
    marks.lines_after(b, 1)
    marks.lines_after(c, 0)  # a new mark past the cap: a, kept longest ago, goes
    assert [marks.resumes(p, 1, within=0) for p in sessions] == [False, True, True]
