"""Whether only root may change a path: the file and every directory above it owned by root
and writable by no one else, up to ``/`` (no rename, no rewrite on the way but root's).

Two walls skip what only root may change, as root is trusted (docs/security.md, the threat
model): the sandbox's check of its masks (``mask_check.py``: ``/etc``, ``/etc/ssh``), and
the credential helper scripts found by a bare name on the ``PATH`` that are the system's
(``ssh_named.wrapped``: ``/usr/bin/git-credential-gcloud.sh``, an installed package's 210
lines, took seconds to read at every executor's start).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator


def only_root_changes(path: str) -> bool:
    """Whether ``path`` (absolute; not followed if a link) and every directory above it are
    owned by root and writable by no one else."""
    return all(_roots_own(p) for p in _up(path))


def _up(path: str) -> Iterator[str]:
    while True:
        yield path
        if path in ("/", ""):
            return
        path = os.path.dirname(path)


def _roots_own(path: str) -> bool:
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return st.st_uid == 0 and not st.st_mode & 0o022 and not stat.S_ISLNK(st.st_mode)
