"""From a restricted stage's argv as planned to the argv that runs.

``prepare`` checks the argv again (``check_argv``), judges its path words (``stage_reads``),
refuses a git object named by id that is a blob, picks the awk to run, hardens the argv
(``harden_argv``, ``secret_safe_argv``), resolves its program (and xargs' target) to an
absolute path on the runner's search path, and puts the runner's sandbox prefix in front.
Imported by the first restricted stage started (``CommandRunner.run``): a run whose tools read
files in-process never loads it, nor the argv rules it applies.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

from rho_adapters.local.command_env import restricted_env
from rho_adapters.local.stage_reads import check_reads
from rho_domain.errors import ExecutorError, SensitivePath, ToolError
from rho_domain.reach import OutsideReads

if TYPE_CHECKING:
    from rho_adapters.local.hardlinks import AliasCache
    from rho_domain.reach import ReadReach
    from rho_domain.secrets import SecretPolicy
    from rho_domain.shell.awk import AwkFlavor

# Which awk implementation a program path is (gawk, mawk, other): asked once per process.
_AWK_FLAVORS: dict[str, AwkFlavor] = {}


class StageRunner(Protocol):
    """What preparing a stage asks of the runner that will start it (``CommandRunner``):
    its search path, secrets policy, reach, sandbox roots and hard-link cache, and these."""

    search_path: tuple[str, ...]
    policy: SecretPolicy
    reach: ReadReach
    visible_roots: tuple[str, ...]
    aliases: AliasCache

    def resolve(self, program: str) -> str | None:
        """The absolute path of ``program`` on the search path, or None."""

    def stage_env(self, git_env: Mapping[str, str] | None) -> dict[str, str]:
        """The environment of a restricted stage, plus git's shadow (``git_env``)."""

    def secrets_below(self, roots: Sequence[str]) -> tuple[str, ...]:
        """The real paths of the secrets the policy finds below ``roots``."""

    @property
    def sandbox_prefix(self) -> Callable[..., Awaitable[tuple[str, ...]]]:
        """``CommandRunner.sandbox_prefix``: the argv prefix that runs a program in the
        sandbox (``cwd``, ``binds``, ``env``, ``seccomp=``, ``programs=``); empty without one."""


async def prepare(
    runner: StageRunner,
    argv: Sequence[str],
    cwd: str,
    binds: Sequence[str] = (),
    git_env: Mapping[str, str] | None = None,
) -> tuple[str, ...]:
    """The full argv of ``argv`` run by ``runner`` in ``cwd`` (see the module docstring);
    ``binds`` and ``git_env``: git's shadow, shown in the sandbox and in the environment.
    Raises what the checks raise (``ToolError``, ``SensitivePath``, ...)."""
    from rho_domain.shell.git_objects import git_object_args
    from rho_domain.shell.git_relative import cwd_history_refusal
    from rho_domain.shell.programs import check_argv, harden_argv
    from rho_domain.shell.reads import secret_safe_argv

    check_argv(argv)
    try:
        walked, policy = await asyncio.to_thread(
            check_reads,
            argv,
            cwd,
            policy=runner.policy,
            reach=runner.reach,
            visible_roots=runner.visible_roots,
            aliases=runner.aliases,
            secrets_below=runner.secrets_below,
        )
    except OSError as exc:  # a link swapped mid-lookup: EINVAL from realpath's readlink
        raise ExecutorError(
            f"{argv[0]}: a path on the way to a word changed while it was judged "
            f"({exc.strerror or exc}): nothing ran; run it again"
        ) from None
    if reason := cwd_history_refusal(argv, walked[0], policy):  # git's ./paths into history
        raise SensitivePath(reason)
    if objects := git_object_args(argv):
        prefix = await runner.sandbox_prefix(cwd, binds, runner.stage_env(git_env))
        await asyncio.to_thread(_refuse_blobs, runner, argv, objects, cwd, prefix, git_env)
    flavor: AwkFlavor = "gawk"
    if argv[0] in ("awk", "gawk"):
        argv, flavor = await asyncio.to_thread(_awk, runner, tuple(argv))
    hardened = secret_safe_argv(harden_argv(argv, awk=flavor), policy, walked, runner.reach)
    program = runner.resolve(hardened[0])
    if program is None:
        raise ToolError(f"{hardened[0]}: program not installed on this machine")
    if hardened[0] == "xargs":
        hardened = _resolve_xargs_target(runner, hardened)
    full = (program, *hardened[1:])
    env = runner.stage_env(git_env)
    # The programs this stage execs: its own and, for xargs, the guard's shell and the
    # target (words that are exactly a search-path program's resolved path).
    # Such a path starts with its search-path directory: the other words (git's hardened
    # argv has a hundred: its -c settings and secret exclusions) are not looked up.
    ran = (
        program,
        *(
            w
            for w in hardened[1:]
            if w.startswith(runner.search_path) and w == runner.resolve(os.path.basename(w))
        ),
    )
    prefix = await runner.sandbox_prefix(cwd, binds, env, seccomp=True, programs=ran)
    # bwrap's --chdir goes by path: below a root, and through the machine's own directories
    # above it under `allow` (a parent exchanged for a link started 3 of 40 commands there)
    if prefix:
        from rho_adapters.local.held_dirs import checked_below_roots

        allow = runner.reach.outside is OutsideReads.ALLOW
        full = checked_below_roots(full, cwd, runner.visible_roots, allow=allow)
    return (*prefix, *full)


def _refuse_blobs(
    runner: StageRunner,
    argv: Sequence[str],
    objects: Sequence[str],
    cwd: str,
    prefix: Sequence[str] = (),
    git_env: Mapping[str, str] | None = None,
) -> None:
    """Ask git (hardened, the stage's environment: the shadow directory, never the
    repository's config; ``prefix``: the same sandbox) the type of each object word of
    ``argv``; a blob or a tree named by id has no path the policy could judge, so it is
    refused (see ``git_objects``)."""
    git = runner.resolve("git")
    if git is None:
        return
    from rho_adapters.local.held_dirs import run_held
    from rho_domain.shell.git import HARDENING

    try:  # in the directories walked to, as the stage will run
        answer = run_held(
            [*prefix, git, *HARDENING, "cat-file", "--batch-check=%(objecttype)"],
            cwd,
            runner.visible_roots,
            input="".join(f"{o}\n" for o in objects),
            capture_output=True,
            text=True,
            env={**restricted_env(runner.search_path), **(git_env or {})},
            timeout=30,
            check=False,
        ).stdout
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ExecutorError(f"git: could not check the objects named: {exc}") from exc
    from rho_domain.shell.git_objects import objects_refusal

    if reason := objects_refusal(argv, objects, answer):
        raise SensitivePath(reason)


def _awk(runner: StageRunner, argv: tuple[str, ...]) -> tuple[tuple[str, ...], AwkFlavor]:
    """The awk to run: gawk when installed (--sandbox), else ``awk``, its kind detected once."""
    if runner.resolve("gawk") is not None:
        return ("gawk", *argv[1:]), "gawk"
    program = runner.resolve(argv[0])
    if program is None:
        raise ToolError(f"{argv[0]}: program not installed on this machine")
    if program not in _AWK_FLAVORS:
        from rho_domain.shell.awk import VERSION_ARGS, flavor_from_version

        try:
            done = subprocess.run(
                (program, *VERSION_ARGS),
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=10,
                env=restricted_env(runner.search_path),
                check=False,
            )
            text = (done.stdout + done.stderr).decode("utf-8", "replace")
        except (OSError, subprocess.TimeoutExpired):
            text = ""
        _AWK_FLAVORS[program] = flavor_from_version(text)
    return argv, _AWK_FLAVORS[program]


def _resolve_xargs_target(runner: StageRunner, argv: tuple[str, ...]) -> tuple[str, ...]:
    """Absolute paths for the guard's shell and the program it execs."""
    from rho_domain.shell.programs import xargs_target_index
    from rho_domain.shell.reads import GUARD_NAME

    out = list(argv)
    index = 1 + xargs_target_index(argv[1:])
    indexes = [index]
    if GUARD_NAME in argv[index:]:
        indexes.append(argv.index(GUARD_NAME, index) + 1)
    for i in indexes:
        target = runner.resolve(argv[i])
        if target is None:
            raise ToolError(f"{argv[i]}: program not installed on this machine")
        out[i] = target
    return tuple(out)
