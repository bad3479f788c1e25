"""A session the file store holds open: its trace written all or nothing, synced, closed.

``FileSessionStore`` keeps one per open session; this is the file-level half (descriptors,
fsync, whether the trace still has its name), the store the session-level half.
"""

from __future__ import annotations

import contextlib
import errno
import os
from typing import IO

import attrs

from rho_adapters.store.layout import SessionPaths
from rho_adapters.store.lock import SessionLock
from rho_adapters.store.meta import MetaFile
from rho_adapters.store.reserve import DiskReserve
from rho_domain.errors import StoreError
from rho_domain.run import spelled_whole
from rho_domain.value_methods import value_eq, value_repr

__all__ = ["HeldSession", "what_to_do"]

# A session home that fills up or turns read-only part-way through a run: the error said what
# failed ("No space left on device; none of its 1 events was kept") and stopped there.
_FIXES = {
    errno.ENOSPC: "free space on the disk that holds {dir}",
    errno.EDQUOT: "free space within your disk quota on {dir}",
    errno.EROFS: "make the file system that holds {dir} writable again",
    errno.EFBIG: "raise the file size limit (ulimit -f) or move {dir}",
    # a run under `ulimit -n 11` said only "Too many open files; none of its 1 events was kept"
    errno.EMFILE: "raise this process's open file limit (ulimit -n, 1024 or more)",
    errno.ENFILE: "close programs that hold many files: the system's file table is full",
}


def what_to_do(exc: BaseException, paths: SessionPaths, *, freed: bool = False) -> str:
    """The fix of a write of ``paths``' session that failed for lack of room or of a writable
    disk, with how to go on (what was kept before stays: ``--resume`` continues from it); ""
    for any other failure. ``freed``: the failure let go of the store's reserve, so what it
    failed to write is written with the run's end."""
    cause = exc if isinstance(exc, OSError) else exc.__cause__
    fix = _FIXES.get(cause.errno or 0) if isinstance(cause, OSError) else None
    if fix is None:
        return ""
    after_all = (
        " (to be written with the run's end, in the room rho-agent kept on that disk)"
        if freed
        else ""
    )
    again = f"rho-agent --resume {spelled_whole(paths.id)}"
    return (
        f"{after_all}; {fix.format(dir=paths.dir)}, then `{again}` "
        "continues from the last event kept"
    )


@attrs.define
class HeldSession:
    """An open session as this store holds it: its paths, lock, meta.json and trace file."""

    __repr__ = value_repr
    __eq__ = value_eq

    paths: SessionPaths
    lock: SessionLock
    meta: MetaFile
    trace: IO[bytes]
    # Lines appended since the last fsync: a run's end syncs the trace, and the close that
    # follows it (every one-shot) need not fsync the same bytes a second time. True until the
    # first sync: whatever opening the session wrote (a repaired line) is synced at close.
    unsynced: bool = True
    # the store's room for a run's end: let go by the first write that finds no room
    room: DiskReserve | None = None
    freed_room: bool = False  # the last failed write let go of ``room`` (``what_to_do``)

    def write(self, data: bytes) -> int:
        """Write ``data`` at the trace's end, all of it or none, and return where it began:
        a write that fails part-way (a full disk) is cut off again, and the file object is
        unbuffered, so nothing of it is left to be written a second time by a later flush."""
        fd = self.trace.fileno()
        start = os.lseek(fd, 0, os.SEEK_END)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        except OSError as exc:
            self.cut(start)
            self.no_room(exc)
            raise
        self.unsynced = True
        return start

    def cut(self, size: int) -> None:
        """Cut the trace back to ``size`` bytes (what an append that failed had added)."""
        with contextlib.suppress(OSError):  # the error being raised says what went wrong
            os.ftruncate(self.trace.fileno(), size)

    def sync(self) -> None:
        """Fsync the trace and rewrite meta.json; ``StoreError`` if the trace lost its name."""
        try:
            self.trace.flush()
            os.fsync(self.trace.fileno())
            if not self.named():  # the lines went to a file nobody will find again
                raise StoreError(f"{self.paths.trace} is no longer the trace being written")
            self.unsynced = False
            self.meta.write()
        except OSError as exc:
            self.no_room(exc)
            raise

    def no_room(self, exc: OSError) -> None:
        """A write that failed with ``exc``: for lack of room, the store's reserve is let go,
        so that the run's end the loop writes next (the failed events, the error, run_end,
        meta.json) has room (``reserve.py``)."""
        self.freed_room = self.room is not None and self.room.let_go(exc)

    def named(self) -> bool:
        """Whether ``paths.trace`` still names the file being written: not when the file or
        its directory was removed, moved, or replaced by another of the same name (the lines
        then go to a file without a name, and a new meta.json would describe an empty
        directory). One ``stat`` and one ``fstat``, beside a sync's ``fsync``."""
        try:
            there = os.stat(self.paths.trace, follow_symlinks=False)
        except OSError:
            return False
        here = os.fstat(self.trace.fileno())
        return (there.st_dev, there.st_ino) == (here.st_dev, here.st_ino)

    def close(self) -> None:
        """Flush (and fsync what is unsynced), close the trace, write meta.json, release."""
        with contextlib.suppress(OSError):
            self.trace.flush()
            if self.unsynced:
                os.fsync(self.trace.fileno())
        # The lock is let go whatever fails before it (the directory removed under the
        # session: the trace's close or meta.json's last write): it was popped from the
        # store's open sessions, so nothing else would ever close its descriptor.
        try:
            self.trace.close()
            # meta.stop() writes the final meta.json, not fsynced (like a heartbeat's): the
            # status it carries was synced at the run's end, and "no holder" is what a crash
            # leaves true as well.
            self.meta.stop()
        finally:
            self.lock.release()
