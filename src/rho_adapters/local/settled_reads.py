"""A configuration file parsed once per content: what git's and ssh's configurations name.

Every executor made reads the same configurations again (``git_named``, ``ssh_named``); a
``Session`` per request makes one each time. ``SettledReads.get`` parses a file once per
(path, device, inode, mtime_ns, ctime_ns, size), and remembers the result only once the
file's times are settled (older than ``SETTLED_NS``): a file changed within the filesystem's
clock tick can keep its times and size (git's "racy" entries), so one changed lately is read
again until it is settled. At most ``limit`` files are remembered, the oldest forgotten first.
A path that is missing, not a regular file, past ``max_bytes`` or unreadable gives None.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable
from typing import Generic, TypeVar

_Parsed = TypeVar("_Parsed")
_Key = tuple[str, int, int, int, int, int]

SETTLED_NS = 2_000_000_000
"""Older than this (ns), a change to a file moves its mtime_ns or ctime_ns."""


class SettledReads(Generic[_Parsed]):
    """What ``parse`` makes of each configuration read, remembered per content."""

    def __init__(self, parse: Callable[[str], _Parsed], *, max_bytes: int, limit: int = 256):
        self.parse = parse
        self.max_bytes = max_bytes
        self.limit = limit
        self._kept: dict[_Key, _Parsed] = {}

    def get(self, path: str, now_ns: Callable[[], int]) -> _Parsed | None:
        """``parse`` of the text at ``path`` (read as UTF-8, errors replaced), or None;
        ``now_ns``: the clock that says whether the file's times are settled."""
        try:
            info = os.stat(path)
        except (OSError, ValueError):  # ValueError: a NUL in a name from a configuration
            return None
        if not stat.S_ISREG(info.st_mode) or info.st_size > self.max_bytes:
            return None
        key = (path, info.st_dev, info.st_ino, info.st_mtime_ns, info.st_ctime_ns, info.st_size)
        if (kept := self._kept.get(key)) is not None:
            return kept
        text = _read(path)
        if text is None:
            return None
        parsed = self.parse(text)
        if now_ns() - max(info.st_mtime_ns, info.st_ctime_ns) > SETTLED_NS:
            if len(self._kept) >= self.limit:
                del self._kept[next(iter(self._kept))]
            self._kept[key] = parsed
        return parsed


def _read(path: str) -> str | None:
    """A configuration's text, or None (unreadable)."""
    with contextlib.suppress(OSError), open(path, encoding="utf-8", errors="replace") as file:
        return file.read()
    return None
