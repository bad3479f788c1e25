"""Configuration files read and parsed once per content, for every executor of the process.

Each ``LocalExecutor`` reads the git and ssh configurations of its machine and workspace to
find the credential files they name (``local/git_named.py``, ``local/ssh_named.py``); a
service making an executor per request read and parsed the same few files each time.
``SettledReads(parse).read(path, now_ns)`` keeps ``parse(text)`` by the file's path and what
the ``fstat`` of the file it opened says of its content (device, inode, ``mtime_ns``,
``ctime_ns``, size): a change misses. The file is opened first and judged open, so the key and
the text are one file's: a ``stat`` by path then an ``open`` by path could key the parse of a
file swapped in between (a link or a rename) by the identity of the one swapped out, and every
later executor would take that parse for the first file's (redshell26). A file changed within
the filesystem's clock tick can keep its times and size (git's "racy" entries), so one changed
in the last two seconds is read again until it is settled.

Contract: ``read`` returns None for a missing path or one that is no regular file (opened
only when a ``stat`` says regular, without waiting, then judged open: a FIFO swapped in never
blocks), raises ``ExecutorError`` past ``MAX_CONFIG_BYTES``
(``git_named_files.too_large``: git and ssh read a file whole, so a part left unread fails
closed), and keeps at most ``MAX_KEPT`` results, the oldest forgotten first.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from typing import Generic, TypeVar

from rho_domain.git_named_files import MAX_CONFIG_BYTES, too_large

T = TypeVar("T")
MAX_KEPT = 256  # a process sees a few configurations: git's own and its users'
SETTLED_NS = 2_000_000_000  # older than this, a change moves mtime_ns or ctime_ns


class SettledReads(Generic[T]):
    """``parse``'s result for each configuration's content (see the module docstring)."""

    def __init__(self, parse: Callable[[str], T]) -> None:
        self._parse = parse
        self._kept: dict[tuple[str, int, int, int, int, int], T] = {}

    def read(self, path: str, now_ns: Callable[[], int]) -> T | None:
        """``parse`` of the text at ``path`` (decoded as UTF-8, errors replaced), or None."""
        try:
            # a path that is no regular file now is not opened (a device may act on open)
            if not stat.S_ISREG(os.stat(path).st_mode):
                return None
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
        except (OSError, ValueError):
            return None
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                return None
            if info.st_size > MAX_CONFIG_BYTES:
                raise too_large(path)
            key = (path, info.st_dev, info.st_ino, info.st_mtime_ns, info.st_ctime_ns, info.st_size)
            if (found := self._kept.get(key)) is not None:
                return found
            data = _whole(fd)
        except OSError:
            return None
        finally:
            os.close(fd)
        found = self._parse(data.decode("utf-8", "replace"))
        if now_ns() - max(info.st_mtime_ns, info.st_ctime_ns) > SETTLED_NS:
            if len(self._kept) >= MAX_KEPT:
                del self._kept[next(iter(self._kept))]
            self._kept[key] = found
        return found


def _whole(fd: int) -> bytes:
    """At most ``MAX_CONFIG_BYTES`` of the open file ``fd``: a file grown past the bound
    since its ``fstat`` is read to the bound, as the size judged."""
    chunks: list[bytes] = []
    while (left := MAX_CONFIG_BYTES - sum(map(len, chunks))) > 0 and (chunk := os.read(fd, left)):
        chunks.append(chunk)
    return b"".join(chunks)
