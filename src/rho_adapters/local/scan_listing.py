"""One directory's entries for the sandbox's secret scan, listed from the directory the scan
judged, and what the scan keeps of its judgement (``Summary``; ``secret_scan.py`` walks).

The scan took a directory's identity with ``lstat`` and then listed it by path again: a parent
exchanged for a link between the two listed another directory under the first one's
identity. Now the directory is opened once, without following a last link, and listed from
that descriptor, and its identity is the descriptor's (``fstat``): what the scan records about
a directory (``Masks.parents``, which the check inside the sandbox compares, ``mask_check.py``;
its subdirectories' identities, which their own listings must match) is the directory whose
entries it judged (redfiles28).
"""

from __future__ import annotations

import errno
import os

import attrs

from rho_adapters.local.confine import Tree
from rho_domain.errors import ExecutorError
from rho_domain.value_methods import value_eq, value_hash, value_repr

_OPEN = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_KERNEL = ("/proc", "/sys", "/dev")
Place = tuple[str, str] | None  # a git directory or object store, and its kind


@attrs.frozen(kw_only=True)
class Summary:
    """One directory judged by the policy: what its entries add to a walk. Kept while the
    directory's (device, inode, mtime) is unchanged; symlinks are followed again each time
    (their targets can change without this directory changing)."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    hidden_files: tuple[str, ...]  # secret regular files and sockets
    # (device, inode) of those regular files, as listed (an lstat by path again took another
    # file's, its parent swapped for a link meanwhile, and left a hard link of it unmasked)
    hidden_inodes: tuple[tuple[int, int], ...]
    hidden_dirs: tuple[str, ...]
    # secret to every tool but git, which reads them (a bare store's config and index)
    shown_to_git: tuple[str, ...]
    place: Place  # the git directory or store its subdirectories are in (``git_dirs.py``)
    subdirs: tuple[str, ...]  # not secret: walked
    ids: tuple[tuple[int, int], ...]  # their (device, inode), as listed
    links: tuple[str, ...]
    linked: tuple[tuple[str, int, int], ...]  # regular, not secret, more than one link
    regular: tuple[tuple[int, int], ...]  # (device, inode) of every regular file
    all_dirs: tuple[str, ...]  # every subdirectory, secret or not
    count: int


def listed(directory: str) -> tuple[tuple[int, int, int], list[tuple[str, os.stat_result]]] | None:
    """``directory``'s (device, inode, mtime) and every entry with its ``lstat`` (those that
    vanished left out), both from one descriptor; None when it is no directory now (gone, or
    a link). ``ExecutorError`` for a path longer than the kernel takes (``refuse_too_deep``)."""
    try:
        fd = os.open(directory, _OPEN)
    except OSError as exc:
        refuse_too_deep(exc, directory)
        return None
    try:
        st = os.fstat(fd)
        items: list[tuple[str, os.stat_result]] = []
        with os.scandir(fd) as it:
            for item in it:
                path = os.path.join(directory, item.name)
                try:
                    items.append((path, item.stat(follow_symlinks=False)))
                except OSError as exc:
                    refuse_too_deep(exc, path)
    finally:
        os.close(fd)
    return (st.st_dev, st.st_ino, st.st_mtime_ns), items


def identity_of(real: str) -> tuple[int, int]:
    """(device, inode) of the directory at the real path ``real`` walked to from ``/``
    without following a link (``ExecutorError`` naming a link now on its path); (0, 0) when
    it is gone (a read root rotated away: not shown, as bubblewrap's ``-try`` drops it)."""
    if not os.path.lexists(real):
        return (0, 0)
    try:
        fd = Tree(real, real=True).open_root()
    except ExecutorError:
        raise
    except OSError:
        return (0, 0)
    try:
        st = os.fstat(fd)
    finally:
        os.close(fd)
    return (st.st_dev, st.st_ino)


def refuse_too_deep(exc: OSError, path: str) -> None:
    """Fail closed on an entry whose path is longer than the kernel takes (ENAMETOOLONG):
    skipped as unreadable, a tree nested past 4,096 characters hid the secrets below it
    (``.config/gh/hosts.yml``, a hard link of ``.env``) from this walk, while ``grep -r``,
    which walks with descriptors, printed them, with bubblewrap and without."""
    if exc.errno == errno.ENAMETOOLONG:
        raise ExecutorError(
            f"{path[:120]}...: this directory tree is nested deeper than a path may be long "
            "(4,096 characters), so it cannot be scanned for secrets before a command runs; "
            "move it out of the workspace (or run in a directory that does not hold it)"
        ) from exc


def world(directory: str, roots: tuple[str, ...]) -> bool:
    """A link target not to walk: ``/``, an ancestor of a root (``up -> ..``: the walk would
    leave the roots for the whole machine) or a kernel file system (``/proc``, ``/sys``,
    ``/dev``: the sandbox mounts its own)."""
    prefix = directory.rstrip("/") + "/"
    return any(root.startswith(prefix) for root in roots) or kernel(directory)


def kernel(path: str) -> bool:
    """Whether ``path`` is in ``/proc``, ``/sys`` or ``/dev``."""
    return any(path == top or path.startswith(top + "/") for top in _KERNEL)
