"""Session files opened inside their session directory, never through a link.

A session directory is data that whoever can write it controls: ``trace.jsonl`` may be a
symbolic link to ``~/.bashrc``, ``lock`` one to a file the next open would truncate, the
directory itself a link to somewhere else. Every session file is therefore opened here:

- the session directory (and ``exports`` below it) is opened with ``O_DIRECTORY |
  O_NOFOLLOW``: a directory that is a link is refused, whatever it points to; the sessions
  root above it is the user's own configuration and is taken as it is;
- the file is opened relative to that descriptor (``dir_fd=``) with ``O_NOFOLLOW``, so the
  name is looked up in that directory and a link is refused (``ELOOP``), dangling or not;
- what was opened must be a regular file, and one we write must have a single name (a hard
  link would make an append land in a file outside the directory too).

A refusal is a ``StoreError`` naming the file; a missing file stays ``FileNotFoundError``.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from rho_domain.errors import StoredPastBound, StoreError

_NOFOLLOW = os.O_NOFOLLOW | os.O_CLOEXEC
_WRITES = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC


class LinkRefused(StoreError):
    """A session file or directory is a link (or not a plain file): it is not followed."""


def _refused(path: Path, what: str) -> LinkRefused:
    return LinkRefused(
        f"{path}: {what}; session files are opened only inside their session directory, "
        "never through a link (remove it, or restore the file the session wrote)"
    )


@contextlib.contextmanager
def directory_fd(directory: Path, levels: int = 1) -> Iterator[int]:
    """A descriptor of ``directory`` whose last ``levels`` components were opened without
    following links (1: the session directory; 2: ``<session>/exports``)."""
    base, tail = _split(directory, levels)
    fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for name in tail:
            try:
                child = os.open(name, os.O_RDONLY | os.O_DIRECTORY | _NOFOLLOW, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise _refused(Path(base, name), "is a link or not a directory") from None
                raise
            os.close(fd)
            fd = child
            base = os.path.join(base, name)
        yield fd
    finally:
        os.close(fd)


def _split(directory: Path, levels: int) -> tuple[str, list[str]]:
    """The part of ``directory`` taken as it is and its last ``levels`` names, as
    ``directory.parts`` splits them, by string (a session's files open its directory about
    eight times a session, in the store's worker threads: no ``Path`` built each time)."""
    head, tail = os.fspath(directory), []
    for _ in range(levels):
        parent, name = os.path.split(head)
        if not name:  # the root: nothing more to take without following
            break
        head = parent
        tail.append(name)
    tail.reverse()
    return head or ".", tail


@contextlib.contextmanager
def parent_fd(path: Path, levels: int = 1, parent: int | None = None) -> Iterator[int]:
    """``parent`` when given (``path.parent`` as ``directory_fd(path.parent, levels)``
    already opened it, left open), else ``directory_fd(path.parent, levels)``: several files
    of one directory are opened with one walk of its path (a session's creation opens four)."""
    if parent is not None:
        yield parent
        return
    with directory_fd(path.parent, levels) as opened:
        yield opened


def open_fd(
    path: Path, flags: int, mode: int = 0o600, *, levels: int = 1, parent: int | None = None
) -> int:
    """``os.open`` of the session file ``path`` (see the module docstring); the caller
    closes the descriptor. ``O_NONBLOCK`` is added so that a FIFO planted under a session
    file's name cannot block the open; it is refused right after. ``O_TRUNC`` is applied
    only once the file passed the checks: truncating at the open would empty a hard-linked
    file outside the directory before its refusal. ``parent``: see ``parent_fd``."""
    truncate = bool(flags & os.O_TRUNC)
    flags &= ~os.O_TRUNC
    with parent_fd(path, levels, parent) as opened:
        try:
            fd = os.open(path.name, flags | _NOFOLLOW | os.O_NONBLOCK, mode, dir_fd=opened)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise _refused(path, "is a symbolic link") from None
            if exc.errno == errno.EISDIR:
                raise _refused(path, "is a directory") from None
            raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _refused(path, "is not a regular file")
        if (flags & _WRITES or truncate) and info.st_nlink > 1:
            raise _refused(path, f"has {info.st_nlink} hard links")
        if truncate:
            os.ftruncate(fd, 0)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


_MODES = {  # open_file's mode: the flags, and the mode os.fdopen takes for them
    "rb": (os.O_RDONLY, "rb"),
    "ab": (os.O_WRONLY | os.O_APPEND | os.O_CREAT, "ab"),
    "a+b": (os.O_RDWR | os.O_APPEND | os.O_CREAT, "a+b"),
    "r+b": (os.O_RDWR, "rb+"),
    "wb": (os.O_WRONLY | os.O_CREAT | os.O_TRUNC, "wb"),
    "xb": (os.O_WRONLY | os.O_CREAT | os.O_EXCL, "wb"),
    "xab": (os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_EXCL, "ab"),
}


def open_file(
    path: Path, mode: str, *, levels: int = 1, buffering: int = -1, parent: int | None = None
) -> IO[bytes]:
    """A binary file object for a session file: ``rb``, ``ab``, ``a+b``, ``r+b``, ``wb``
    (truncate or create), ``xb`` (create, refusing any existing name, link included) or
    ``xab`` (as ``xb``, then appended to); ``buffering`` as ``open``'s (0: the raw file, each
    write a system call); ``parent``: see ``parent_fd``."""
    flags, fdopen_mode = _MODES[mode]
    fd = open_fd(path, flags, levels=levels, parent=parent)
    handle: IO[bytes] = os.fdopen(fd, fdopen_mode, buffering=buffering)
    return handle


def read_bytes(path: Path, *, levels: int = 1, limit: int | None = None) -> bytes:
    """The whole content of a session file. ``limit``: the most bytes it may hold; past it
    a ``StoreError`` naming the file, with no more than ``limit + 1`` bytes read (a sparse
    file of gigabytes costs no disk, and read whole it cost its size in memory)."""
    with open_file(path, "rb", levels=levels) as handle:
        return handle.read() if limit is None else read_at_most(handle, path, limit)


def read_at_most(
    handle: IO[bytes], path: Path, limit: int, *, writer: str = "the session"
) -> bytes:
    """The rest of the open file ``path``, reading no more than ``limit + 1`` bytes; past
    ``limit`` a ``StoreError`` naming it and who writes it (``writer``). A regular file whose
    size already says so is refused before any byte is read. Memory goes with what the file
    holds, not with ``limit`` (``read(limit + 1)`` allocates all of it first)."""
    info = os.fstat(handle.fileno())
    left = info.st_size - handle.tell() if stat.S_ISREG(info.st_mode) else 0
    if left > limit:
        raise too_large(path, limit, writer)
    data = handle.read(max(left, 0) + 1)  # its last byte: the file grew since, or not
    if len(data) <= left:
        return data
    grown = bytearray(data)
    while len(grown) <= limit and (more := handle.read(min(1 << 20, limit + 1 - len(grown)))):
        grown += more
    if len(grown) > limit:
        raise too_large(path, limit, writer)
    return bytes(grown)


def too_large(path: Path, limit: int, writer: str = "the session") -> StoredPastBound:
    """The refusal of the file ``path``, past ``limit`` bytes (``read_at_most``'s)."""
    return StoredPastBound(
        f"{path}: more than {limit} bytes, far more than rho-agent writes there; not read "
        f"(remove it, or restore the file {writer} wrote)"
    )


def touch(path: Path, *, levels: int = 1) -> None:
    """Create the sentinel file ``path`` if it is missing (never through a link)."""
    os.close(open_fd(path, os.O_WRONLY | os.O_CREAT, levels=levels))


def is_link(path: Path) -> bool:
    """True when ``path`` itself is a symbolic link."""
    return path.is_symlink()
