"""The local executor's files: every path confined, judged and shown as the model wrote it.

``Workspace`` holds the executor's roots (the workspace, the profile's read roots, the whole
machine when reads outside are allowed) and its judges (the secrets policy, the read reach,
the session directory never written, the hard links found), and does each file operation
synchronously: ``LocalExecutor`` calls it in a thread, or on the loop for a small listing.
Every path is walked by descriptor (``Tree``, confine.py); a secret is refused by the model's
text, by its canonical path and by another name of the same file (``hardlinks.py``);
agent/editor/VCS configuration and the session directory are never written (write_checks.py,
loaded with the first write). The write mode is the caller's to check. OSError becomes a rho
error in ``os_errors``, the one place.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterator, Sequence

from rho_adapters.local.confine import Tree
from rho_adapters.local.files import (
    info,
    list_entries,
    open_regular,
    read_bytes,
    small_names,
    write_bytes,
)
from rho_adapters.local.git_dirs import shaped_place_refusal
from rho_adapters.local.hardlinks import AliasCache, several_links, with_aliases
from rho_domain.errors import (
    ExecutorError,
    PathOutsideWorkspace,
    PermissionDenied,
    SensitivePath,
    ToolError,
)
from rho_domain.paths import check_file_path, check_path_text, components, is_within
from rho_domain.ports.executor import FileInfo
from rho_domain.reach import ReadReach, held_roots
from rho_domain.secrets import SecretPolicy


@contextlib.contextmanager
def os_errors(shown: str) -> Iterator[None]:
    """The one place where OSError becomes a rho error the model can read."""
    try:
        yield
    except (ToolError, ExecutorError):
        raise
    except FileNotFoundError:
        raise ToolError(f"no such file or directory: {shown}") from None
    except PermissionError as exc:
        raise PermissionDenied(f"{shown}: permission denied by the system") from exc
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ToolError(f"{shown}: symbolic link where none is allowed") from exc
        raise ToolError(f"{shown}: {exc.strerror or exc}") from exc


class Workspace:
    """The files a ``LocalExecutor`` reaches: see the module docstring for the guarantees."""

    def __init__(
        self,
        tree: Tree,
        *,
        given_root: str,
        extra: Sequence[Tree],
        machine: Tree | None,
        protected: Sequence[tuple[str, ...]],
        policy: SecretPolicy,
        reach: ReadReach,
        aliases: AliasCache,
    ) -> None:
        """``tree``: the workspace, ``given_root`` its path as given (another name of it);
        ``extra``: the read roots; ``machine``: "/" when reads outside are allowed, else None;
        ``protected``: the components of directories never written; ``aliases``: the hard
        links to secrets found (shared with the runner)."""
        self._tree = tree
        self._given_root = given_root
        self._extra = tuple(extra)
        self._machine = machine
        self._protected = tuple(protected)
        self.policy = policy
        self.reach = reach
        self.aliases = aliases

    @property
    def root(self) -> str:
        """The workspace's real path."""
        return self._tree.root

    def _locate(self, path: str, *, write: bool) -> tuple[Tree, tuple[str, ...]]:
        check_path_text(path)
        parts = self._tree.relative_parts(path, aliases=(self._given_root,))
        if parts is not None:
            return self._tree, parts
        if not write:
            for tree in self._extra:
                extra = tree.relative_parts(path)
                if extra is not None:
                    return tree, extra
        if write:
            raise PathOutsideWorkspace(f"{path!r} is outside the workspace {self._tree.root}")
        if self._machine is not None:  # allow: only a command's directory is located here
            raise PathOutsideWorkspace(
                f"{path!r} is outside the workspace {self._tree.root} and the profile's read "
                "roots, where commands run; stay there and name files elsewhere by their path"
            )
        raise PathOutsideWorkspace(
            f"{path!r} is outside the workspace {self._tree.root} and the profile's read roots "
            "(read_outside_workspace: deny)"
        )

    def _locate_read(self, path: str) -> tuple[Tree, tuple[str, ...]]:
        """Where a read of ``path`` walks from: under ``allow`` the machine's root, so a
        symlink or ``..`` leading out of the workspace is followed as the shell would, and
        the real path is judged by ``reach`` (``_check_read``); under ``deny``, ``_locate``."""
        if self._machine is None:
            return self._locate(path, write=False)
        check_path_text(path)
        if path.startswith("/"):
            return self._machine, components(path)
        return self._machine, (*self._tree.root_parts, *components(path))

    def _check_read(
        self, path: str, tree: Tree, parts: tuple[str, ...] | None, *, directory: bool = False
    ) -> None:
        """Refuse a secret: by the model's text (names), then by the canonical path; and a
        canonical path out of the profile's reach. ``directory``: ``parts`` is a directory
        to list (its alias scan's roots: ``_alias_roots``)."""
        if reason := self.policy.refusal(path):
            raise SensitivePath(f"{reason}; it may not be read")
        if parts is not None:
            real = "/" + "/".join((*tree.root_parts, *parts))
            if reason := self.policy.refusal(real) or shaped_place_refusal(self.policy, real):
                raise SensitivePath(f"{path!r} resolves to a secret: {reason}; it may not be read")
            if reason := self.reach.refusal(real):
                raise PathOutsideWorkspace(f"{path!r} may not be read: {reason}")
            # a directory too: a secret-named link's target may be one (``.ssh -> keys``)
            several = several_links(real)
            self._check_other_names(path, real, several=several, directory=directory)

    def _check_other_names(
        self, path: str, real: str, *, several: bool, directory: bool = False
    ) -> None:
        """Refuse a file with several names when one of them is a secret (``hardlinks.py``),
        and a file or directory a link named as a secret leads to, or inside one
        (``alias_scan.link_targets``; ``.ssh -> keys``: ``keys/k``), which any may be: the
        scan is remembered for two seconds (``AliasCache``). Judged as the commands judge
        them (``with_aliases``): the read tool read ``keys/k`` and the list tool listed
        ``keys`` before redshell24, judging the aliases by equality."""
        aliases = self.aliases.get(self._alias_roots(real, directory=directory))
        if with_aliases(self.policy, aliases).refusal(real) is not None:
            raise SensitivePath(
                f"{path!r} is another name (a hard link) of a secrets file, the file a link "
                "named as one leads to, or a file a nested repository's git configuration "
                "names for credentials; it may not be read"
            )
        if several and not aliases.complete:
            raise SensitivePath(
                f"{path!r} has several hard links and the workspace is too large to check that "
                "none of them is a secret; it may not be read"
            )

    def _alias_roots(self, real: str, *, directory: bool = False) -> tuple[str, ...]:
        """What the alias scan for ``real`` walks: the workspace, ``real``'s own directory
        and the read root holding it (docs/x.txt may be the twin of the root's .env), but
        "/", too large to scan on every read (a secret there is found by its name). A
        ``directory`` listed is its own: its parent, walked whole for the workspace's own
        listing, is outside the workspace (``list .`` of ~/code/app walked all of ~/code,
        up to 200,000 entries, where no other tool or command looks)."""
        held = held_roots([t.root for t in self._extra], (real,))
        return (self._tree.root, real if directory else os.path.dirname(real), *held)

    def _display(self, tree: Tree, parts: tuple[str, ...]) -> str:
        if tree is self._machine and is_within(parts, self._tree.root_parts):
            tree, parts = self._tree, parts[len(self._tree.root_parts) :]
        if tree is self._tree:
            return "/".join(parts) or "."
        return "/".join((tree.root, *parts))

    def stat(self, path: str) -> FileInfo:
        """``Executor.stat``: ``path`` followed to its end, out of reach refused."""
        with os_errors(path):
            tree, parts = self._locate_read(path)
            res = tree.resolve(parts, path, follow_final=True)
            try:
                real = "/" + "/".join((*tree.root_parts, *res.parts))
                if reason := self.reach.refusal(real):
                    raise PathOutsideWorkspace(f"{path!r} may not be read: {reason}")
                name = res.name or (res.parts[-1] if res.parts else ".")
                return info(res, self._display(tree, res.parts), name)
            finally:
                os.close(res.dir_fd)

    def read(self, path: str, offset: int, length: int | None) -> bytes:
        """``Executor.read``: a regular file, never a secret, within reach."""
        with os_errors(path):
            check_path_text(path)
            check_file_path(path)
            tree, parts = self._locate_read(path)
            self._check_read(path, tree, parts)
            res = tree.resolve(parts, path, follow_final=True)
            try:
                self._check_read(path, tree, res.parts)
                return read_bytes(res, path, max(0, offset), length)
            finally:
                os.close(res.dir_fd)

    def list_small(self, path: str) -> tuple[FileInfo, ...] | None:
        """The entries of the directory ``path`` when it is small (``files.small_names``: one
        block, at most 64 names), else None: list it with ``list_dir`` (in a thread)."""
        with os_errors(path):
            tree, parts = self._locate_read(path)
            res = tree.resolve((*parts, "."), path, follow_final=True)
            try:
                real = "/" + "/".join((*tree.root_parts, *res.parts))
                if not self.aliases.fresh(self._alias_roots(real, directory=True)):
                    return None  # the alias scan runs in a thread, with list_dir
                self._check_read(path, tree, res.parts, directory=True)
                names = small_names(res.dir_fd)
                if names is None:
                    return None
                return list_entries(res.dir_fd, self._display(tree, res.parts), names)
            finally:
                os.close(res.dir_fd)

    def list_dir(self, path: str) -> tuple[FileInfo, ...]:
        """``Executor.list_dir``: any directory (walked again here: called in a thread)."""
        with os_errors(path):
            tree, parts = self._locate_read(path)
            res = tree.resolve((*parts, "."), path, follow_final=True)
            try:
                self._check_read(path, tree, res.parts, directory=True)
                return list_entries(res.dir_fd, self._display(tree, res.parts))
            finally:
                os.close(res.dir_fd)

    def put(
        self, path: str, data: bytes, *, overwrite: bool = True, create_only: bool = False
    ) -> bool:
        """Write inside the workspace; the caller checks the write mode first, and passes
        ``create_only`` under CREATE_ONLY (``create_only.create_only_refusal``, judged here on the
        path as given and as resolved, and ``created_content_refusal`` on its bytes)."""
        from rho_adapters.local.write_checks import WriteChecks  # with the first write

        checks = WriteChecks(policy=self.policy, protected=self._protected)
        with os_errors(path):
            check_path_text(path)
            check_file_path(path)
            tree, parts = self._locate(path, write=True)
            checks.file(path, tree, parts, create_only=create_only)
            checks.content(path, data, create_only=create_only)

            def guard(dirs: tuple[str, ...]) -> None:  # before a directory is made
                checks.directory(path, tree, dirs, parts[-1], create_only=create_only)

            res = tree.resolve(parts, path, follow_final=False, create_dirs=True, guard=guard)
            try:
                checks.file(path, tree, res.parts, create_only=create_only)
                checks.environment(path, tree, res.parts[:-1])
                return write_bytes(res, path, data, overwrite=overwrite)
            finally:
                os.close(res.dir_fd)

    def directory(self, path: str) -> str:
        """The real path of the workspace directory ``path``, where a command runs."""
        with os_errors(path):
            tree, parts = self._locate(path, write=False)
            if tree is not self._tree:
                raise PathOutsideWorkspace(f"commands run inside the workspace, not in {path!r}")
            res = tree.resolve((*parts, "."), path, follow_final=True)
            os.close(res.dir_fd)
            return os.path.join(tree.root, *res.parts)

    def open_input(self, path: str) -> int:
        """A descriptor of the regular file ``path`` (a stage's ``< file``), the caller's to
        close; judged as a read."""
        with os_errors(path):
            tree, parts = self._locate_read(path)
            self._check_read(path, tree, parts)
            res = tree.resolve(parts, path, follow_final=True)
            try:
                self._check_read(path, tree, res.parts)
                return open_regular(res, path)
            finally:
                os.close(res.dir_fd)
