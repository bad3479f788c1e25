"""Finding what the sandbox must hide below the directories a command can see.

The bubblewrap sandbox shows the machine read-only and hides secrets by mounting over them
(an empty tmpfs over a directory, ``/dev/null`` over a file). Hiding the concrete locations of
the policy (``~/.ssh``, ``/etc/shadow``, ...) is not enough inside the workspace, where a
``.env``, a ``deploy/server.key`` or a nested ``config/.aws`` may sit anywhere. ``SecretScan``
walks the visible roots (workspace, extra read roots) with the secrets policy and returns every
secret it finds: files and directories by their names and locations, at any depth;

* the real target of every symlink, when that target is a secret (a link in the workspace to
  ``/srv/app/.env`` hides ``/srv/app/.env`` itself), and the directories symlinks lead to are
  walked as well (once each; not ``/``, an ancestor of a root, ``/proc``, ``/sys`` or ``/dev``);
* every hard link of a secret file: a regular file with more than one link whose inode is a
  secret's (found by the walk, or among the policy's concrete locations);
* sockets (a daemon's, on a read-only mount); what a nested repository's config names.

The walk never follows a symlink into a directory it does not also judge, and does not descend
below a secret directory except to learn its files' inodes. Each directory's judgement is
kept (per policy, for every executor of the process) and reused while the directory's
``(device, inode, mtime)`` is unchanged, so a command in a large, unchanged workspace costs one
``lstat`` per directory (1,000 directories: about 7 ms; the first walk of 10,000 entries about
1 s on a loaded machine). A walk that meets more than ``max_entries`` entries fails closed
(``ExecutorError``): nothing runs unhidden. Each directory is listed from one descriptor
and must be the one its parent listed (``scan_listing.py``; a walk that finds one moved is
made again), and the sandbox checks the masks in place before a command (``mask_check.py``).
What it finds is a ``Masks`` (``masks.py``): a run with no sandboxed command never walks.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterable, Sequence

import attrs

from rho_adapters.local.git_dirs import shaped_place_of
from rho_adapters.local.git_named import nested_secrets
from rho_adapters.local.masks import Masks
from rho_adapters.local.scan_listing import (
    Place,
    Summary,
    identity_of,
    kernel,
    listed,
    refuse_too_deep,
    world,
)
from rho_domain.errors import ExecutorError
from rho_domain.git_dir_shape import GIT_DIR, as_dot_git, shape_of, shaped_refusal
from rho_domain.secret_patterns import git_reads
from rho_domain.secrets import SecretPolicy
from rho_domain.value_methods import value_eq, value_repr

MAX_ENTRIES = 2_000_000
# Judged directories, per policy, shared by every executor of the process (a server's
# sessions share one; the first walk of a tree is the cost), keyed by the git directory or
# object store each is in, found by its shape (``git_dirs.py``).
_Key = tuple[str, Place]
_Queued = tuple[str, Place, tuple[int, int] | None]  # a directory and its listed identity
_SUMMARIES: dict[SecretPolicy, dict[_Key, tuple[tuple[int, int, int], Summary]]] = {}


@attrs.define
class _Walk:
    __repr__ = value_repr
    __eq__ = value_eq

    files: list[str] = attrs.field(factory=list)
    dirs: list[str] = attrs.field(factory=list)
    shown_to_git: list[str] = attrs.field(factory=list)
    secret_inodes: set[tuple[int, int]] = attrs.field(factory=set)
    linked: list[tuple[str, int, int]] = attrs.field(factory=list)  # nlink > 1, not secret
    entries: int = 0
    roots: tuple[str, ...] = ()
    # each directory judged: its (device, inode, mtime) as listed; the roots' (device,
    # inode) as the executor's walk reaches them; the first directory found moved
    identities: dict[str, tuple[int, int, int]] = attrs.field(factory=dict)
    expected: dict[str, tuple[int, int]] = attrs.field(factory=dict)
    moved: str | None = None


class SecretScan:
    """Walks roots with ``policy`` (see the module docstring); one per executor."""

    def __init__(self, policy: SecretPolicy, *, max_entries: int = MAX_ENTRIES) -> None:
        self.policy = policy
        self.max_entries = max_entries
        self._summaries = _SUMMARIES.setdefault(policy, {})

    def masks(
        self, roots: Sequence[str], known: Iterable[str] = (), *, held: Sequence[str] = ()
    ) -> Masks:
        """Every secret below ``roots`` (and what symlinks there lead to). ``known``: the
        policy's concrete secret locations (a hard link to one is hidden too). ``held``: roots
        the executor walked to from ``/``, taken as they are (resolved again, a swapped parent
        named another tree) and listed only as what that walk reaches now (``ExecutorError``
        for a link on its path). A directory that is not the one its parent listed (one
        exchanged for a link was walked under neither name) makes the walk start again,
        three times at most, then ``ExecutorError`` naming it."""
        real = tuple(r if r in held else os.path.realpath(r) for r in roots)
        for _ in range(3):
            walk = _Walk(roots=real, expected={r: identity_of(r) for r in held})
            found = self._walked(walk, known)
            if walk.moved is None:
                return found
        raise ExecutorError(
            f"{walk.moved}: this directory kept changing while it was scanned for secrets "
            "before the command (three times): nothing ran; run it again once it is still"
        )

    def _walked(self, walk: _Walk, known: Iterable[str]) -> Masks:
        for location in known:
            self._learn_inodes(location, walk)
        queue = [(root, shaped_place_of(root), walk.expected.get(root)) for root in walk.roots]
        seen: set[str] = set()
        while queue:
            directory, place, expected = queue.pop()
            if directory in seen:
                continue
            seen.add(directory)
            summary = self._summary(directory, walk, place)
            if expected is not None and walk.identities.get(directory, (0, 0))[:2] != expected:
                walk.moved = walk.moved or directory  # listed as another, or no directory now
            if summary is None:
                continue
            walk.files.extend(summary.hidden_files)
            walk.secret_inodes.update(summary.hidden_inodes)
            walk.shown_to_git.extend(summary.shown_to_git)
            for hidden in summary.hidden_dirs:
                walk.dirs.append(hidden)
                self._learn_inodes(hidden, walk)
            listed = zip(summary.subdirs, summary.ids, strict=True)
            queue.extend((subdir, summary.place, ids) for subdir, ids in listed)
            walk.linked.extend(summary.linked)
            for link in summary.links:
                self._follow(link, walk, queue)
        walk.files.extend(nested_secrets(walk.files, self.policy, walk.roots))
        # the inodes of secret files found by name, and of those shown to git: git reads a
        # store's config by that name, never by another (``ln store/config notes``)
        shown = walk.shown_to_git if walk.linked else []
        for path in (*walk.files, *shown):
            with contextlib.suppress(OSError):
                st = os.lstat(path)
                if stat.S_ISREG(st.st_mode):
                    walk.secret_inodes.add((st.st_dev, st.st_ino))
        hard_links = [path for path, dev, ino in walk.linked if (dev, ino) in walk.secret_inodes]
        files = tuple(dict.fromkeys((*walk.files, *hard_links)))
        dirs = tuple(dict.fromkeys(walk.dirs))
        listed_at = {os.path.dirname(path) for path in (*files, *dirs)} & walk.identities.keys()
        return Masks(
            files=files,
            dirs=dirs,
            shown_to_git=tuple(dict.fromkeys(walk.shown_to_git)),
            parents=tuple((d, *walk.identities[d][:2]) for d in sorted(listed_at)),
        )

    def _follow(self, link: str, walk: _Walk, queue: list[_Queued]) -> None:
        """A symlink: hide its real target when that is a secret, walk it when a directory."""
        try:
            real = os.path.realpath(link)
        except OSError:
            # A link whose target may not be read (``/proc/1/root`` of a process not ours:
            # readlink fails with EACCES, where lstat succeeded) leads nowhere a command can
            # go; it raised here and every sandboxed command, grep and glob failed with it.
            return
        if kernel(real):
            return  # the sandbox mounts its own /proc, /sys and /dev: nothing of these shows
        try:
            target = os.stat(real)
        except OSError:
            return  # dangling: there is nothing to read through it
        # a link named as a secret (``.env -> env/prod.conf``) makes its target one: the
        # secret's content under an ordinary name (a store's link is git's: ``git_refusal``)
        if self.policy.refusal(real) is not None or self.policy.git_refusal(link) is not None:
            if stat.S_ISDIR(target.st_mode):
                walk.dirs.append(real)
                self._learn_inodes(real, walk)
            elif stat.S_ISREG(target.st_mode):
                walk.files.append(real)
        elif stat.S_ISDIR(target.st_mode) and not world(real, walk.roots):
            queue.append((real, shaped_place_of(real), None))
        elif stat.S_ISREG(target.st_mode) and target.st_nlink > 1:
            walk.linked.append((real, target.st_dev, target.st_ino))

    def _learn_inodes(self, location: str, walk: _Walk) -> None:
        """Record the inodes of the regular files at or below ``location`` (a secret)."""
        try:
            top = os.lstat(location)
        except OSError:
            return
        if stat.S_ISREG(top.st_mode):
            walk.secret_inodes.add((top.st_dev, top.st_ino))
            return
        pending = [location] if stat.S_ISDIR(top.st_mode) else []
        while pending:
            summary = self._summary(pending.pop(), walk)
            if summary is not None:
                walk.secret_inodes.update(summary.regular)
                pending.extend(summary.all_dirs)

    def _summary(self, directory: str, walk: _Walk, place: Place = None) -> Summary | None:
        """``directory`` (in the git directory or store ``place``, if any) judged, from the cache
        while it has not changed (None: not one)."""
        try:
            st = os.lstat(directory)
        except OSError as exc:
            refuse_too_deep(exc, directory)
            return None
        if not stat.S_ISDIR(st.st_mode):
            return None
        stamp = (st.st_dev, st.st_ino, st.st_mtime_ns)
        cached = self._summaries.get((directory, place))
        if cached is not None and cached[0] == stamp:
            summary = cached[1]
        else:  # listed from one descriptor: its identity is the directory judged
            if (got := listed(directory)) is None:
                return None
            stamp, items = got
            summary = self._judge(directory, place, items)
            self._summaries[(directory, place)] = (stamp, summary)
        walk.identities.setdefault(directory, stamp)
        walk.entries += summary.count
        if walk.entries > self.max_entries:
            raise ExecutorError(
                f"more than {self.max_entries:,} files below the workspace: too many to scan "
                "for secrets before each command; use a smaller working directory"
            )
        return summary

    def _judge(
        self, directory: str, place: Place, items: list[tuple[str, os.stat_result]]
    ) -> Summary:
        hidden_files: list[str] = []
        hidden_dirs: list[str] = []
        shown_to_git: list[str] = []
        subdirs: list[tuple[str, os.stat_result]] = []
        links: list[str] = []
        linked: list[tuple[str, int, int]] = []
        regular: list[tuple[int, int]] = []
        if kind := shape_of(os.path.basename(path) for path, _ in items):
            place = (directory, kind)  # the nearest decides (a submodule's, in modules/NAME)
        for path, st in items:
            mode = st.st_mode
            if stat.S_ISREG(mode):
                regular.append((st.st_dev, st.st_ino))
            if stat.S_ISLNK(mode):
                links.append(path)
            elif stat.S_ISSOCK(mode):
                hidden_files.append(path)
            elif self.policy.refusal(path) is not None:
                if stat.S_ISDIR(mode):
                    hidden_dirs.append(path)
                elif stat.S_ISREG(mode):
                    hidden_files.append(path)
            elif place is not None and shaped_refusal(self.policy, path, *place):
                # what a .git or objects holds under this name: shown if git reads it there
                if place[1] != GIT_DIR or git_reads(as_dot_git(path, place[0])):
                    shown_to_git.append(path)
                else:
                    (hidden_dirs if stat.S_ISDIR(mode) else hidden_files).append(path)
            elif stat.S_ISDIR(mode):
                subdirs.append((path, st))
            elif stat.S_ISREG(mode) and st.st_nlink > 1:
                linked.append((path, st.st_dev, st.st_ino))
        kinds = dict(items)
        return Summary(
            hidden_files=tuple(hidden_files),
            hidden_inodes=tuple(
                (kinds[f].st_dev, kinds[f].st_ino)
                for f in hidden_files
                if stat.S_ISREG(kinds[f].st_mode)
            ),
            hidden_dirs=tuple(hidden_dirs),
            shown_to_git=tuple(shown_to_git),
            place=place,
            subdirs=tuple(path for path, _ in subdirs),
            ids=tuple((st.st_dev, st.st_ino) for _, st in subdirs),
            links=tuple(links),
            linked=tuple(linked),
            regular=tuple(regular),
            all_dirs=(*hidden_dirs, *(path for path, _ in subdirs)),
            count=len(items),
        )
