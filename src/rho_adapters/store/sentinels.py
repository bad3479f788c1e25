"""The ``cancel`` and ``pause`` sentinels: what counts as one, and how one is cleared.

A sentinel is a regular file that ``request_cancel``/``request_pause`` made. Anything else at
that name (a directory, a symbolic link, a FIFO, a socket: written by hand, by a tool the model
ran, or by an attacker) is not the signal:

- reading it (``is_set``: one ``lstat``) says no, so a directory named ``pause`` no longer keeps
  a session paused that ``monitor resume`` could not lift ("Is a directory"), and a link is
  never followed to decide whether a session stops;
- clearing it (``clear``) removes it without following it: unlinked (a link, never its
  target), or an empty directory removed. A directory with something in it is left where it
  is with a warning naming it (its contents are not ours to delete); reads ignore it, so it
  no longer stops a run from starting, which used to fail clearing ``cancel``.
"""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

from rho_domain.errors import StoreError

log = logging.getLogger(__name__)


def is_set(path: Path) -> bool:
    """Whether the sentinel ``path`` is set: a regular file is there (a link is not followed)."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:  # missing, or its directory gone or unreadable: nothing asked
        return False


def clear(path: Path) -> bool:
    """Remove whatever is at the sentinel ``path``; True when a set sentinel was removed.

    Never follows a link and never raises for an entry that is not a regular file (see the
    module's docstring); a regular file that cannot be removed raises ``StoreError`` naming it.
    """
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return False
    try:
        if stat.S_ISDIR(mode):
            os.rmdir(path)
        else:
            os.unlink(path)
    except FileNotFoundError:
        return False  # cleared by another process meanwhile
    except OSError as exc:
        if stat.S_ISREG(mode):
            raise StoreError(f"cannot remove {path}: {exc.strerror or exc}") from exc
        log.warning(
            "%s is %s, not the %s file rho-agent writes: ignored, and not removed (%s); "
            "remove it yourself",
            path,
            _kind(mode),
            path.name,
            exc.strerror or exc,
        )
        return False
    if not stat.S_ISREG(mode):
        log.warning(
            "%s was %s, not the %s file rho-agent writes: ignored and removed",
            path,
            _kind(mode),
            path.name,
        )
    return stat.S_ISREG(mode)


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    return "a FIFO" if stat.S_ISFIFO(mode) else "a special file"
