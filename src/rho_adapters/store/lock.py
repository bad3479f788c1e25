"""The session lock: one process drives a session at a time.

``fcntl.flock`` on ``<dir>/lock``: the kernel releases it when the process dies (even SIGKILL),
so a crashed session never stays locked. The holder writes its pid and host into the file so
that the next process can say who holds it.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from rho_adapters.store.confined import open_fd
from rho_adapters.store.layout import host_name
from rho_domain.errors import SessionLocked, StoreError


class SessionLock:
    """An exclusive, non-blocking lock on one session directory."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        """True while this object holds the lock."""
        return self._fd is not None

    def acquire(self, session_id: str, *, parent: int | None = None) -> None:
        """Take the lock or raise ``SessionLocked`` naming the process that holds it;
        ``OSError`` naming the lock file, the lock let go, when the holder cannot be written
        into it (a full disk). ``parent``: the session directory already open
        (``confined.parent_fd``)."""
        try:
            # never through a link: a lock linked to another file would be truncated below
            fd = open_fd(self._path, os.O_RDWR | os.O_CREAT, 0o600, parent=parent)
        except OSError as exc:
            raise StoreError(f"cannot open lock file {self._path}: {exc}") from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 200, 0).decode(errors="replace").strip() or "another process"
            os.close(fd)
            raise SessionLocked(
                f"session {session_id} is already being driven by {holder}; "
                f"stop that process (rho-agent monitor cancel {session_id}) or wait for it to "
                "finish"
            ) from None
        except OSError as exc:
            os.close(fd)
            raise StoreError(f"cannot lock {self._path}: {exc}") from exc
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"pid {os.getpid()} on {host_name()}\n".encode(), 0)
        except OSError as exc:
            # a full disk: the descriptor, and with it the lock, was kept by a process whose
            # open had failed; a server then found the session "already being driven" by itself
            # (the caller says what it was doing: creating or opening the session)
            os.close(fd)
            raise OSError(exc.errno, exc.strerror, str(self._path)) from exc
        self._fd = fd

    def release(self) -> None:
        """Drop the lock. Idempotent."""
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        try:
            os.ftruncate(fd, 0)
        finally:
            os.close(fd)  # closing the descriptor releases the flock
