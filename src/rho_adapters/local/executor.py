"""LocalExecutor: the Executor port on this machine.

Files: every path is confined by ``Tree`` (descriptor walk, see confine.py); secrets are never
read or written, agent/editor/VCS configuration and ``protected_paths`` (the session directory)
never written, and the profile's ``file_write`` mode is enforced here, so a handler bug cannot
write in read-only mode. Commands: a ``pipeline`` is a restricted command, always validated
again (``check_argv``), hardened (``harden_argv``), resolved against a fixed program path
outside the workspace, run with a scrubbed environment and, when ``bwrap`` works, in the
sandbox of ``sandbox.py`` (read-only, homes and every secret found hidden, no network, no
sockets, its own PID namespace). Every command, restricted or not, runs under the profile's
``ResourceLimits`` (``limits``). Every path word of every stage is judged by its real path
against the secrets policy (``stage_reads.check_reads``), and so is every other name of a
secret file (a hard link: ``hardlinks.py``); git stages run through a shadow
common directory, never the repository's config (``git_shadow.py``); awk runs as the
implementation detected on this machine (``stage_argv.py``). A ``shell`` string runs through
bash only when ``allow_shell`` (the unrestricted profiles), in ``base_env`` as it is when the
command starts (``os.environ`` stays live), scrubbed of credentials. OSError is mapped to rho errors
in ``_os_errors``.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import functools
import os
import pwd
import shutil
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

from rho_adapters.local.command_env import restricted_env
from rho_adapters.local.confine import Tree
from rho_adapters.local.files import (
    info,
    list_entries,
    open_regular,
    read_bytes,
    small_names,
    write_bytes,
)
from rho_adapters.local.hardlinks import several_links
from rho_adapters.local.runner import CommandRunner
from rho_domain.errors import (
    ExecutorError,
    PathOutsideWorkspace,
    PermissionDenied,
    SensitivePath,
    ToolError,
)
from rho_domain.limits import LimitKind, ResourceLimits, limit_hit
from rho_domain.paths import (
    check_file_path,
    check_path_text,
    check_write_mode,
    components,
    is_within,
    write_refusal,
)
from rho_domain.permissions import FileWriteMode
from rho_domain.ports.executor import Executor, FileInfo
from rho_domain.reach import OutsideReads, ReadReach
from rho_domain.secrets import SecretPolicy
from rho_domain.shell.glob import expand, port_lister

if TYPE_CHECKING:  # the launcher and a command's values load with the first command
    from rho_adapters.local.process import Finished
    from rho_domain.ports.commands import Command, CommandResult, FileUpload


@contextlib.contextmanager
def _os_errors(shown: str) -> Iterator[None]:
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


def machine_homes() -> tuple[str, ...]:
    """Home directories whose credential files the policy names concretely: this user's (from
    the password database, not $HOME), root's and every directory under /home.

    Remembered per process until /home changes (its modification time, one ``stat``): a
    service opens an executor per session, and the password database and /home scan cost
    more than the rest of the executor's setup.
    """
    try:
        stamp: object = (os.getuid(), os.stat("/home").st_mtime_ns)
    except OSError:
        stamp = (os.getuid(), None)
    cached = _HOMES.get(stamp)
    if cached is not None:
        return cached
    homes = _scan_homes()
    _HOMES.clear()
    _HOMES[stamp] = homes
    return homes


_HOMES: dict[object, tuple[str, ...]] = {}  # the last scan, by its stamp


def _scan_homes() -> tuple[str, ...]:
    homes: list[str] = []
    with contextlib.suppress(KeyError):
        homes.append(pwd.getpwuid(os.getuid()).pw_dir)
    homes.append("/root")
    with contextlib.suppress(OSError):
        homes.extend(e.path for e in os.scandir("/home") if e.is_dir(follow_symlinks=False))
    return tuple(dict.fromkeys(os.path.realpath(h) for h in homes if h))


def _homes(env: Mapping[str, str]) -> tuple[str, ...]:
    """``machine_homes()`` plus the agent's ``$HOME`` when it is another directory (a service
    started with HOME=/srv/app keeps its credentials there)."""
    home = env.get("HOME")
    homes = machine_homes()
    if home in homes:
        # Already one of the scan's real paths (the usual $HOME): resolving it again per
        # executor would give itself, so the result is ``homes`` either way.
        return homes
    if home and home.startswith("/") and os.path.isdir(home):
        return tuple(dict.fromkeys((*homes, os.path.realpath(home))))
    return homes


@functools.lru_cache(maxsize=64)
def _programs_outside(path: tuple[str, ...], root: tuple[str, ...]) -> tuple[str, ...]:
    """The absolute directories of ``path`` outside ``root`` (components): a program directory
    inside the workspace would let files there pose as programs. A pure function of its
    strings, remembered per process (every Session's executor asks it)."""
    return tuple(p for p in path if p.startswith("/") and not is_within(components(p), root))


def default_search_path() -> tuple[str, ...]:
    """Where restricted programs come from: system directories and this Python's bin (rg)."""
    return ("/usr/local/bin", "/usr/bin", "/bin", os.path.dirname(sys.executable))


class LocalExecutor(Executor):
    """Executor for the local machine. See the module docstring for the guarantees."""

    def __init__(
        self,
        root: str,
        *,
        file_write: FileWriteMode = FileWriteMode.OFF,
        allow_shell: bool = False,
        extra_read_roots: Sequence[str] = (),
        protected_paths: Sequence[str] = (),
        search_path: Sequence[str] | None = None,
        base_env: Mapping[str, str] | None = None,
        sandbox: bool | None = None,
        secret_locations: Sequence[str] = (),
        homes: Sequence[str] | None = None,
        limits: ResourceLimits | None = None,
        read_outside: OutsideReads = OutsideReads.DENY,
        resolved: bool = False,
    ) -> None:
        if not os.path.isdir(root):
            raise ExecutorError(f"working directory {root!r} does not exist")
        self._given_root = os.path.abspath(root)
        # ``resolved``: the caller gives ``root`` and ``secret_locations`` as the real paths
        # it looked up for this executor just now (``build_executor``, once per Session).
        self._tree = Tree(root, real=resolved)
        self._extra = tuple(Tree(r) for r in extra_read_roots if os.path.isdir(r))
        self._protected = tuple(components(os.path.realpath(p)) for p in protected_paths)
        secret = (
            tuple(secret_locations)
            if resolved
            else tuple(os.path.realpath(p) for p in secret_locations)
        )
        self.policy = SecretPolicy(
            locations=(*(os.path.realpath(p) for p in protected_paths), *secret),
            homes=_homes(base_env or {}) if homes is None else tuple(homes),
            open_trees=(self._tree.root,),  # a workspace in ~/.config/nvim is still readable
        )
        # One rule for where reads go (rho_domain.reach): the file tools here, path words and
        # xargs items in the runner, and the sandbox's view.
        given_roots = tuple(os.path.abspath(r) for r in extra_read_roots if os.path.isdir(r))
        self.reach = ReadReach.of(
            read_outside,
            workspace=(self._given_root, self._tree.root),
            read_roots=(*given_roots, *(t.root for t in self._extra)),
            homes=self.policy.homes,
        )
        # allow: reads outside the workspace and read roots walk the machine from "/"
        self._machine = Tree("/") if read_outside is OutsideReads.ALLOW else None
        self.limits = limits if limits is not None else ResourceLimits()
        self.file_write = file_write
        self.allow_shell = allow_shell
        path = tuple(search_path) if search_path is not None else default_search_path()
        self._runner = CommandRunner(
            _programs_outside(path, self._tree.root_parts),
            base_env or {},
            sandbox=sandbox,
            visible_roots=(self._tree.root, *(t.root for t in self._extra)),
            policy=self.policy,
            limits=self.limits,
            reach=self.reach,
        )

    @property
    def working_dir(self) -> str:
        """See ``Executor.working_dir``."""
        return self._tree.root

    def unprotected(self) -> str | None:
        """What restricted commands lose here because bubblewrap is missing or cannot run
        (``sandbox.UNPROTECTED``), or None when the sandbox works or the shell is unrestricted
        (its commands never run in it). Probes bwrap once per process (milliseconds)."""
        return None if self.allow_shell else self._runner.unprotected()

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
        raise PathOutsideWorkspace(
            f"{path!r} is outside the workspace {self._tree.root}"
            + ("" if write else " and the profile's read roots (read_outside_workspace: deny)")
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

    def _check_read(self, path: str, tree: Tree, parts: tuple[str, ...] | None) -> None:
        """Refuse a secret: by the model's text (names), then by the canonical path; and a
        canonical path out of the profile's reach."""
        if reason := self.policy.refusal(path):
            raise SensitivePath(f"{reason}; it may not be read")
        if parts is not None:
            real = "/" + "/".join((*tree.root_parts, *parts))
            if reason := self.policy.refusal(real):
                raise SensitivePath(f"{path!r} resolves to a secret: {reason}; it may not be read")
            if reason := self.reach.refusal(real):
                raise PathOutsideWorkspace(f"{path!r} may not be read: {reason}")
            if several_links(real):
                self._check_hard_link(path, real)

    def _check_hard_link(self, path: str, real: str) -> None:
        """Refuse a file with several names when one of them is a secret (``hardlinks.py``)."""
        # The workspace and the file's own directory: an extra read root may be "/", too
        # large to scan on every read (a secret there is found by its name where it is).
        aliases = self._runner.aliases.get((self._tree.root, os.path.dirname(real)))
        if real in aliases.paths:
            raise SensitivePath(
                f"{path!r} is another name (a hard link) of a secrets file; it may not be read"
            )
        if not aliases.complete:
            raise SensitivePath(
                f"{path!r} has several hard links and the workspace is too large to check that "
                "none of them is a secret; it may not be read"
            )

    def _check_write(self, path: str, tree: Tree, parts: tuple[str, ...]) -> None:
        for candidate in (path, "/".join(parts)):
            if reason := write_refusal(candidate):
                raise SensitivePath(reason)
        absolute = tree.root_parts + parts
        if any(is_within(absolute, protected) for protected in self._protected):
            raise SensitivePath(f"{path!r} is inside the session directory; it is never written")

    def _display(self, tree: Tree, parts: tuple[str, ...]) -> str:
        if tree is self._machine and is_within(parts, self._tree.root_parts):
            tree, parts = self._tree, parts[len(self._tree.root_parts) :]
        if tree is self._tree:
            return "/".join(parts) or "."
        return "/".join((tree.root, *parts))

    async def stat(self, path: str) -> FileInfo:
        """See ``Executor.stat``."""
        return await asyncio.to_thread(self._stat, path)

    def _stat(self, path: str) -> FileInfo:
        with _os_errors(path):
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

    async def read(self, path: str, *, offset: int = 0, length: int | None = None) -> bytes:
        """See ``Executor.read``."""
        return await asyncio.to_thread(self._read, path, offset, length)

    def _read(self, path: str, offset: int, length: int | None) -> bytes:
        with _os_errors(path):
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

    async def list_dir(self, path: str) -> tuple[FileInfo, ...]:
        """See ``Executor.list_dir``. The path is walked on the event loop (a descriptor
        per component, as ``Tree`` confines it), and a small directory (``files.small_names``:
        one block, at most 64 names) is listed there too, then the loop is given a turn: the
        hand-off to a worker thread and back cost more than such a listing (a ``list`` of
        20 files: ~50 µs through ``to_thread`` alone, 1-3 ms on busy cores). Any other
        directory is listed in a thread, walked again there (its descriptor is never
        shared with a thread a cancelled caller would leave running). A workspace on a
        filesystem that can hang (a network mount) holds the loop while it walks."""
        with _os_errors(path):
            tree, parts = self._locate_read(path)
            res = tree.resolve((*parts, "."), path, follow_final=True)
            try:
                self._check_read(path, tree, res.parts)
                names = small_names(res.dir_fd)
                if names is not None:
                    entries = list_entries(res.dir_fd, self._display(tree, res.parts), names)
            finally:
                os.close(res.dir_fd)
        if names is None:
            return await asyncio.to_thread(self._list_dir, path)
        await asyncio.sleep(0)  # a walk over many small directories still lets others run
        return entries

    def _list_dir(self, path: str) -> tuple[FileInfo, ...]:
        with _os_errors(path):
            tree, parts = self._locate_read(path)
            res = tree.resolve((*parts, "."), path, follow_final=True)
            try:
                self._check_read(path, tree, res.parts)
                return list_entries(res.dir_fd, self._display(tree, res.parts))
            finally:
                os.close(res.dir_fd)

    async def write(self, path: str, data: bytes, *, overwrite: bool) -> bool:
        """See ``Executor.write``."""
        return await asyncio.to_thread(self._write, path, data, overwrite)

    def _write(self, path: str, data: bytes, overwrite: bool) -> bool:
        check_write_mode(path, self.file_write, overwrite=overwrite)
        return self._put(path, data, overwrite=overwrite)

    async def upload(self, files: Sequence[FileUpload]) -> None:
        """See ``Executor.upload``: into the workspace only (an absolute path elsewhere on
        this machine is refused), whatever the profile's write mode."""
        for item in files:
            await asyncio.to_thread(self._put, item.path, item.data)

    def _put(self, path: str, data: bytes, *, overwrite: bool = True) -> bool:
        """Write inside the workspace, whatever the write mode (``_write`` checks it first)."""
        with _os_errors(path):
            check_path_text(path)
            check_file_path(path)
            tree, parts = self._locate(path, write=True)
            self._check_write(path, tree, parts)
            res = tree.resolve(
                parts,
                path,
                follow_final=False,
                create_dirs=True,
                guard=lambda dirs: self._check_write(path, tree, dirs),
            )
            try:
                self._check_write(path, tree, res.parts)
                return write_bytes(res, path, data, overwrite=overwrite)
            finally:
                os.close(res.dir_fd)

    async def glob(self, pattern: str, *, cwd: str = ".") -> tuple[str, ...]:
        """See ``Executor.glob``."""
        return await expand(pattern, cwd, port_lister(self))

    async def which(self, program: str) -> str | None:
        """See ``Executor.which``."""
        return self._runner.resolve(program)

    async def run(self, command: Command) -> CommandResult:
        """See ``Executor.run``."""
        if command.shell is not None and not self.allow_shell:
            raise PermissionDenied(
                "shell commands are not allowed: this profile's shell is restricted"
            )
        cwd = await asyncio.to_thread(self._directory, command.cwd)
        stdin_fds: list[int | None] = []
        try:
            for stage in command.pipeline:
                stdin_fds.append(
                    await asyncio.to_thread(self._open_input, stage.stdin_path)
                    if stage.stdin_path is not None
                    else None
                )
            started = time.monotonic()
            with contextlib.ExitStack() as stack:
                git_env: dict[str, str] | None = None
                binds: tuple[str, ...] = ()
                if any(stage.argv[:1] == ("git",) for stage in command.pipeline):
                    inspect = await self._runner.sandbox_prefix(cwd)
                    shadow, git_env = await asyncio.to_thread(
                        stack.enter_context, self._git_shadow(cwd, inspect)
                    )
                    binds = (shadow,)
                finished = await self._runner.run(
                    command, cwd, stdin_fds, git_env=git_env, binds=binds
                )
        finally:
            for fd in stdin_fds:
                if fd is not None:
                    with contextlib.suppress(OSError):
                        os.close(fd)
        return self._result(finished, started)

    async def run_unchecked(
        self, argv: Sequence[str], *, cwd: str = ".", timeout: float = 30.0
    ) -> CommandResult:
        """Run ``argv`` in this executor's sandbox WITHOUT the argv checks (see
        ``CommandRunner.run_unchecked``): the test seam for the sandbox layer on its own. No
        tool calls it; raises ``ExecutorError`` where bubblewrap does not work."""
        directory = await asyncio.to_thread(self._directory, cwd)
        started = time.monotonic()
        finished = await self._runner.run_unchecked(argv, directory, timeout=timeout)
        return self._result(finished, started)

    def _result(self, finished: Finished, started: float) -> CommandResult:
        """The port's result for a run that started at ``started`` (monotonic), with the limit
        that ended it, if one did."""
        from rho_domain.ports.commands import CommandResult

        limit: LimitKind | None = "output" if finished.output_limited else None
        return CommandResult(
            exit_code=finished.code,
            output=finished.output,
            duration=time.monotonic() - started,
            timed_out=finished.timed_out,
            omitted_bytes=finished.omitted,
            limit=limit or limit_hit(finished.code, finished.output, self.limits),
        )

    def _git_shadow(
        self, cwd: str, prefix: tuple[str, ...]
    ) -> AbstractContextManager[tuple[str, dict[str, str]]]:
        # git's shadow (and the git rules it reads) is imported by the first git command
        from rho_adapters.local.git_shadow import git_shadow

        git = self._runner.resolve("git")
        if git is None:
            raise ToolError("git: program not installed on this machine")
        return git_shadow(git, cwd, restricted_env(self._runner.search_path), prefix)

    def _directory(self, path: str) -> str:
        with _os_errors(path):
            tree, parts = self._locate(path, write=False)
            if tree is not self._tree:
                raise PathOutsideWorkspace(f"commands run inside the workspace, not in {path!r}")
            res = tree.resolve((*parts, "."), path, follow_final=True)
            os.close(res.dir_fd)
            return os.path.join(tree.root, *res.parts)

    def _open_input(self, path: str) -> int:
        with _os_errors(path):
            tree, parts = self._locate_read(path)
            self._check_read(path, tree, parts)
            res = tree.resolve(parts, path, follow_final=True)
            try:
                self._check_read(path, tree, res.parts)
                return open_regular(res, path)
            finally:
                os.close(res.dir_fd)

    async def aclose(self) -> None:
        """Nothing is held between calls; every run cleans up its own processes."""


def sandbox_notice(search_path: Sequence[str] | None = None) -> str | None:
    """What restricted commands on this machine lose because bubblewrap is missing or cannot
    run (programs from ``search_path``, default ``default_search_path()``), or None."""
    path = default_search_path() if search_path is None else tuple(search_path)
    return CommandRunner(path, {}, sandbox=None).unprotected()


def sandbox_available() -> bool:
    """Whether the bubblewrap binary is installed (it still has to work: see CommandRunner)."""
    return shutil.which("bwrap") is not None
