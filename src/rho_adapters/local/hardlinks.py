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
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import attrs

from rho_domain.lazy_names import lazy_names
from rho_domain.secrets import SecretPolicy

if TYPE_CHECKING:
    from rho_adapters.local.alias_scan import Aliases as Aliases

MAX_ENTRIES = 200_000
MAX_POLICIES = 32  # a process serves a few configurations: each its policy
MAX_ROOT_SETS = 64  # per policy: the workspace, and each directory a command names
_Kept = dict[frozenset[str], tuple[float, "Aliases"]]
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


class SharedScans:
    """The alias scans of every executor of the process, per secrets policy and set of roots:
    the last scan and when it started (``clock``, monotonic seconds), answered for ``ttl``
    seconds. Each ``Session`` makes its own executor, and a service making one per request
    scanned the same workspace and the same concrete secret locations at each first ``list``
    (~1 ms of CPU, 178 locations on Debian). A link made in the ``ttl`` seconds since the last
    scan may be missed, whichever executor made that scan (docs/security.md); an equal policy
    and equal roots are the scan's every input but the disk. At most ``MAX_POLICIES``
    policies and ``MAX_ROOT_SETS`` sets of roots each are kept, the oldest forgotten first."""

    def __init__(self, *, ttl: float = 2.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl = ttl
        self.clock = clock
        self._by_policy: dict[SecretPolicy, _Kept] = {}
        self._lock = threading.Lock()  # scans finish in worker threads

    def of(self, policy: SecretPolicy) -> _Kept:
        """The scans kept for ``policy`` (hashed once, when an executor is made)."""
        with self._lock:
            kept = self._by_policy.get(policy)
            if kept is None:
                if len(self._by_policy) >= MAX_POLICIES:
                    del self._by_policy[next(iter(self._by_policy))]
                kept = self._by_policy[policy] = {}
            return kept

    def keep(self, kept: _Kept, roots: frozenset[str], stamp: float, aliases: Aliases) -> None:
        """Remember a scan of ``roots`` that started at ``stamp``."""
        with self._lock:
            kept.pop(roots, None)
            if len(kept) >= MAX_ROOT_SETS:
                del kept[next(iter(kept))]
            kept[roots] = (stamp, aliases)


class AliasCache:
    """``find_aliases`` for one executor's ``policy``: a scan of the same roots (or of roots
    holding them) started in the last ``scans.ttl`` seconds answers, this executor's or
    another's (``SharedScans``): the read tool reads many files in a row (grep over a tree),
    each with several links in a uv or pnpm tree, and a service makes an executor per
    session."""

    def __init__(self, policy: SecretPolicy, *, scans: SharedScans | None = None) -> None:
        self.policy = policy
        self._scans = SHARED_SCANS if scans is None else scans
        self._kept = self._scans.of(policy)
        self._last: tuple[float, frozenset[str], Aliases] | None = None

    def get(self, roots: Sequence[str]) -> Aliases:
        """The aliases below ``roots`` (a scan at most every ``ttl`` seconds)."""
        key = _outermost(roots)
        if (found := self._fresh(key)) is not None:
            return found
        stamp = self._scans.clock()  # before the scan: a link made during it is not older
        aliases = find_aliases(sorted(key), self.policy)
        self._last = (stamp, key, aliases)
        self._scans.keep(self._kept, key, stamp, aliases)
        return aliases

    def fresh(self, roots: Sequence[str]) -> bool:
        """Whether ``get(roots)`` answers without a scan (one of the last ``ttl`` seconds)."""
        return self._fresh(_outermost(roots)) is not None

    def _fresh(self, key: frozenset[str]) -> Aliases | None:
        now, ttl = self._scans.clock(), self._scans.ttl
        if self._last is not None:
            stamp, scanned, aliases = self._last
            if scanned >= key and now - stamp < ttl:
                return aliases
        shared = self._kept.get(key)
        if shared is not None and now - shared[0] < ttl:
            self._last = (shared[0], key, shared[1])
            return shared[1]
        return None


SHARED_SCANS = SharedScans()


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
