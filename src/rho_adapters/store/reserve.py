"""Room kept on the session home's disk for the records that say how a run ended.

A disk that fills up part-way through a run (a tool's output, another program) failed the
store's next write, and every write after it: the run's ``error`` and ``run_end`` events and
meta.json's last status were the writes that failed, so readers (``--list``, ``monitor
ps``, the server) saw the session ``running`` (its holder gone: stale) rather than ended
with an error, and the events the failed write carried were lost.

``DiskReserve`` holds ``RESERVE_BYTES`` of that disk in an unnamed file (``O_TMPFILE``,
allocated with ``posix_fallocate``): no name in the directory, nothing left behind by a
crash, one descriptor per store and disk while it holds a session there
(``FileSessionStore.release`` of its last there lets it go). The disk is each session's own
(``DiskRooms``): one opened by its path (``--resume /mnt/other/ID``) is on another disk than
the store's root. The first write that fails for lack of room lets it go
(``let_go``), so that the run's end, which the loop writes next (the failed events still
queued, the error, ``run_end``, meta.json), finds room. The disk is shared: another program
may take that room first; then the end is lost as before. Held again at the next session
the store holds (``hold``), when there is room. When the disk has no room already, there is
no reserve.

Where the filesystem has no ``O_TMPFILE`` (overlayfs before Linux 6.6, NFS, most FUSE
filesystems), the reserve is a hidden file created in the session's directory and unlinked at
once, before any room is taken: an open file without a name keeps its blocks until it is
closed, as an unnamed one does. Before, there was no reserve there, and a run's end on a full
disk was lost. A process killed between the create and the unlink (two calls) leaves an empty
``.reserve.PID.HEX.tmp``: it is made only while the store holds that session's lock, and the
next holder removes it (``leftovers.remove_left_temps``). NFS and FUSE keep an unlinked open
file under a name of their own (``.nfs...``, ``.fuse_hidden...``) until it is closed.
"""

from __future__ import annotations

import contextlib
import errno
import os
import threading
from pathlib import Path

from rho_adapters.unnamed import unnamed

# a run's end: the batch whose write failed (parallel tool results of up to 20,000 characters,
# each twice: tool_end and its message), the error, run_end, meta.json
RESERVE_BYTES = 256 * 1024
NO_ROOM = frozenset({errno.ENOSPC, errno.EDQUOT})
LEFT_NAME = ".reserve."  # a named reserve's prefix, as a process killed before unlinking left it
_NEW = os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


class DiskReserve:
    """``RESERVE_BYTES`` held on one directory's disk until a write finds no room there.
    Thread-safe: the store writes from the loop's thread and from worker threads."""

    def __init__(self, size: int = RESERVE_BYTES) -> None:
        self.size = size
        self._fd: int | None = None
        self._lock = threading.Lock()

    @property
    def held(self) -> bool:
        """Whether the room is held now."""
        return self._fd is not None

    def hold(self, directory: Path) -> None:
        """Hold the room in ``directory``'s filesystem unless it is held; never raises (no
        ``O_TMPFILE``, no room, no directory: no reserve)."""
        with self._lock:
            if self._fd is not None:
                return
            with contextlib.suppress(OSError):
                parent = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
                try:
                    fd = unnamed(parent, 0o600)
                    if fd is None:
                        fd = _unlinked(parent)
                finally:
                    os.close(parent)
                try:
                    os.posix_fallocate(fd, 0, self.size)
                except OSError:
                    os.close(fd)
                    return
                self._fd = fd

    def let_go(self, exc: BaseException | None = None) -> bool:
        """Free the room (the unnamed file closed: its blocks return to the disk) when
        ``exc`` is a lack of room (``NO_ROOM``), or always when ``exc`` is None; True when
        room was freed by this call."""
        if exc is not None and not (isinstance(exc, OSError) and exc.errno in NO_ROOM):
            return False
        with self._lock:
            fd, self._fd = self._fd, None
        if fd is None:
            return False
        with contextlib.suppress(OSError):
            os.close(fd)
        return True


def _unlinked(parent: int) -> int:
    """A new empty file open for writing in the directory ``parent``, its name (hidden, new,
    never through a link) removed already; raises ``OSError``."""
    name = f"{LEFT_NAME}{os.getpid()}.{os.urandom(6).hex()}.tmp"
    fd = os.open(name, _NEW, 0o600, dir_fd=parent)
    try:
        os.unlink(name, dir_fd=parent)
    except OSError:
        os.close(fd)  # the empty name left is removed by the session's next holder
        raise
    return fd


class DiskRooms:
    """A store's reserves, one per disk (device) its held sessions are on."""

    def __init__(self) -> None:
        self._by_device: dict[int, DiskReserve] = {}

    def hold(self, directory: Path) -> DiskReserve | None:
        """The reserve on the disk that holds ``directory``, held now if it can be (see
        ``DiskReserve.hold``); None when ``directory`` cannot be looked at. Before, the
        store's one reserve was on its root's disk: a session on another filled its disk,
        the room let go was elsewhere, and the failure said the run's end would be written
        in it; that end failed as before."""
        try:
            device = os.stat(directory).st_dev
        except OSError:
            return None
        room = self._by_device.setdefault(device, DiskReserve())
        room.hold(directory)
        return room
