"""The scan for other names of secret files (hard links), as ``hardlinks.py`` explains it.

Apart from ``hardlinks`` (which names ``Aliases`` lazily and calls ``find_aliases`` here)
because a run whose files each have one name never scans: the executor scans when a file
with several names is read, or a command runs.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterable, Sequence

import attrs

from rho_adapters.local.git_dirs import shaped_place_of
from rho_adapters.local.git_named import nested_secrets
from rho_domain.git_dir_shape import GIT_DIR, shaped_refusal
from rho_domain.secrets import SYSTEM_SECRETS, SecretPolicy
from rho_domain.value_methods import value_eq, value_hash, value_repr


@attrs.frozen
class Aliases:
    """Absolute paths that are other names of a secret file, and whether the scan was whole."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

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
        except OSError as exc:
            if exc.errno == errno.ENAMETOOLONG:
                budget[0] = -1  # nested past 4,096 characters: programs walk it, we cannot
                return
            continue  # unreadable or vanished: nothing the programs could read there either


def find_aliases(roots: Sequence[str], policy: SecretPolicy, *, limit: int) -> Aliases:
    """Other names, below ``roots``, of the secret files below ``roots`` and in ``policy``'s
    concrete locations.

    Only names sharing an inode number are judged (judging every path of a large tree by the
    policy took seconds): the files below ``roots`` by inode, then each inode found twice or
    equal to a concrete secret's with several links is checked by ``lstat`` and the policy.
    Found with them: the targets of links named as secrets (``link_targets``) and the files
    the configurations of repositories nested below ``roots`` name (``nested_secrets``).
    """
    budget = [limit]
    by_inode, links, dot_gits = _index(roots, budget)
    complete = budget[0] >= 0
    outside: set[tuple[int, int]] = set()  # concrete secrets with several links
    # secrets the policy does not hold, whose other names are aliases too: with ``.env ->
    # env/prod.conf`` (or ``.ssh -> keys``), ``ln env/prod.conf copy.txt`` gave it to ``cat
    # copy.txt``
    extra = (*link_targets(links, policy), *nested_secrets(dot_gits, policy, roots))
    for location in (*policy.absolute_locations(), *extra):
        if not _walked(location, outside):
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
            secret = {p for p in paths if policy.refusal(p) or _in_git_dir(policy, p)}
            if identity in outside or secret:
                found.update(p for p in paths if p not in secret)
                # a file in git's object store is git's to read, unless it is a secret's other name
                if any(policy.git_refusal(p) for p in paths):
                    found.update(p for p in paths if policy.git_refusal(p) is None)
    found.update(extra)
    return Aliases(paths=tuple(sorted(found)), complete=complete)


def _index(
    roots: Sequence[str], budget: list[int]
) -> tuple[dict[int, list[str]], list[str], list[str]]:
    """The regular files below ``roots`` by inode number, the symbolic links, and the
    ``.git`` entries (of repositories nested below a root: their configurations name
    secrets, ``git_named.nested_secrets``)."""
    by_inode: dict[int, list[str]] = {}
    links: list[str] = []
    dot_gits: list[str] = []
    for root in dict.fromkeys(roots):
        for entry in _walk(root, budget):
            if entry.is_file(follow_symlinks=False):
                by_inode.setdefault(entry.inode(), []).append(entry.path)
            elif entry.is_symlink():
                links.append(entry.path)
            if entry.name == ".git":
                dot_gits.append(entry.path)
    return by_inode, links, dot_gits


def link_targets(links: Iterable[str], policy: SecretPolicy) -> list[str]:
    """The real targets, not secrets by their own paths, of the ``links`` whose own paths
    are secrets: a secret's content kept under an ordinary name (``.env -> env/prod.conf``;
    git-annex's ``id_rsa -> .git/annex/objects/.../KEY``), which ``cat env/prod.conf``
    printed on every backend (redshell23). Links are judged as git's checks judge them
    (``git_refusal``): a store linked elsewhere is git's to read."""
    targets: list[str] = []
    for link in links:
        # a store's link (``.git/objects -> kept``) is git's to follow: judged by its holder
        if policy.git_refusal(link) is None:
            continue
        with contextlib.suppress(OSError):
            real = os.path.realpath(link)
            if os.path.exists(real) and policy.refusal(real) is None:
                targets.append(real)
    return targets


def _in_git_dir(policy: SecretPolicy, path: str) -> bool:
    """Whether ``path`` is a ``.git``'s config, index or scratch file in a git directory by
    any name (``git_dir_shape``): ``ln store/config notes`` gave a bare store's remote token
    to ``cat notes`` (probeshell22c). A store's objects are left to the rules above: a local
    clone's are hard links, which git reads by itself."""
    place = shaped_place_of(path)
    return place is not None and place[1] == GIT_DIR and bool(shaped_refusal(policy, path, *place))


def _walked(location: str, ids: set[tuple[int, int]]) -> bool:
    """Whether ``location`` is a directory to walk (followed: a link to one is walked; a
    system tree, ``/sys/firmware``, is not), else ``_note_linked`` of it, from one ``lstat``
    where it is no link: most of a policy's concrete locations are missing files (178 on
    Debian), and an ``isdir`` then an ``lstat`` of each was half the scan's system calls."""
    try:
        st = os.lstat(location)
    except OSError:
        return False
    if stat.S_ISLNK(st.st_mode):  # a link's own identity is no file's: nothing to note
        return location not in SYSTEM_SECRETS and os.path.isdir(location)
    if stat.S_ISDIR(st.st_mode) and location not in SYSTEM_SECRETS:
        return True
    _noted(st, ids)
    return False


def _note_linked(path: str, ids: set[tuple[int, int]]) -> None:
    """Remember ``path``'s identity when it has other names (only then can it have aliases)."""
    try:
        st = os.lstat(path)
    except OSError:
        return
    _noted(st, ids)


def _noted(st: os.stat_result, ids: set[tuple[int, int]]) -> None:
    """Remember the identity ``st`` describes when it is a file with other names."""
    if stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
        ids.add((st.st_dev, st.st_ino))
