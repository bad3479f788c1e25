"""Files that get their name only once whole: every file rho-agent replaces or creates whole
(a workspace file the write tools write, a session's ``meta.json``, the server's token file,
and, through ``write_whole``, a file the user names: ``save_agent_config``'s, ``--output``'s
and ``--download``'s).

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
import stat
from collections.abc import Callable


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


_NEW_NAMED = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def replace_whole(
    dir_fd: int, name: str, temp: str, mode: int, fill: Callable[[int], None]
) -> None:
    """Replace (or create) the file ``name`` in the directory open as ``dir_fd`` with what
    ``fill(fd)`` writes (and syncs, if it must): into an unnamed file (``mode`` before the
    umask) linked over ``name`` once whole, or, where the filesystem has none, into the named
    ``temp`` (created new, never through a link) renamed over it. Whatever fails, no
    ``temp`` is left; raises ``OSError``."""
    fd = unnamed(dir_fd, mode)
    named = fd is None
    if fd is None:
        fd = os.open(temp, _NEW_NAMED, mode, dir_fd=dir_fd)
    try:
        try:
            fill(fd)
            if not named:
                link_over(fd, dir_fd, name, temp)
        finally:
            os.close(fd)
        if named:
            replace(temp, dir_fd, name)
    except BaseException:
        if named:
            with contextlib.suppress(OSError):
                os.unlink(temp, dir_fd=dir_fd)
        raise


def write_all(fd: int, data: bytes) -> None:
    """All of ``data`` into ``fd``: a short write (a full disk, a file-size limit) is not
    the end; the error that stops it is raised."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def write_whole(path: str | os.PathLike[str], data: bytes) -> None:
    """Put ``data`` in the file at ``path`` (a link followed, as ``open`` follows it) so that
    a reader or a process killed midway (a full disk, ``RLIMIT_FSIZE``, SIGKILL) sees the old
    file or the new one, never half: before, ``write_text`` cut the old file to nothing first,
    and a failed write left a config, an answer or a download cut short, the old one lost.

    A replaced file keeps its permission bits (a 0600 file is never 0644, not even for an
    instant) and, as far as the process may, its owner; a new one is 0666 less the umask.
    What exists and is no regular file (``/dev/stdout``, a FIFO), or is in a directory this
    process may not create in, is written in place, as before. Raises ``OSError``; the
    directory must exist."""
    target = os.path.realpath(path)
    try:
        old: os.stat_result | None = os.stat(target)
    except FileNotFoundError:
        old = None
    if old is not None and not stat.S_ISREG(old.st_mode):
        _in_place(target, data)
        return
    folder, name = os.path.split(target)
    temp = f".{name}.{os.getpid()}.{os.urandom(6).hex()}.tmp"
    where = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        mode = 0o666 if old is None else 0o600  # the old bits are given before any data
        replace_whole(where, name, temp, mode, lambda fd: _fill(fd, data, old))
    except PermissionError:
        if old is None:
            raise
        _in_place(target, data)  # a writable file in a directory that is not
    finally:
        os.close(where)


def _in_place(target: str, data: bytes) -> None:
    with open(target, "wb") as handle:
        handle.write(data)


def _fill(fd: int, data: bytes, old: os.stat_result | None) -> None:
    """``data`` into ``fd``, given ``old``'s owner and mode first, synced."""
    if old is not None:
        if (old.st_uid, old.st_gid) != (os.geteuid(), os.getegid()):
            with contextlib.suppress(PermissionError):
                os.fchown(fd, old.st_uid, old.st_gid)
        os.fchmod(fd, stat.S_IMODE(old.st_mode) & 0o777)  # no set-user-ID bit carried over
    write_all(fd, data)
    os.fsync(fd)
