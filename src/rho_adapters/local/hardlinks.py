"""Secrets under another name: hard links.

A hard link is one file with two names: ``notes.txt`` linked to ``.env`` is read as
``notes.txt``, and no check of names or real paths (symlinks resolved) can tell. What
identifies a file is its device and inode. So before the executor judges what a command or a
file tool reads, it collects the identities of the secrets it can name (secret-named files in
the scanned trees, and every file in the concrete secret locations: home secrets, the session
and configuration directories), and any other name of the same file found in the scanned trees
becomes a secret location too (``aliases``). The usual policy then refuses a word, a ``< file``
or a read naming it, the ``xargs`` guard drops it, and recursive readers get its name excluded.

Cheap: the scan reads directory entries only (``DirEntry.inode()`` needs no ``stat``); only
names sharing an inode number are stat'ed and judged by the policy.

Bounded: at most ``MAX_ENTRIES`` entries per scan. Past that the scan is ``complete=False`` and
the executor refuses to read, by name, a file with several links (it cannot prove which file
that is); recursive readers then rely on the names found so far. A secret outside every scanned
tree and every concrete location (``/srv/app/.env`` linked into the workspace) is not known.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

import attrs

from rho_domain.lazy_names import lazy_names
from rho_domain.secrets import SecretPolicy

if TYPE_CHECKING:
    from rho_adapters.local.alias_scan import Aliases as Aliases

MAX_ENTRIES = 200_000
# the scan's result, built with the first scan
__getattr__ = lazy_names(__name__, {"Aliases": "rho_adapters.local.alias_scan"})


def find_aliases(
    roots: Sequence[str], policy: SecretPolicy, *, limit: int = MAX_ENTRIES
) -> Aliases:
    """Other names, below ``roots``, of the secret files below ``roots`` and in ``policy``'s
    concrete locations (``alias_scan.find_aliases``: the scan loads with the first one, when a
    file with several names is read or a command runs)."""
    from rho_adapters.local import alias_scan

    return alias_scan.find_aliases(roots, policy, limit=limit)


class AliasCache:
    """``find_aliases`` remembered for ``ttl`` seconds per set of roots: the read tool reads
    many files in a row (grep over a tree), each with several links in a uv or pnpm tree."""

    def __init__(self, policy: SecretPolicy, *, ttl: float = 2.0) -> None:
        self.policy = policy
        self.ttl = ttl
        self._last: tuple[float, frozenset[str], Aliases] | None = None

    def get(self, roots: Sequence[str]) -> Aliases:
        """The aliases below ``roots`` (a scan at most every ``ttl`` seconds)."""
        key = _outermost(roots)
        now = time.monotonic()
        if self.fresh(roots) and self._last is not None:
            return self._last[2]
        aliases = find_aliases(sorted(key), self.policy)
        self._last = (now, key, aliases)
        return aliases

    def fresh(self, roots: Sequence[str]) -> bool:
        """Whether ``get(roots)`` answers without a scan (one of the last ``ttl`` seconds)."""
        if self._last is None:
            return False
        stamp, cached_key, _ = self._last
        return cached_key >= _outermost(roots) and time.monotonic() - stamp < self.ttl


def _outermost(roots: Sequence[str]) -> frozenset[str]:
    """``roots`` without those inside another (a file's directory inside the workspace): the
    same scan, so the same cache entry."""
    normal = {os.path.normpath(r) for r in roots}
    return frozenset(
        r for r in normal if not any(o != r and r.startswith(o.rstrip("/") + "/") for o in normal)
    )


def several_links(path: str) -> bool:
    """Whether ``path`` (followed) is a regular file with more than one name."""
    try:
        st = os.stat(path)
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and st.st_nlink > 1


def with_aliases(policy: SecretPolicy, aliases: Aliases) -> SecretPolicy:
    """``policy`` with ``aliases`` as secret locations of its own."""
    if not aliases.paths:
        return policy
    return attrs.evolve(policy, locations=(*policy.locations, *aliases.paths))
