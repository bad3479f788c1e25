"""LocalExecutor: the Executor port on this machine.

Files (``workspace.py``): every path is confined by ``Tree`` (descriptor walk, see confine.py);
secrets are never read or written, agent/editor/VCS configuration and ``protected_paths`` (the
session directory) never written, and the profile's ``file_write`` mode is enforced here, so a
handler bug cannot write in read-only mode. Commands: a ``pipeline`` is a restricted command,
always validated again (``check_argv``), hardened (``harden_argv``), resolved against a fixed
program path outside the workspace, run with a scrubbed environment and, when ``bwrap`` works,
in the sandbox of ``sandbox.py`` (read-only, homes and every secret found hidden, no network,
no sockets, its own PID namespace). Every command, restricted or not, runs under the profile's
``ResourceLimits`` (``limits``). Every path word of every stage is judged by its real path
against the secrets policy (``stage_reads.check_reads``), and so is every other name of a
secret file (a hard link: ``hardlinks.py``); git stages run through a shadow common directory,
never the repository's config (``git_shadow.py``); awk runs as the implementation detected on
this machine (``stage_argv.py``). A ``shell`` string runs through bash only when
``allow_shell`` (the unrestricted profiles), in ``base_env`` as it is when the command starts
(``os.environ`` stays live), scrubbed of credentials. OSError is mapped to rho errors in
``workspace.os_errors``.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import time
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

from rho_adapters.local.confine import Tree
from rho_adapters.local.git_named import git_named_origins
from rho_adapters.local.homes import agent_homes, environment_secrets
from rho_adapters.local.programs import default_search_path, programs_outside
from rho_adapters.local.programs import (  # re-exported: where the tests have long found it
    sandbox_available as sandbox_available,
)
from rho_adapters.local.runner import CommandRunner
from rho_adapters.local.workspace import Workspace
from rho_domain.errors import (
    ExecutorError,
    PermissionDenied,
    ToolError,
)
from rho_domain.limits import LimitKind, ResourceLimits, limit_hit
from rho_domain.paths import components
from rho_domain.permissions import FileWriteMode
from rho_domain.ports.executor import Executor, FileInfo, Placement, PlacementTold
from rho_domain.reach import OutsideReads, ReadReach
from rho_domain.secrets import SecretPolicy

if TYPE_CHECKING:  # the launcher and a command's values load with the first command
    from rho_adapters.local.process import Finished
    from rho_domain.ports.commands import Command, CommandResult, FileUpload


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
            state = "is not a directory" if os.path.exists(root) else "does not exist"
            raise ExecutorError(f"working directory {root!r} {state}")
        given_root = os.path.abspath(root)
        # ``resolved``: ``root`` and ``secret_locations`` are real paths (``build_executor``)
        tree = Tree(root, real=resolved)
        extra = tuple(Tree(r, read_root=True) for r in extra_read_roots if os.path.isdir(r))
        secret = secret_locations if resolved else [os.path.realpath(p) for p in secret_locations]
        # the environment as it is now, copied once for the secrets below (each os.environ
        # lookup encodes and decodes); commands still read ``base_env`` live
        env = dict(base_env) if base_env is not None else {}
        known_homes = agent_homes(env) if homes is None else tuple(homes)
        held = (tree.root, *(t.root for t in extra))
        origins = git_named_origins(held, known_homes, env, resolved=True)
        origins += environment_secrets(env, (*held, *known_homes))
        named = tuple(path for path, _ in origins if not path.startswith("*/"))
        protected = [os.path.realpath(p) for p in protected_paths]  # once: a lstat a component
        self.policy = SecretPolicy(
            locations=(*protected, *secret, *named),
            anywhere=tuple(path[2:] for path, _ in origins if path.startswith("*/")),
            homes=known_homes,
            open_trees=(tree.root,),  # a workspace in ~/.config/nvim is still readable
            named_by=origins,
        )
        # One rule for where reads go (rho_domain.reach): the file tools here, path words and
        # xargs items in the runner, and the sandbox's view.
        given_roots = tuple(os.path.abspath(r) for r in extra_read_roots if os.path.isdir(r))
        self.reach = ReadReach.of(
            read_outside,
            workspace=(given_root, tree.root),
            read_roots=(*given_roots, *(t.root for t in extra)),
            homes=self.policy.homes,
        )
        self.limits = limits if limits is not None else ResourceLimits()
        self.file_write = file_write
        self.allow_shell = allow_shell
        path = tuple(search_path) if search_path is not None else default_search_path()
        self._runner = CommandRunner(
            programs_outside(path, tree.root_parts),
            base_env or {},
            sandbox=sandbox,
            visible_roots=(tree.root, *(t.root for t in extra)),
            policy=self.policy,
            limits=self.limits,
            reach=self.reach,
        )
        self._workspace = Workspace(
            tree,
            given_root=given_root,
            extra=extra,
            # allow: reads outside the workspace and read roots walk the machine from "/"
            machine=Tree("/") if read_outside is OutsideReads.ALLOW else None,
            protected=[components(p) for p in protected],
            policy=self.policy,
            reach=self.reach,
            aliases=self._runner.aliases,
        )

    placement = Placement(backend="local")  # ``Executor.placement``: this machine

    def on_placed(self, told: PlacementTold | None) -> None:
        """See ``Executor.on_placed``: the place never changes, so no one is ever told."""
        return

    @property
    def working_dir(self) -> str:
        """See ``Executor.working_dir``."""
        return self._workspace.root

    def unprotected(self) -> str | None:
        """What restricted commands lose here because bubblewrap is missing or cannot run
        (``sandbox.UNPROTECTED``), or None when the sandbox works or the shell is unrestricted
        (its commands never run in it). Probes bwrap once per process (milliseconds)."""
        return None if self.allow_shell else self._runner.unprotected()

    async def stat(self, path: str) -> FileInfo:
        """See ``Executor.stat``."""
        return await asyncio.to_thread(self._workspace.stat, path)

    async def read(self, path: str, *, offset: int = 0, length: int | None = None) -> bytes:
        """See ``Executor.read``."""
        return await asyncio.to_thread(self._workspace.read, path, offset, length)

    async def list_dir(self, path: str) -> tuple[FileInfo, ...]:
        """See ``Executor.list_dir``. The path is walked on the event loop (a descriptor
        per component, as ``Tree`` confines it), and a small directory (``files.small_names``:
        one block, at most 64 names) is listed there too while the alias scan that judges it
        is fresh (``AliasCache``: a thread makes it, at most every two seconds), then the
        loop is given a turn: the
        hand-off to a worker thread and back cost more than such a listing (a ``list`` of
        20 files: ~50 µs through ``to_thread`` alone, 1-3 ms on busy cores). Any other
        directory is listed in a thread, walked again there (its descriptor is never
        shared with a thread a cancelled caller would leave running). A workspace on a
        filesystem that can hang (a network mount) holds the loop while it walks."""
        entries = self._workspace.list_small(path)
        if entries is None:
            return await asyncio.to_thread(self._workspace.list_dir, path)
        await asyncio.sleep(0)  # a walk over many small directories still lets others run
        return entries

    async def write(self, path: str, data: bytes, *, overwrite: bool) -> bool:
        """See ``Executor.write``."""
        return await asyncio.to_thread(self._write, path, data, overwrite)

    def _write(self, path: str, data: bytes, overwrite: bool) -> bool:
        from rho_domain.write_rules import check_write_mode  # with the first file written

        check_write_mode(path, self.file_write, overwrite=overwrite)
        create_only = self.file_write is FileWriteMode.CREATE_ONLY
        return self._workspace.put(path, data, overwrite=overwrite, create_only=create_only)

    async def upload(self, files: Sequence[FileUpload]) -> None:
        """See ``Executor.upload``: into the workspace only (an absolute path elsewhere on
        this machine is refused), whatever the profile's write mode."""
        for item in files:
            await asyncio.to_thread(self._workspace.put, item.path, item.data)

    async def glob(self, pattern: str, *, cwd: str = ".") -> tuple[str, ...]:
        """See ``Executor.glob``."""
        from rho_domain.shell.glob import expand, port_lister  # with the first glob

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
        cwd = await asyncio.to_thread(self._workspace.directory, command.cwd)
        stdin_fds: list[int | None] = []
        try:
            for stage in command.pipeline:
                stdin_fds.append(
                    await asyncio.to_thread(self._workspace.open_input, stage.stdin_path)
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
        except OSError as exc:  # a link swapped mid-lookup: realpath's readlink says EINVAL
            full = exc.errno in (errno.EMFILE, errno.ENFILE)
            hint = "raise the open file limit (ulimit -n)" if full else "a path changed meanwhile?"
            raise ExecutorError(
                f"{exc.filename or 'the command'}: {exc.strerror or exc} while the command was "
                f"prepared; nothing ran ({hint})"
            ) from None
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
        directory = await asyncio.to_thread(self._workspace.directory, cwd)
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
        from rho_adapters.local.command_env import restricted_env
        from rho_adapters.local.git_shadow import git_shadow

        git = self._runner.resolve("git")
        if git is None:
            raise ToolError("git: program not installed on this machine")
        env = restricted_env(self._runner.search_path)
        judged, roots = (self.policy, self.reach), self._runner.visible_roots
        return git_shadow(git, cwd, env, prefix, judged, aliases=self._alias_policy, roots=roots)

    def _alias_policy(self, roots: Sequence[str]) -> tuple[SecretPolicy, bool]:
        """The policy with the hard links of secrets below the workspace and ``roots`` as
        secrets too, and whether the scan was whole (``hardlinks.py``)."""
        from rho_adapters.local.hardlinks import with_aliases
        from rho_domain.reach import held_roots

        # The repository's own directories may be in a read root (a linked worktree's main
        # repository): the read root holding one is scanned whole for the secrets it holds.
        held = held_roots(self._runner.visible_roots[1:], roots)
        found = self._runner.aliases.get((self._workspace.root, *roots, *held))
        return with_aliases(self.policy, found), found.complete

    async def aclose(self) -> None:
        """Nothing is held between calls; every run cleans up its own processes."""
