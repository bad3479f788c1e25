"""Files that get their name only once whole: every file rho-agent replaces or creates whole
(a workspace file the write tools write, a session's ``meta.json``, the server's token file).

The data goes into an unnamed file in the target's directory (``O_TMPFILE``), which is then
linked to its name (``linkat`` through ``/proc/self/fd``: ``AT_EMPTY_PATH`` would need
CAP_DAC_READ_SEARCH). A process killed while writing (SIGKILL, the OOM killer, a full
``RLIMIT_FSIZE``) leaves no name behind: before, the named temp file it was filling stayed in
the directory for good (``.x.rho-tmp`` in a workspace, shown by ``list`` and ``glob``;
``.meta.json.PID.HEX.tmp`` in a session; the token itself, in a file beside the token's).
A replacement links the whole file to a temp name and renames it over the target at once, so
only a kill between those two calls can leave the temp name.

Where the filesystem has no ``O_TMPFILE`` (or ``/proc`` is not mounted), ``unnamed`` says so
(None) and the caller writes a named temp file as before.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os


@functools.cache
def _proc_fds() -> bool:
    return os.path.isdir("/proc/self/fd")


def unnamed(dir_fd: int, mode: int) -> int | None:
    """A new unnamed file open for writing in the directory open as ``dir_fd`` (``mode``
    before the umask, as ``O_CREAT`` takes it), or None where the filesystem (or a kernel
    before 3.11) has none. Other ``OSError`` are raised."""
    if not hasattr(os, "O_TMPFILE") or not _proc_fds():
        return None
    try:
        return os.open(".", os.O_TMPFILE | os.O_WRONLY | os.O_CLOEXEC, mode, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno in (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL):
            return None
        raise


def link(fd: int, dir_fd: int, name: str) -> None:
    """Name the whole unnamed file ``fd`` ``name`` in the directory ``dir_fd``; raises
    ``FileExistsError`` when the name is taken (by anything, a dangling link included)."""
    os.link(f"/proc/self/fd/{fd}", name, dst_dir_fd=dir_fd, follow_symlinks=True)


def link_over(fd: int, dir_fd: int, name: str, temp: str) -> None:
    """Put the whole unnamed file ``fd`` in the place of ``name`` (which may exist): linked
    as ``temp``, renamed over ``name``; ``temp`` is removed when the rename fails."""
    link(fd, dir_fd, temp)
    replace(temp, dir_fd, name)


def replace(temp: str, dir_fd: int, name: str) -> None:
    """Rename ``temp`` over ``name`` in the directory ``dir_fd``; on failure remove ``temp``."""
    try:
        os.replace(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temp, dir_fd=dir_fd)
        raise
