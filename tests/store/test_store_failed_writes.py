"""An append the file store could not complete takes none of its lines.

The journal appends a batch again when the store raises (``SessionStore.append``: a failure
means none was taken), so whatever a failed append left in the trace would be there twice:
lines written before an fsync failed, or the part of a batch written before the disk was
full (a buffered file also kept the rest, and wrote it at its next flush). Both are driven
here: an fsync that fails once (an I/O error) and a file-size limit that stops a write
part-way (what a full disk does), each lifted before the session closes and retries.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import resource
import subprocess
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from store_support import build_session

from rho_adapters.fakes import text
from rho_adapters.store import FileSessionStore
from rho_domain import events as ev
from rho_domain.config import AgentConfig
from rho_domain.errors import StoreError
from rho_domain.messages import UserMessage
from rho_domain.ports.store import SessionRecord


def lines_of(trace: Path) -> list[str]:
    return trace.read_text().splitlines()


def assert_each_once(trace: Path) -> None:
    lines = lines_of(trace)
    for line in lines:
        json.loads(line)  # every line whole
    twice = [line for line, count in Counter(lines).items() if count > 1]
    assert twice == [], twice


async def test_a_failed_fsync_leaves_its_lines_to_the_retry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = os.fsync
    failed: list[int] = []

    def failing_once(fd: int) -> None:
        path = Path(os.readlink(f"/proc/self/fd/{fd}"))
        if path.name == "trace.jsonl" and not failed and b'"run_end"' in path.read_bytes():
            failed.append(fd)
            raise OSError(errno.EIO, "Input/output error")
        real(fd)

    monkeypatch.setattr(os, "fsync", failing_once)
    store = FileSessionStore(tmp_path)
    session = build_session([text("done")], store=store, session_id="s1")
    async with session:
        await session.run("go", run_id="r1")
    assert failed, "the run's end was never synced"
    trace = tmp_path / "s1" / "trace.jsonl"
    assert_each_once(trace)
    assert sum('"run_end"' in line for line in lines_of(trace)) == 1


async def test_a_write_cut_short_by_a_full_disk_is_written_once_later(tmp_path: Path) -> None:
    store = FileSessionStore(tmp_path)
    session = build_session([text("done")], store=store, session_id="s2")
    async with session:
        await session.run("go", run_id="r1")
    await store.open("s2")  # held again, as a resumed session holds it
    trace = tmp_path / "s2" / "trace.jsonl"
    size = trace.stat().st_size
    batch = [
        ev.MessageAdded(at=1.0, message=UserMessage(f"a message long enough to be cut {i}"))
        for i in range(3)
    ]
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (size + 40, hard))  # room for part of a line
    try:
        with pytest.raises(StoreError) as refused:
            await store.append("s2", batch)
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    # where the disk is full is said: the session's id alone did not say which filesystem
    assert str(refused.value) == (
        f"cannot write the trace of session s2 ({trace}): File too large; none of its 3 events "
        f"was written; raise the file size limit (ulimit -f) or move {trace.parent}, then "
        "`rho-agent --resume =s2` continues from the last event kept"
    )
    await store.append("s2", batch)  # the journal's next attempt
    await store.append("s2", [ev.MessageAdded(at=2.0, message=UserMessage("after"))])
    await store.release("s2")
    assert_each_once(trace)
    _, events = await store.open("s2")
    added = [e.message for e in events[-4:] if isinstance(e, ev.MessageAdded)]
    assert [m.content for m in added if isinstance(m, UserMessage)] == [
        *(f"a message long enough to be cut {i}" for i in range(3)),
        "after",
    ]
    await store.release("s2")


async def test_a_failed_sync_says_how_many_events_were_not_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: a run on a full disk whose sync failed said only "cannot sync session s3
    (.../trace.jsonl): No space left on device"; the lines were taken back (the journal
    appends them again) and, the disk still full at the end, lost, unsaid. A failed write
    said "none of its N events was written"; a failed sync now says as much."""
    store = FileSessionStore(tmp_path)
    session = build_session([text("done")], store=store, session_id="s3")
    async with session:
        await session.run("go", run_id="r1")
    trace = tmp_path / "s3" / "trace.jsonl"
    ended = [e for e in store_events(trace) if e.kind == "run_end"]
    await store.open("s3")
    kept = trace.read_bytes()

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    fix = (
        f"; free space on the disk that holds {trace.parent}, then `rho-agent --resume =s3` "
        "continues from the last event kept"
    )
    with pytest.raises(StoreError) as info:
        await store.append("s3", ended)
    # the first lets go of the store's reserve (store/reserve.py) for the run's end
    assert str(info.value) == (
        f"cannot sync session s3 ({trace}): No space left on device; none of its 1 events was "
        "kept (to be written with the run's end, in the room rho-agent kept on that "
        f"disk){fix}"
    )
    with pytest.raises(StoreError) as info:
        await store.append("s3", ended)
    assert str(info.value) == (
        f"cannot sync session s3 ({trace}): No space left on device; none of its 1 events was "
        f"kept{fix}"
    )
    assert trace.read_bytes() == kept  # taken back: the journal appends them again
    monkeypatch.undo()
    await store.release("s3")


def store_events(trace: Path) -> list[ev.Event]:
    from rho_adapters.store.trace import read_trace

    return list(read_trace(trace).events)


@contextlib.contextmanager
def small_disk(mountpoint: Path, size: str) -> Iterator[Path]:
    """A tmpfs of ``size`` ("64k", "1m") mounted on ``mountpoint`` (made here) while the
    block runs, unmounted after; the test is skipped where no tmpfs can be mounted."""
    mountpoint.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mountpoint)],
        capture_output=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        yield mountpoint
    finally:
        subprocess.run(["umount", "--lazy", str(mountpoint)], check=False)


def fill(disk: Path) -> None:
    """Fill ``disk`` to its last byte (a file named ``fill``, written until it is full)."""
    with contextlib.suppress(OSError), (disk / "fill").open("wb", buffering=0) as out:
        for size in (65536, 4096, 1):
            while True:
                out.write(b"\0" * size)


async def test_a_full_disk_at_open_leaves_the_session_unlocked(tmp_path: Path) -> None:
    """Opening a session on a full disk failed writing the holder into its lock file after
    taking the lock, and kept the descriptor: the process then held its own session, and a
    server's next open once space was freed said "already being driven by another
    process". The failure now lets go of the lock and names the lock file."""
    with small_disk(tmp_path / "home", "64k") as home:
        store = FileSessionStore(home / "sessions")
        await store.create(SessionRecord(id="s1", created_at=1.0, config=AgentConfig()))
        await store.release("s1")
        fill(home)
        with pytest.raises(StoreError) as refused:
            await store.open("s1")
        lock = home / "sessions" / "s1" / "lock"
        assert str(refused.value) == (f"cannot open session s1: No space left on device ({lock})")
        (home / "fill").unlink()
        await store.open("s1")  # before: SessionLocked, by this very process
        await store.release("s1")


async def test_the_reserve_for_a_runs_end_is_unnamed_and_let_go_with_the_last_session(
    tmp_path: Path,
) -> None:
    """The room kept for a run's end (store/reserve.py) is an unnamed file on the sessions'
    disk, held while the store holds a session: no name in any directory, its descriptor
    closed when the last session is released (a store per test, a server's store per
    client, would otherwise keep one each for good)."""

    def reserves() -> list[str]:
        fds = Path("/proc/self/fd")
        links = [os.readlink(fd) for fd in fds.iterdir() if fd.is_symlink()]
        # in the first session's directory: the disk each session is on holds one
        return [link for link in links if link.startswith(f"{tmp_path}/s1/#")]

    store = FileSessionStore(tmp_path)
    await store.create(SessionRecord(id="s1", created_at=1.0, config=AgentConfig()))
    await store.create(SessionRecord(id="s2", created_at=1.0, config=AgentConfig()))
    assert [r.endswith("(deleted)") for r in reserves()] == [True]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s1", "s2"]
    await store.release("s1")
    assert len(reserves()) == 1  # s2 may still need it
    await store.release("s2")
    assert reserves() == []


async def test_the_room_for_a_runs_end_is_kept_on_the_sessions_own_disk(tmp_path: Path) -> None:
    """probecorners24b: the store kept its one reserve on its root's disk, and a session
    opened by its path (``--resume /mnt/other/ID``) can be on another. When that disk
    filled, the room let go was on the root's disk: the failure said its events were "to
    be written with the run's end, in the room rho-agent kept on that disk", and the run's
    end failed as well. The reserve is now held on each session's own disk."""
    with small_disk(tmp_path / "other", "1m") as other:
        made = FileSessionStore(other / "sessions")
        async with build_session([text("done")], store=made, session_id="s1") as session:
            await session.run("go", run_id="r1")
        trace = other / "sessions" / "s1" / "trace.jsonl"
        ended = [e for e in store_events(trace) if e.kind == "run_end"] * 40  # > a page
        store = FileSessionStore(tmp_path / "home")
        (tmp_path / "home").mkdir()
        await store.open(str(trace.parent))
        fill(other)
        with pytest.raises(StoreError, match="to be written with the run's end"):
            await store.append("s1", ended)
        await store.append("s1", ended)  # the run's end: before, No space left on device
        await store.release("s1")


async def test_the_room_for_a_runs_end_is_kept_where_the_disk_has_no_unnamed_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """corners25: where the filesystem has no ``O_TMPFILE`` (overlayfs before Linux 6.6, NFS,
    FUSE: ``open`` says EOPNOTSUPP, injected here at that one call on a real small tmpfs),
    the store kept no reserve, and a run's end on a full disk was lost: the failed write
    did not say it would be written with the end, and the end failed with No space left on
    device. The reserve is now a hidden file unlinked at once; one a killed process left
    named is removed by the session's next holder."""
    real_open = os.open

    def no_unnamed_files(path: str, flags: int, *args: object, **kwargs: object) -> int:
        if flags & os.O_TMPFILE == os.O_TMPFILE:
            raise OSError(errno.EOPNOTSUPP, "Operation not supported")
        return real_open(path, flags, *args, **kwargs)  # type: ignore[arg-type]

    with small_disk(tmp_path / "home", "1m") as home:
        monkeypatch.setattr(os, "open", no_unnamed_files)
        store = FileSessionStore(home / "sessions")
        async with build_session([text("done")], store=store, session_id="s1") as session:
            await session.run("go", run_id="r1")
        trace = home / "sessions" / "s1" / "trace.jsonl"
        ended = [e for e in store_events(trace) if e.kind == "run_end"] * 40  # > a page
        left = trace.parent / ".reserve.1.0a0b.tmp"  # a process killed before its unlink
        left.write_bytes(b"")
        await store.open("s1")
        assert sorted(p.name for p in trace.parent.iterdir()) == [
            "config.yaml",
            "lock",
            "meta.json",
            "trace.jsonl",
        ]
        fill(home)
        with pytest.raises(StoreError, match="to be written with the run's end"):
            await store.append("s1", ended)
        await store.append("s1", ended)  # the run's end: before, No space left on device
        await store.release("s1")
        monkeypatch.undo()


async def test_a_sync_out_of_descriptors_says_what_to_raise(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """corners25: a one-shot under ``ulimit -n 11`` failed with "cannot sync session ID
    (.../trace.jsonl): Too many open files; none of its 1 events was kept" and no word of
    what to change (EMFILE was not among the store's fixes; the sandbox's refusal at 10
    named the limit). It now says which limit, and how to go on."""
    store = FileSessionStore(tmp_path)
    session = build_session([text("done")], store=store, session_id="s4")
    async with session:
        await session.run("go", run_id="r1")
    trace = tmp_path / "s4" / "trace.jsonl"
    ended = [e for e in store_events(trace) if e.kind == "run_end"]
    await store.open("s4")

    def out_of_descriptors(fd: int) -> None:
        raise OSError(errno.EMFILE, "Too many open files")

    monkeypatch.setattr(os, "fsync", out_of_descriptors)
    with pytest.raises(StoreError) as info:
        await store.append("s4", ended)
    monkeypatch.undo()
    assert str(info.value) == (
        f"cannot sync session s4 ({trace}): Too many open files; none of its 1 events was "
        "kept; raise this process's open file limit (ulimit -n, 1024 or more), then "
        "`rho-agent --resume =s4` continues from the last event kept"
    )
    await store.release("s4")
