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

import contextlib
import os
import stat
import time
from collections.abc import Iterable, Sequence

import attrs

from rho_domain.secrets import SYSTEM_SECRETS, SecretPolicy

MAX_ENTRIES = 200_000


@attrs.frozen
class Aliases:
    """Absolute paths that are other names of a secret file, and whether the scan was whole."""

    paths: tuple[str, ...] = ()
    complete: bool = True


def _walk(root: str, budget: list[int]) -> Iterable[os.DirEntry[str]]:
    """Every entry below ``root`` (symlinks not followed), depth first, within ``budget``."""
    stack = [root]
    while stack:
        directory = stack.pop()
        try:
            with os.scandir(directory) as entries:
                for entry in entries:
                    budget[0] -= 1
                    if budget[0] < 0:
                        return
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(entry.path)
                    yield entry
        except OSError:
            continue  # unreadable or vanished: nothing the programs could read there either


def find_aliases(
    roots: Sequence[str], policy: SecretPolicy, *, limit: int = MAX_ENTRIES
) -> Aliases:
    """Other names, below ``roots``, of the secret files below ``roots`` and in ``policy``'s
    concrete locations.

    Only names sharing an inode number are judged (judging every path of a large tree by the
    policy took seconds): the files below ``roots`` by inode, then each inode found twice or
    equal to a concrete secret's with several links is checked by ``lstat`` and the policy.
    """
    budget = [limit]
    by_inode: dict[int, list[str]] = {}
    for root in dict.fromkeys(roots):
        for entry in _walk(root, budget):
            if entry.is_file(follow_symlinks=False):
                by_inode.setdefault(entry.inode(), []).append(entry.path)
    complete = budget[0] >= 0
    outside: set[tuple[int, int]] = set()  # concrete secrets with several links
    for location in policy.absolute_locations():
        if location in SYSTEM_SECRETS or not os.path.isdir(location):
            _note_linked(location, outside)  # system trees (/sys/firmware) are not walked
            continue
        # The configuration directory holds every stored session: only a file whose inode
        # number is also below the roots can have an alias there (the number needs no stat).
        for entry in _walk(location, [limit]):
            if entry.inode() in by_inode:
                _note_linked(entry.path, outside)
    candidates = {ino for ino, paths in by_inode.items() if len(paths) > 1}
    candidates |= {ino for _, ino in outside if ino in by_inode}
    found: set[str] = set()
    for ino in candidates:
        groups: dict[tuple[int, int], list[str]] = {}
        for path in by_inode[ino]:
            with contextlib.suppress(OSError):
                st = os.lstat(path)
                groups.setdefault((st.st_dev, st.st_ino), []).append(path)
        for identity, paths in groups.items():
            if identity in outside or any(policy.refusal(p) for p in paths):
                found.update(p for p in paths if policy.refusal(p) is None)
    return Aliases(paths=tuple(sorted(found)), complete=complete)


def _note_linked(path: str, ids: set[tuple[int, int]]) -> None:
    """Remember ``path``'s identity when it has other names (only then can it have aliases)."""
    try:
        st = os.lstat(path)
    except OSError:
        return
    if stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
        ids.add((st.st_dev, st.st_ino))


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
        if self._last is not None:
            stamp, cached_key, aliases = self._last
            if cached_key >= key and now - stamp < self.ttl:
                return aliases
        aliases = find_aliases(sorted(key), self.policy)
        self._last = (now, key, aliases)
        return aliases


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
