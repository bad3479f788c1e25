"""CommandRunner: turns a ``Command`` into processes, pipes, environment and sandbox.

Restricted pipelines: each stage is re-validated and hardened (domain rules), its program
resolved to an absolute path in the fixed search path, and, when bubblewrap works, it runs
inside the sandbox of ``sandbox.py`` (a read-only view of the machine with every secret
hidden, no network, its own PID namespace, an environment built from nothing). Unrestricted
shell strings run through ``bash --noprofile --norc -c`` with the caller's environment minus
credentials. Every command runs under the profile's ``ResourceLimits``: rlimits (set by the
guard before its exec, by ``rlimits.py``'s launcher for the sandbox; RLIMIT_FSIZE 0 for a
restricted command without a sandbox: no file can grow) and an output limit that kills it.

Here: whether the sandbox works (bwrap probed once per process), its argv prefix, each
command's environment and limits, and the order of the steps; a stage's argv is prepared by
``stage_argv.py`` (its reads judged by ``stage_reads.py``), the pipeline started by
``pipeline_spawn.py``, the environments built by ``command_env.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from rho_adapters.local import sandbox as bwrap
from rho_adapters.local.hardlinks import AliasCache
from rho_adapters.local.seccomp import FILTER, FILTER_FD
from rho_domain.errors import ExecutorError, ToolError
from rho_domain.limits import ResourceLimits
from rho_domain.reach import OutsideReads, ReadReach
from rho_domain.secrets import SecretPolicy

# The shell's argv rules (program table, option specs, git, awk) are imported by the methods
# that apply them, at the first program started, and so are the modules only a command needs
# (``stage_argv``, ``stage_reads``, ``pipeline_spawn``, ``command_env``, ``process``,
# ``rlimits``, ``guard``): a run whose tools read files in-process (list, read, grep's walk)
# does not load them. Every argv is still checked before it runs.
if TYPE_CHECKING:
    from rho_adapters.local.process import Finished
    from rho_adapters.local.secret_scan import SecretScan
    from rho_domain.ports.commands import Command

# Whether a bwrap binary works on this machine (namespaces allowed), and which optional walls
# it takes (a user namespace of its own, the seccomp filter): probed once per process, in
# ``_AHEAD``'s thread when a run asked for it early (``probe_ahead``).
_PROBED: dict[str, tuple[bool, bool] | None] = {}
_AHEAD: dict[str, threading.Thread] = {}


def find_program(search_path: Sequence[str], program: str) -> str | None:
    """The absolute path of ``program`` in the first directory of ``search_path`` holding it
    as an executable file, or None (a name with a slash is never resolved)."""
    if "/" in program:
        return None
    for directory in search_path:
        candidate = os.path.join(directory, program)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def probe_ahead(search_path: Sequence[str]) -> None:
    """Start probing the bwrap found on ``search_path`` in a thread of its own, once per
    process (nothing when there is none, or it is probed already): a bwrap process waited
    for (~10 ms), started by a run before its other start-up work; the executor's
    ``unprotected`` finds the answer, or waits for it. Same answer as without it."""
    program = find_program(search_path, "bwrap")
    if program is None or program in _PROBED or program in _AHEAD:
        return

    def probe() -> None:  # an ExecutorError (no descriptor left) is raised again by _probed
        with contextlib.suppress(ExecutorError):
            _PROBED[program] = bwrap.probe(program)

    # A daemon: a process that ends before asking does not wait for it (10 s at most).
    thread = threading.Thread(target=probe, name="rho-bwrap-probe", daemon=True)
    _AHEAD[program] = thread
    thread.start()


def _probed(program: str) -> tuple[bool, bool] | None:
    """The probe's answer for ``program``: the one started ahead (waited for), else now."""
    ahead = _AHEAD.get(program)
    if ahead is not None:
        ahead.join()
    if program not in _PROBED:  # never started, or its thread died
        _PROBED[program] = bwrap.probe(program)
    return _PROBED[program]


class CommandRunner:
    """Starts planned stages as processes: resolved programs, a scrubbed environment,
    limits, and the bubblewrap sandbox where it works."""

    def __init__(
        self,
        search_path: Sequence[str],
        base_env: Mapping[str, str],
        *,
        sandbox: bool | None,
        visible_roots: Sequence[str] = (),
        policy: SecretPolicy | None = None,
        limits: ResourceLimits | None = None,
        reach: ReadReach | None = None,
    ) -> None:
        self.search_path = tuple(search_path)
        # Where path words may lead (``rho_domain.reach``); deny also confines the sandbox.
        self.reach = reach if reach is not None else ReadReach()
        # Bound again on top of the private /tmp, so a workspace under /tmp stays visible.
        self.visible_roots = tuple(visible_roots)
        # Kept, not copied: scrubbed as each shell command starts (``os.environ`` stays live).
        self.base_env = base_env
        self.policy = policy if policy is not None else SecretPolicy()
        self.limits = limits if limits is not None else ResourceLimits()
        self._walk: SecretScan | None = None  # the secrets walk, at the first sandboxed command
        self.aliases = AliasCache(self.policy)
        self._sandbox_wanted = sandbox
        self._sandbox: bool | None = None if sandbox is not False else False
        self._walls = (True, FILTER is not None)  # (user namespace, seccomp), once probed

    def resolve(self, program: str) -> str | None:
        """The absolute path of ``program`` on the search path, or None (a name with a
        slash is never resolved)."""
        return find_program(self.search_path, program)

    async def sandboxed(self) -> bool:
        """Whether restricted commands run under bubblewrap (probed once)."""
        if self._sandbox is None:
            await asyncio.to_thread(self._decide)
        return bool(self._sandbox)

    def _decide(self) -> None:
        program = self.resolve("bwrap")
        walls: tuple[bool, bool] | None = None
        if program is not None:
            walls = _probed(program)
        if self._sandbox_wanted and walls is None:
            raise ExecutorError("the bubblewrap sandbox was required but does not work here")
        self._walls = walls or (False, False)
        self._sandbox = walls is not None

    def unprotected(self) -> str | None:
        """What restricted commands lose on this machine, or None when the sandbox works
        (probes bwrap here, once per process: a blocking call of a few milliseconds)."""
        if self._sandbox is None:
            self._decide()
        return None if self._sandbox else bwrap.UNPROTECTED

    async def sandbox_prefix(
        self,
        cwd: str,
        binds: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        *,
        seccomp: bool = False,
        programs: Sequence[str] = (),
    ) -> tuple[str, ...]:
        """The argv prefix that runs a program in the sandbox in ``cwd`` with ``env`` (the
        restricted environment by default), its masks checked; empty without a sandbox. With
        ``seccomp`` (the commands; ``spawn_pipeline`` gives the filter) no socket can be
        opened. ``programs``: the stage's programs, whose real directories a confined
        sandbox shows too (``/usr/local/bin/rg`` may be a link into ``/opt``)."""
        if not await self.sandboxed():
            return ()
        program = self.resolve("bwrap")
        assert program is not None
        args = await asyncio.to_thread(
            self._bwrap_args, cwd, binds, env, seccomp=seccomp, programs=programs
        )
        return (program, *args)

    def _secret_scan(self) -> SecretScan:
        """The walk that finds what the sandbox hides, made with the first sandboxed command."""
        if self._walk is None:
            from rho_adapters.local.secret_scan import SecretScan

            self._walk = SecretScan(self.policy)
        return self._walk

    def secrets_below(self, roots: Sequence[str]) -> tuple[str, ...]:
        """Every secret file and directory below ``roots`` (the sandbox's walk, SecretScan)."""
        return self._secret_scan().masks(roots).paths()

    def _bwrap_args(
        self,
        cwd: str,
        binds: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        *,
        seccomp: bool = False,
        programs: Sequence[str] = (),
    ) -> list[str]:
        """Bwrap's arguments (``sandbox.py``: the roots shown, every secret below hidden,
        scanned now), its ``--`` and the check of its masks (``mask_check.py``)."""
        from rho_adapters.local.command_env import restricted_env
        from rho_adapters.local.mask_check import mask_checked

        real_dirs = tuple(os.path.dirname(os.path.realpath(p)) for p in programs)
        view = bwrap.layout(
            self.visible_roots,
            (*self.search_path, *real_dirs),
            self.policy,
            confined=self.reach.outside is OutsideReads.DENY and bool(self.reach.closed),
        )
        masks = bwrap.scan(self._secret_scan(), view, self.policy, (cwd,), held=self.visible_roots)
        return [*bwrap.bwrap_args(
            view,
            masks,
            cwd=cwd,
            env=restricted_env(self.search_path) if env is None else env,
            binds=binds,
            tmp_bytes=self.limits.file_size_bytes,
            userns=self._walls[0],
            seccomp_fd=FILTER_FD if seccomp and self._walls[1] else None,
        ), "--", *mask_checked(masks, cwd)]  # fmt: skip

    async def run(
        self,
        command: Command,
        cwd: str,
        stdin_fds: Sequence[int | None],
        *,
        git_env: Mapping[str, str] | None = None,
        binds: Sequence[str] = (),
    ) -> Finished:
        """Run ``command`` in ``cwd``. ``git_env`` (restricted pipelines) is added to the
        environment and ``binds`` are shown read-only inside the sandbox: the git shadow."""
        from rho_adapters.local.command_env import shell_env
        from rho_adapters.local.guard import guarded
        from rho_adapters.local.pipeline_spawn import spawn_pipeline

        if command.shell is not None:
            bash = ("/bin/bash", "--noprofile", "--norc", "-c", command.shell)
            argvs = [guarded(bash, self._rlimits(self.limits.file_size_bytes))]
            env = shell_env(self.base_env, self.search_path)
            stages_null = [(False, "capture")]
            datas: list[str | None] = [None]
            stdin_fds = [None]
        else:
            from rho_adapters.local.stage_argv import prepare

            argvs = [
                await prepare(self, stage.argv, cwd, binds, git_env) for stage in command.pipeline
            ]
            env = self.stage_env(git_env)
            if await self.sandboxed():  # inside, only the sandbox's private tmpfs can grow
                argvs = [self._limited(argv, self.limits.file_size_bytes) for argv in argvs]
            else:  # the guard: what bubblewrap's --die-with-parent does, and no file may grow
                argvs = [guarded(argv, self._rlimits(0)) for argv in argvs]
            stages_null = [(s.stdout_null, s.stderr) for s in command.pipeline]
            datas = [s.stdin_data for s in command.pipeline]
        if not argvs:
            raise ToolError("empty command")
        kill_after = self.limits.output_bytes
        given = (argvs, stages_null, datas, stdin_fds, cwd, env, command)
        return await spawn_pipeline(*given, kill_after=kill_after, roots=self.visible_roots)

    async def run_unchecked(
        self, argv: Sequence[str], cwd: str, *, timeout: float = 30.0, cap: int = 256 * 1024
    ) -> Finished:
        """Run ``argv`` as a restricted stage runs (its sandbox, cwd check, environment and
        limits) WITHOUT the argv checks (no validation, hardening or real-path judgement): the
        sandbox alone, for the tests of that wall (test_sandbox_alone.py; never the executor).
        ``ExecutorError`` where there is no sandbox: there would be no wall to test."""
        if not await self.sandboxed():
            raise ExecutorError("no bubblewrap sandbox on this machine: nothing to run inside")
        from rho_adapters.local.held_dirs import checked_below_roots
        from rho_adapters.local.pipeline_spawn import spawn_pipeline
        from rho_domain.ports.commands import Command

        prefix = await self.sandbox_prefix(cwd, seccomp=True)  # and its check of the cwd:
        allow = self.reach.outside is OutsideReads.ALLOW
        checked = checked_below_roots(argv, cwd, self.visible_roots, allow=allow)
        full = self._limited((*prefix, *checked), self.limits.file_size_bytes)
        command = Command(pipeline=(), timeout=timeout, max_output_bytes=cap)
        env, kill_after = self.stage_env(None), self.limits.output_bytes
        given = ([full], [(False, "capture")], [None], [None], cwd, env, command)
        return await spawn_pipeline(*given, kill_after=kill_after, roots=self.visible_roots)

    def stage_env(self, git_env: Mapping[str, str] | None) -> dict[str, str]:
        """The environment of a restricted stage: nothing inherited, plus git's shadow."""
        from rho_adapters.local.command_env import restricted_env

        return {**restricted_env(self.search_path), **(git_env or {})}

    def _rlimits(self, file_size: int | None) -> list[tuple[str, int, int]]:
        """The profile's rlimits as (name, soft, hard), ``file_size`` decided by the caller."""
        from rho_adapters.local.rlimits import profile_rlimits

        return profile_rlimits(self.limits, file_size=file_size).pairs()

    def _limited(self, argv: Sequence[str], file_size: int | None) -> tuple[str, ...]:
        """``argv`` (a sandbox's: no guard runs it) under the profile's rlimits (set by the
        launcher in front of it, ``rlimits.limited``)."""
        from rho_adapters.local.rlimits import limited, profile_rlimits

        limits = profile_rlimits(self.limits, file_size=file_size)
        return limited(argv, limits, prlimit=self.resolve("prlimit"))
