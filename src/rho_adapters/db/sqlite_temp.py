"""The temporary disk a SQLite statement writes, bounded: SQLite has no setting for it.

A sort, DISTINCT or GROUP BY over more rows than the page cache holds spills to temporary
files (``etilqs_*`` in ``SQLITE_TMPDIR``, ``TMPDIR`` or ``/var/tmp``, unlinked as soon as they
are opened, so no directory listing shows them): a recursive CTE ordered by a random blob
wrote 523 MB in 10 s and went on writing until the statement's time limit, a disk's worth in
a long one. ``TempDisk.over``, asked by the statement's progress handler, measures what the
temporary files SQLite holds open in this process occupy (through their descriptors in
``/proc/self/fd``), at most every ``EVERY`` seconds, so a statement is stopped within about
that long of passing its limit, and a short one never pays for a look.

The measure is the process's: another SQLite statement's temporary files in the same
process count too (a bound on the whole, which holds for each). Where ``/proc/self/fd`` does
not exist (not Linux) nothing is measured and only the time limit bounds the disk.
"""

from __future__ import annotations

import os

EVERY = 0.05  # seconds between two measures of one statement's temporary files
_FDS = "/proc/self/fd"
_PREFIX = "etilqs_"  # SQLITE_TEMP_FILE_PREFIX: every temporary file SQLite names


def sqlite_temp_bytes() -> int:
    """Bytes on disk of the SQLite temporary files this process has open (0 unknown)."""
    try:
        entries = os.listdir(_FDS)
    except OSError:
        return 0
    total = 0
    for entry in entries:
        try:
            target = os.readlink(f"{_FDS}/{entry}")
            if _PREFIX not in os.path.basename(target):
                continue
            total += os.stat(f"{_FDS}/{entry}").st_blocks * 512
        except OSError:  # closed since the listing: nothing to count
            continue
    return total


class TempDisk:
    """One statement's watch over SQLite's temporary files: ``over(now)`` is True once they
    occupy more than ``limit`` bytes (measured at most every ``EVERY`` seconds), and stays
    True (``exceeded``), so the statement's error can say why it was stopped. ``next_look``
    is when the next measure is due: a progress handler runs every few VM steps, and reading
    an attribute there costs less than a call."""

    def __init__(self, limit: int, start: float) -> None:
        self.limit = limit
        self.exceeded = False
        self.next_look = start + EVERY

    def over(self, now: float) -> bool:
        """Whether the statement must stop for its temporary disk (measured if due)."""
        if self.exceeded or now < self.next_look:
            return self.exceeded
        self.next_look = now + EVERY
        self.exceeded = sqlite_temp_bytes() > self.limit
        return self.exceeded
