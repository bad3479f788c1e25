"""Finding what the sandbox must hide below the directories a command can see.

The bubblewrap sandbox shows the machine read-only and hides secrets by mounting over them
(an empty tmpfs over a directory, ``/dev/null`` over a file). Hiding the concrete locations of
the policy (``~/.ssh``, ``/etc/shadow``, ...) is not enough inside the workspace, where a
``.env``, a ``deploy/server.key`` or a nested ``config/.aws`` may sit anywhere. ``SecretScan``
walks the visible roots (workspace, extra read roots) with the secrets policy and returns every
secret it finds: files and directories by their names and locations, at any depth;

* the real target of every symlink, when that target is a secret (a link in the workspace to
  ``/srv/app/.env`` hides ``/srv/app/.env`` itself), and the directories symlinks lead to are
  walked as well (once each);
* every hard link of a secret file: a regular file with more than one link whose inode is a
  secret's (found by the walk, or among the policy's concrete locations);
* sockets (a program could talk to a daemon through a socket file on a read-only mount).

The walk never follows a symlink into a directory it does not also judge, and does not descend
below a secret directory except to learn its files' inodes. Listings are kept per directory
and reused while the directory's ``(device, inode, mtime)`` is unchanged, so a command in a
large, unchanged workspace costs one ``lstat`` per directory. A walk that meets more than
``max_entries`` entries fails closed (``ExecutorError``): nothing runs unhidden.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Sequence

import attrs

from rho_domain.errors import ExecutorError
from rho_domain.secrets import SecretPolicy

MAX_ENTRIES = 2_000_000


@attrs.frozen
class _Entry:
    name: str
    mode: int
    dev: int
    ino: int
    nlink: int


@attrs.frozen(kw_only=True)
class Masks:
    """Absolute real paths to hide: ``files`` (regular files and sockets) and ``dirs``."""

    files: tuple[str, ...] = ()
    dirs: tuple[str, ...] = ()


@attrs.define
class _Walk:
    files: list[str] = attrs.field(factory=list)
    dirs: list[str] = attrs.field(factory=list)
    secret_inodes: set[tuple[int, int]] = attrs.field(factory=set)
    linked: list[tuple[str, int, int]] = attrs.field(factory=list)  # nlink > 1, not secret
    entries: int = 0


class SecretScan:
    """Walks roots with ``policy`` (see the module docstring); one per executor."""

    def __init__(self, policy: SecretPolicy, *, max_entries: int = MAX_ENTRIES) -> None:
        self.policy = policy
        self.max_entries = max_entries
        self._listings: dict[str, tuple[tuple[int, int, int], tuple[_Entry, ...]]] = {}

    def masks(self, roots: Sequence[str], known: Iterable[str] = ()) -> Masks:
        """Every secret below ``roots`` (and what symlinks there lead to). ``known`` are the
        policy's concrete secret locations: their files' inodes count as secrets, so a hard
        link to one is hidden too."""
        walk = _Walk()
        for location in known:
            self._learn_inodes(location, walk)
        queue = [os.path.realpath(root) for root in roots]
        seen: set[str] = set()
        while queue:
            directory = queue.pop()
            if directory in seen:
                continue
            seen.add(directory)
            for entry in self._listing(directory, walk):
                self._judge(os.path.join(directory, entry.name), entry, walk, queue)
        hard_links = [path for path, dev, ino in walk.linked if (dev, ino) in walk.secret_inodes]
        return Masks(
            files=tuple(dict.fromkeys((*walk.files, *hard_links))),
            dirs=tuple(dict.fromkeys(walk.dirs)),
        )

    def _judge(self, path: str, entry: _Entry, walk: _Walk, queue: list[str]) -> None:
        mode = entry.mode
        if stat.S_ISLNK(mode):
            real = os.path.realpath(path)
            try:
                target = os.stat(real)
            except OSError:
                return  # dangling: there is nothing to read through it
            if self.policy.refusal(real) is not None:
                self._hide(real, target.st_mode, (target.st_dev, target.st_ino), walk)
            elif stat.S_ISDIR(target.st_mode):
                queue.append(real)
            elif stat.S_ISREG(target.st_mode) and target.st_nlink > 1:
                walk.linked.append((real, target.st_dev, target.st_ino))
            return
        if stat.S_ISSOCK(mode):
            walk.files.append(path)
        elif self.policy.refusal(path) is not None:
            self._hide(path, mode, (entry.dev, entry.ino), walk)
        elif stat.S_ISDIR(mode):
            queue.append(path)
        elif stat.S_ISREG(mode) and entry.nlink > 1:
            walk.linked.append((path, entry.dev, entry.ino))

    def _hide(self, path: str, mode: int, inode: tuple[int, int], walk: _Walk) -> None:
        if stat.S_ISDIR(mode):
            walk.dirs.append(path)
            self._learn_inodes(path, walk)
        elif stat.S_ISREG(mode):
            walk.files.append(path)
            walk.secret_inodes.add(inode)

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
            directory = pending.pop()
            for entry in self._listing(directory, walk):
                if stat.S_ISREG(entry.mode):
                    walk.secret_inodes.add((entry.dev, entry.ino))
                elif stat.S_ISDIR(entry.mode):
                    pending.append(os.path.join(directory, entry.name))

    def _listing(self, directory: str, walk: _Walk) -> tuple[_Entry, ...]:
        """The entries of ``directory``, from the cache while it has not changed."""
        try:
            st = os.lstat(directory)
        except OSError:
            return ()
        if not stat.S_ISDIR(st.st_mode):
            return ()
        stamp = (st.st_dev, st.st_ino, st.st_mtime_ns)
        cached = self._listings.get(directory)
        if cached is not None and cached[0] == stamp:
            entries = cached[1]
        else:
            entries = self._read(directory)
            self._listings[directory] = (stamp, entries)
        walk.entries += len(entries)
        if walk.entries > self.max_entries:
            raise ExecutorError(
                f"more than {self.max_entries:,} files below the workspace: too many to scan "
                "for secrets before each command; use a smaller working directory"
            )
        return entries

    @staticmethod
    def _read(directory: str) -> tuple[_Entry, ...]:
        out: list[_Entry] = []
        try:
            with os.scandir(directory) as it:
                for item in it:
                    try:
                        st = item.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    out.append(_Entry(item.name, st.st_mode, st.st_dev, st.st_ino, st.st_nlink))
        except OSError:
            return ()
        return tuple(out)
