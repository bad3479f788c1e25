"""Workspace confinement by walking directory handles, never by comparing path strings.

``Tree.resolve`` walks a path one component at a time from an open descriptor of the root,
opening each directory with ``O_NOFOLLOW`` relative to its parent's descriptor. A symlink is
followed only by reading it and continuing the walk with its target, and only while the walk
stays below the root (``..`` pops a held descriptor; it never climbs past the root). So
``..``, absolute paths, symlinked files or parents, chains, loops, ``/proc/self/root`` and a
directory swapped for a symlink between check and use cannot lead outside: every step is an
``openat`` relative to a descriptor that is already inside.

Raises ``PathOutsideWorkspace``, ``ToolError`` (missing, not a directory, too deep) with the
path the model gave; the caller closes the returned descriptor.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Callable

import attrs

from rho_domain.errors import ExecutorError, PathOutsideWorkspace, ToolError
from rho_domain.paths import components, is_within
from rho_domain.value_methods import value_eq, value_hash, value_repr

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_ANCESTOR_FLAGS = os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
MAX_SYMLINKS = 40
MAX_DEPTH = 64


@attrs.frozen
class Resolved:
    """The parent directory's descriptor, the final name ("" for the root itself) and the
    canonical components of the path below the root."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    dir_fd: int
    name: str
    parts: tuple[str, ...]


class Tree:
    """One confinement root (the workspace, or an extra read root)."""

    def __init__(self, root: str, *, real: bool = False, read_root: bool = False) -> None:
        # ``real``: the caller resolved ``root`` just now (a Session's wiring resolves its
        # workspace once, per Session); a second lookup would give the same string.
        self.root = root if real else os.path.realpath(root)
        self.root_parts = components(self.root)
        self.read_root = read_root  # one of ``extra_read_roots``, not the working directory

    def relative_parts(self, path: str, *, aliases: tuple[str, ...] = ()) -> tuple[str, ...] | None:
        """Components of ``path`` below this root, or None when ``path`` is absolute elsewhere."""
        if not path.startswith("/"):
            return components(path)
        parts = components(path)
        for base in (self.root_parts, *(components(a) for a in aliases)):
            if is_within(parts, base):
                return parts[len(base) :]
        return None

    def resolve(
        self,
        parts: tuple[str, ...],
        shown: str,
        *,
        follow_final: bool,
        create_dirs: bool = False,
        guard: Callable[[tuple[str, ...]], None] | None = None,
    ) -> Resolved:
        """Walk ``parts`` below the root; see the module docstring.

        ``create_dirs`` creates missing directories on the way; ``guard`` is called with the
        canonical components of each directory before it is created (and may raise).
        """
        stack: list[tuple[str, int]] = []
        pending = list(parts)
        links = 0
        root_fd = self._open_root()
        try:
            while pending:
                name = pending.pop(0)
                top = stack[-1][1] if stack else root_fd
                if name in ("", "."):
                    continue
                if name == "..":
                    if not stack:
                        raise PathOutsideWorkspace(f"{shown!r} leads outside {self.root}")
                    os.close(stack.pop()[1])
                    continue
                if len(stack) >= MAX_DEPTH:
                    raise ToolError(f"{shown!r}: more than {MAX_DEPTH} directory levels")
                target = self._symlink_target(top, name)
                if target is not None and (pending or follow_final):
                    links += 1
                    if links > MAX_SYMLINKS:
                        raise ToolError(f"{shown!r}: too many levels of symbolic links")
                    pending = self._link_parts(target, stack, shown) + pending
                    if target.startswith("/"):
                        while stack:
                            os.close(stack.pop()[1])
                    continue
                if not pending:
                    fd = os.dup(top)
                    return Resolved(fd, name, (*(n for n, _ in stack), name))
                canonical = (*(n for n, _ in stack), name)
                creator = _creator(guard, canonical) if create_dirs else None
                stack.append((name, self._open_dir(top, name, shown, creator)))
            fd = os.dup(stack[-1][1] if stack else root_fd)
            return Resolved(fd, "", tuple(n for n, _ in stack))
        finally:
            for _, fd in stack:
                os.close(fd)
            os.close(root_fd)

    def open_root(self) -> int:
        """The root opened as ``_open_root`` opens it: the caller's to close (a command
        started in it, or a sandbox binding it, takes the directory the walk reached)."""
        return self._open_root()

    def _open_root(self) -> int:
        """The root, opened by walking its real path from ``/`` without following a link
        (``_ANCESTOR_FLAGS``: search permission is all an ancestor needs); ``ExecutorError``
        naming it when it is gone, or when one of its directories is now a link: a parent
        replaced while the session ran (``mv ~/code ~/old; ln -s /elsewhere ~/code``) was
        followed, and ``read``, ``list`` and ``glob`` read ``/elsewhere/app`` as the
        workspace. Removed (``rm -rf "$PWD"``), every later call said "no such file or
        directory: ." (or of the path it named), which told the model nothing of the cause."""
        if not self.root_parts:
            return os.open("/", _DIR_FLAGS)
        fd = os.open("/", _ANCESTOR_FLAGS)
        try:
            for at, name in enumerate(self.root_parts):
                last = at == len(self.root_parts) - 1
                try:
                    step = os.open(name, _DIR_FLAGS if last else _ANCESTOR_FLAGS, dir_fd=fd)
                except OSError as exc:
                    raise self._unreachable(fd, name, exc) from None
                os.close(fd)
                fd = step
        except BaseException:
            os.close(fd)
            raise
        return fd

    def _unreachable(self, parent: int, name: str, exc: OSError) -> Exception:
        """Why the root cannot be opened at ``name`` (a directory of its path, below the
        directory open as ``parent``): replaced by a link, gone, or ``exc`` itself."""
        what = "extra read root" if self.read_root else "working directory"
        if exc.errno in (errno.ELOOP, errno.ENOTDIR) and self._symlink_target(parent, name):
            return ExecutorError(
                f"the {what} {self.root} is no longer where it was: {name!r} on its path is "
                "now a symbolic link (replaced while the session ran), and no tool follows "
                "it out of the directory the session was given; restore it, or start a new "
                "session in the directory it leads to"
            )
        if not isinstance(exc, (FileNotFoundError, NotADirectoryError)):
            return exc
        if self.read_root:  # was named the working directory, whose tools all still work
            return ExecutorError(
                f"the extra read root {self.root} no longer exists (removed or replaced "
                "while the session ran): nothing in it can be read until it is recreated; "
                "the working directory is not affected"
            )
        return ExecutorError(
            f"the working directory {self.root} no longer exists (removed or replaced "
            "while the session ran): no tool can reach it; recreate it, or start a new "
            "session in another directory"
        )

    def _symlink_target(self, dir_fd: int, name: str) -> str | None:
        try:
            st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            return None
        if not stat.S_ISLNK(st.st_mode):
            return None
        return os.readlink(name, dir_fd=dir_fd)

    def _link_parts(self, target: str, stack: list[tuple[str, int]], shown: str) -> list[str]:
        if not target.startswith("/"):
            return list(components(target)) if target else []
        parts = components(os.path.normpath(target))
        if not is_within(parts, self.root_parts):
            raise PathOutsideWorkspace(f"{shown!r} is a symbolic link leading outside {self.root}")
        return list(parts[len(self.root_parts) :])

    def _open_dir(
        self, parent: int, name: str, shown: str, create: Callable[[], None] | None
    ) -> int:
        try:
            return os.open(name, _DIR_FLAGS, dir_fd=parent)
        except FileNotFoundError:
            if create is None:
                raise ToolError(f"no such file or directory: {shown}") from None
            create()
            # Created concurrently: open it below like any other directory.
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, 0o777, dir_fd=parent)
            return os.open(name, _DIR_FLAGS, dir_fd=parent)
        except OSError as exc:
            if exc.errno in (errno.ENOTDIR, errno.ELOOP):
                raise ToolError(f"{shown!r}: {name!r} is not a directory") from None
            raise


def _creator(
    guard: Callable[[tuple[str, ...]], None] | None, canonical: tuple[str, ...]
) -> Callable[[], None]:
    def create() -> None:
        if guard is not None:
            guard(canonical)

    return create
