"""CommandRunner: turns a ``Command`` into processes, pipes, environment and sandbox.

Restricted pipelines: each stage is re-validated and hardened (domain rules), its program
resolved to an absolute path in the fixed search path, and, when bubblewrap works, it runs
inside the sandbox of ``sandbox.py`` (a read-only view of the machine with every secret
hidden, no network, its own PID namespace, an environment built from nothing). Unrestricted
shell strings run through ``bash --noprofile --norc -c`` with the caller's environment minus
credentials. Every command runs under the profile's ``ResourceLimits``: rlimits set by a
launcher in front of it (``rlimits.py``; RLIMIT_FSIZE is 0 for a restricted command without a
sandbox: no data can be written to any file) and an output limit that kills it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import subprocess
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from rho_adapters.local import sandbox as bwrap
from rho_adapters.local.hardlinks import AliasCache, several_links, with_aliases
from rho_adapters.local.seccomp import FILTER, FILTER_FD, with_filter
from rho_domain.errors import ExecutorError, PathOutsideWorkspace, SensitivePath, ToolError
from rho_domain.limits import ResourceLimits
from rho_domain.paths import MAX_PATH
from rho_domain.reach import OutsideReads, ReadReach
from rho_domain.secrets import SecretPolicy

# The shell's argv rules (program table, option specs, git, awk) are imported by the methods
# that apply them, at the first program started, and so are the process launcher, the rlimits
# launcher and the guard (``process``, ``rlimits``, ``guard``): a run whose tools read files
# in-process (list, read, grep's walk) does not load them. Every argv is still checked before
# it runs.
if TYPE_CHECKING:
    from rho_adapters.local.process import Finished
    from rho_adapters.local.secret_scan import SecretScan
    from rho_domain.ports.commands import Command
    from rho_domain.shell.awk import AwkFlavor

# compiled by re (and kept in its cache) with the first environment scrubbed, not at import
_CREDENTIAL_NAMES = r"(?i)KEY|SECRET|TOKEN|PASSWORD|PASSWD|CREDENTIAL|AUTH|COOKIE|SESSION"
_DROPPED_VARS = frozenset(
    {"BASH_ENV", "ENV", "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "PROMPT_COMMAND",
     "GIT_EXTERNAL_DIFF", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_ASKPASS", "SSH_ASKPASS",
     "RIPGREP_CONFIG_PATH", "GIT_CONFIG_PARAMETERS", "GIT_DIR", "GIT_WORK_TREE"}
)  # fmt: skip
_SANDBOX_DIR = bwrap.SANDBOX_TMP
# Whether a bwrap binary works on this machine (namespaces allowed), and which optional walls
# it takes (a user namespace of its own, the seccomp filter): probed once per process, in
# ``_AHEAD``'s thread when a run asked for it early (``probe_ahead``).
_PROBED: dict[str, tuple[bool, bool] | None] = {}
_AHEAD: dict[str, threading.Thread] = {}
MAX_STDIN_DATA = 60_000  # stays below a pipe buffer, so writing it can never block
# Which awk implementation a program path is (gawk, mawk, other): asked once per process.
_AWK_FLAVORS: dict[str, AwkFlavor] = {}


def scrub_env(env: Mapping[str, str]) -> dict[str, str]:
    """The environment minus credentials (*KEY*, *SECRET*, *TOKEN*, ...) and code-loading hooks."""
    return {
        k: v
        for k, v in env.items()
        if not re.search(_CREDENTIAL_NAMES, k)
        and k not in _DROPPED_VARS
        and not k.startswith("BASH_FUNC_")
    }


def restricted_env(search_path: Sequence[str]) -> dict[str, str]:
    """A fresh environment for restricted commands: nothing inherited."""
    return {
        "PATH": ":".join(search_path),
        "LC_ALL": "C.UTF-8",
        "LANG": "C.UTF-8",
        # Not a directory, so nothing is ever found below it: jq loads ~/.jq into every
        # program (it may import files), and without the sandbox /tmp is the host's.
        "HOME": "/dev/null",
        "TMPDIR": _SANDBOX_DIR,
        "PAGER": "cat",
        "GIT_PAGER": "cat",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_OPTIONAL_LOCKS": "0",
        "GIT_ATTR_NOSYSTEM": "1",
    }


def _user_process_count() -> int:
    uid = os.getuid()
    count = 0
    with contextlib.suppress(OSError):
        for entry in os.scandir("/proc"):
            if entry.name.isdigit():
                with contextlib.suppress(OSError):
                    count += entry.stat().st_uid == uid
    return count


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
    process (nothing when there is none, or it is probed already). The probe is a bwrap
    process started and waited for (~10 ms, mostly waiting): a run that will build a
    restricted executor starts it before its other start-up work, and the executor's
    ``unprotected`` then finds the answer, or waits for the rest of it. Same probe, same
    answer as without it."""
    program = find_program(search_path, "bwrap")
    if program is None or program in _PROBED or program in _AHEAD:
        return

    def probe() -> None:
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
        # Kept, not copied: read (and scrubbed) as each unrestricted command starts, so
        # ``os.environ`` passed here stays live, and opening a session copies nothing.
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
        restricted environment by default); empty without a sandbox. With ``seccomp`` (the
        commands themselves; ``_spawn`` provides the filter) no socket can be opened.
        ``programs``: the programs the stage runs, whose real directories a confined sandbox
        shows too (``/usr/local/bin/rg`` may be a link into ``/opt``)."""
        if not await self.sandboxed():
            return ()
        program = self.resolve("bwrap")
        assert program is not None
        args = await asyncio.to_thread(
            self._bwrap_args, cwd, binds, env, seccomp=seccomp, programs=programs
        )
        return (program, *args, "--")

    def _secret_scan(self) -> SecretScan:
        """The walk that finds what the sandbox hides, made (and its module imported) with the
        first sandboxed command: a run whose tools read in-process never walks."""
        if self._walk is None:
            from rho_adapters.local.secret_scan import SecretScan

            self._walk = SecretScan(self.policy)
        return self._walk

    def _bwrap_args(
        self,
        cwd: str,
        binds: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        *,
        seccomp: bool = False,
        programs: Sequence[str] = (),
    ) -> list[str]:
        """Arguments for bwrap (see ``sandbox.py``): this runner's roots shown, every secret
        found below them hidden (scanned now: listings are reused while unchanged)."""
        real_dirs = tuple(os.path.dirname(os.path.realpath(p)) for p in programs)
        view = bwrap.layout(
            self.visible_roots,
            (*self.search_path, *real_dirs),
            self.policy,
            confined=self.reach.outside is OutsideReads.DENY and bool(self.reach.closed),
        )
        masks = bwrap.scan(self._secret_scan(), view, self.policy, (cwd,))
        return bwrap.bwrap_args(
            view,
            masks,
            cwd=cwd,
            env=restricted_env(self.search_path) if env is None else env,
            binds=binds,
            tmp_bytes=self.limits.file_size_bytes,
            userns=self._walls[0],
            seccomp_fd=FILTER_FD if seccomp and self._walls[1] else None,
        )

    def check_reads(self, argv: Sequence[str], cwd: str) -> tuple[list[str], SecretPolicy]:
        """Refuse a stage naming a secret by any real path or by another name of the same file
        (a hard link, ``hardlinks.py``); return the canonical directories it may walk (its
        directory operands and ``cwd``) and the policy its recursive readers and ``xargs``
        guard must apply (the hard links found are secret locations in it)."""
        from rho_domain.shell.texts import reach_words

        # Reach judges the words a program may open, not its pattern or script (texts.py).
        opened = reach_words(argv)
        walked, linked = self._judge_words(argv, cwd, self.policy, reach=self.reach, opened=opened)
        # The workspace (not the extra read roots: one may be "/"), what this stage walks and
        # the directories of the files with several links it names. A directory named only
        # by a text (a pattern, ``awk -F/``'s separator: not in ``opened``) is no tree the
        # stage opens: walking it for aliases cost a whole file system for ``-F/``.
        named = {os.path.realpath(os.path.join(cwd, word)) for word in opened}
        trees = [walked[0], *(d for d in walked[1:] if d in named)]
        roots = (*self.visible_roots[:1], *trees, *map(os.path.dirname, linked))
        aliases = self.aliases.get(roots)
        if linked and not aliases.complete:
            raise SensitivePath(
                f"{argv[0]}: {linked[0]} has several hard links and the workspace is too large "
                "to check that none of them is a secret; read a copy with one name"
            )
        policy = with_aliases(self.policy, aliases)
        if policy is not self.policy:
            self._judge_words(argv, cwd, policy, aliases.paths)
        return walked, policy

    @staticmethod
    def _judge_words(
        argv: Sequence[str],
        cwd: str,
        policy: SecretPolicy,
        aliases: Sequence[str] = (),
        *,
        reach: ReadReach | None = None,
        opened: frozenset[str] = frozenset(),
    ) -> tuple[list[str], list[str]]:
        """Judge every path word by ``policy`` (``aliases``: hard links to secrets), then the
        real path of each word the program may open (``opened``) by ``reach``; return (walked
        directories, real paths of files with several links)."""
        walked = [os.path.realpath(cwd)]
        if reason := policy.refusal(walked[0]):
            raise SensitivePath(
                f"{argv[0]}: commands may not run inside a secret location: {reason}"
            )
        linked: list[str] = []
        from rho_domain.shell.reads import path_words

        for word in path_words(argv):
            full = os.path.join(cwd, word)  # an absolute word stays absolute
            if len(full) > MAX_PATH or "\x00" in full:
                continue
            try:
                os.lstat(full)
            except (OSError, ValueError):
                continue  # names nothing: a pattern, a value, a missing file
            real = os.path.realpath(full)
            if real in aliases:
                raise SensitivePath(
                    f"{argv[0]}: {word} may not be read: it is another name (a hard link) of a "
                    "secrets file"
                )
            for candidate in (full, real):
                if reason := policy.refusal(candidate):
                    shown = word if candidate == full else f"{word!r} (really {real})"
                    raise SensitivePath(f"{argv[0]}: {shown} may not be read: {reason}")
            if reach is not None and word in opened and (reason := reach.refusal(real)):
                shown = word if real == os.path.normpath(full) else f"{word!r} (really {real})"
                raise PathOutsideWorkspace(f"{argv[0]}: {shown} may not be read: {reason}")
            if os.path.isdir(real):
                walked.append(real)
            elif several_links(real):
                linked.append(real)
        return walked, linked

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
        from rho_adapters.local.guard import guarded

        if command.shell is not None:
            argvs: list[tuple[str, ...]] = [
                guarded(("/bin/bash", "--noprofile", "--norc", "-c", command.shell))
            ]
            env = scrub_env(self.base_env)
            env.setdefault("PATH", ":".join(self.search_path))
            env.update({"PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0"})
            file_size = self.limits.file_size_bytes
            stages_null = [(False, "capture")]
            datas: list[str | None] = [None]
            stdin_fds = [None]
        else:
            argvs = [
                await self._prepare(stage.argv, cwd, binds, git_env) for stage in command.pipeline
            ]
            env = self._stage_env(git_env)
            sandbox = await self.sandboxed()
            if not sandbox:  # bubblewrap's --die-with-parent does this inside the sandbox
                argvs = [guarded(argv) for argv in argvs]
            # Without a sandbox no file may grow at all; inside, only its private tmpfs can.
            file_size = self.limits.file_size_bytes if sandbox else 0
            stages_null = [(s.stdout_null, s.stderr) for s in command.pipeline]
            datas = [s.stdin_data for s in command.pipeline]
        if not argvs:
            raise ToolError("empty command")
        argvs = [self._limited(argv, file_size) for argv in argvs]
        return await self._spawn(argvs, stages_null, datas, stdin_fds, cwd, env, command)

    async def run_unchecked(
        self, argv: Sequence[str], cwd: str, *, timeout: float = 30.0, cap: int = 256 * 1024
    ) -> Finished:
        """Run ``argv`` exactly as a restricted stage runs (the same sandbox, environment and
        limits) but WITHOUT the argv checks: no validation, no hardening, no real-path
        judgement of its words. The sandbox alone, for the tests that hold that wall to its
        promise (tests/tools/test_sandbox_alone.py); the executor never calls it. Raises
        ``ExecutorError`` where there is no sandbox: there would be no wall to test."""
        if not await self.sandboxed():
            raise ExecutorError("no bubblewrap sandbox on this machine: nothing to run inside")
        prefix = await self.sandbox_prefix(cwd, seccomp=True)
        full = self._limited((*prefix, *argv), self.limits.file_size_bytes)
        from rho_domain.ports.commands import Command

        command = Command(pipeline=(), timeout=timeout, max_output_bytes=cap)
        return await self._spawn(
            [full], [(False, "capture")], [None], [None], cwd, self._stage_env(None), command
        )

    def _stage_env(self, git_env: Mapping[str, str] | None) -> dict[str, str]:
        """The environment of a restricted stage: nothing inherited, plus git's shadow."""
        return {**restricted_env(self.search_path), **(git_env or {})}

    def _limited(self, argv: Sequence[str], file_size: int | None) -> tuple[str, ...]:
        """``argv`` under the profile's rlimits (``file_size`` decided by the caller)."""
        from rho_adapters.local.rlimits import Rlimits, limited

        processes = self.limits.processes
        nproc = None
        if processes is not None and os.getuid() != 0:  # the kernel exempts root anyway
            nproc = _user_process_count() + processes
        rlimits = Rlimits(
            memory=self.limits.memory_bytes,
            cpu_seconds=self.limits.cpu_seconds,
            file_size=file_size,
            processes=nproc,
        )
        return limited(argv, rlimits, prlimit=self.resolve("prlimit"))

    async def _prepare(
        self,
        argv: Sequence[str],
        cwd: str,
        binds: Sequence[str] = (),
        git_env: Mapping[str, str] | None = None,
    ) -> tuple[str, ...]:
        from rho_domain.shell.programs import check_argv, harden_argv
        from rho_domain.shell.reads import git_object_args, secret_safe_argv

        check_argv(argv)
        walked, policy = await asyncio.to_thread(self.check_reads, argv, cwd)
        if objects := git_object_args(argv):
            prefix = await self.sandbox_prefix(cwd, binds, self._stage_env(git_env))
            await asyncio.to_thread(self._refuse_blobs, objects, cwd, prefix, git_env)
        flavor: AwkFlavor = "gawk"
        if argv[0] in ("awk", "gawk"):
            argv, flavor = await asyncio.to_thread(self._awk, tuple(argv))
        hardened = secret_safe_argv(harden_argv(argv, awk=flavor), policy, walked, self.reach)
        program = self.resolve(hardened[0])
        if program is None:
            raise ToolError(f"{hardened[0]}: program not installed on this machine")
        if hardened[0] == "xargs":
            hardened = self._resolve_xargs_target(hardened)
        full = (program, *hardened[1:])
        env = self._stage_env(git_env)
        # The programs this stage execs: its own and, for xargs, the guard's shell and the
        # target (words that are exactly a search-path program's resolved path).
        # Such a path starts with its search-path directory: the other words (git's hardened
        # argv has a hundred: its -c settings and secret exclusions) are not looked up.
        ran = (
            program,
            *(
                w
                for w in hardened[1:]
                if w.startswith(self.search_path) and w == self.resolve(os.path.basename(w))
            ),
        )
        prefix = await self.sandbox_prefix(cwd, binds, env, seccomp=True, programs=ran)
        return (*prefix, *full)

    def _refuse_blobs(
        self,
        objects: Sequence[str],
        cwd: str,
        prefix: Sequence[str] = (),
        git_env: Mapping[str, str] | None = None,
    ) -> None:
        """Ask git (hardened, the stage's environment: the shadow directory, never the
        repository's config; ``prefix``: the same sandbox) the type of each object word; a blob
        named by id has no path the policy could judge, so it is refused (see
        ``git_object_args``)."""
        git = self.resolve("git")
        if git is None:
            return
        from rho_domain.shell.git import HARDENING

        try:
            answer = subprocess.run(
                [*prefix, git, *HARDENING, "cat-file", "--batch-check=%(objecttype)"],
                input="".join(f"{o}\n" for o in objects),
                capture_output=True,
                text=True,
                cwd=cwd,
                env={**restricted_env(self.search_path), **(git_env or {})},
                timeout=30,
                check=False,
            ).stdout.splitlines()
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise ExecutorError(f"git: could not check the objects named: {exc}") from exc
        for name, kind in zip(objects, answer, strict=False):
            if kind.strip() == "blob":
                raise SensitivePath(
                    f"git: {name!r} is a file's content named by id; name it as rev:path "
                    "(HEAD:src/app.py) so the secrets policy can judge the path"
                )

    def _awk(self, argv: tuple[str, ...]) -> tuple[tuple[str, ...], AwkFlavor]:
        """The awk to run: gawk when installed (--sandbox), else ``awk``, its kind detected once."""
        if self.resolve("gawk") is not None:
            return ("gawk", *argv[1:]), "gawk"
        program = self.resolve(argv[0])
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
                    env=restricted_env(self.search_path),
                    check=False,
                )
                text = (done.stdout + done.stderr).decode("utf-8", "replace")
            except (OSError, subprocess.TimeoutExpired):
                text = ""
            _AWK_FLAVORS[program] = flavor_from_version(text)
        return argv, _AWK_FLAVORS[program]

    def _resolve_xargs_target(self, argv: tuple[str, ...]) -> tuple[str, ...]:
        """Absolute paths for the guard's shell and the program it execs."""
        from rho_domain.shell.programs import xargs_target_index
        from rho_domain.shell.reads import GUARD_NAME

        out = list(argv)
        index = 1 + xargs_target_index(argv[1:])
        indexes = [index]
        if GUARD_NAME in argv[index:]:
            indexes.append(argv.index(GUARD_NAME, index) + 1)
        for i in indexes:
            target = self.resolve(argv[i])
            if target is None:
                raise ToolError(f"{argv[i]}: program not installed on this machine")
            out[i] = target
        return tuple(out)

    async def _spawn(
        self,
        argvs: Sequence[tuple[str, ...]],
        modes: Sequence[tuple[bool, str]],
        datas: Sequence[str | None],
        stdin_fds: Sequence[int | None],
        cwd: str,
        env: Mapping[str, str],
        command: Command,
    ) -> Finished:
        from rho_adapters.local.process import Spawn, run_processes

        opened: list[int] = []

        def fd(value: int) -> int:
            opened.append(value)
            return value

        try:
            devnull_r = fd(os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC))
            devnull_w = fd(os.open(os.devnull, os.O_WRONLY | os.O_CLOEXEC))
            out_r, out_w = os.pipe2(os.O_CLOEXEC)
            opened.append(out_w)
            spawns: list[Spawn] = []
            previous = devnull_r
            for i, argv in enumerate(argvs):
                stdout_null, stderr_mode = modes[i]
                stdin = previous
                if stdin_fds[i] is not None:
                    stdin = stdin_fds[i]  # type: ignore[assignment]
                elif datas[i] is not None:
                    stdin = self._data_pipe(datas[i] or "", fd)
                if i == len(argvs) - 1:
                    stdout = devnull_w if stdout_null else out_w
                else:
                    next_r, next_w = os.pipe2(os.O_CLOEXEC)
                    fd(next_r)
                    stdout = devnull_w if stdout_null else fd(next_w)
                    if stdout_null:
                        os.close(next_w)
                    previous = next_r
                stderr = {"capture": out_w, "null": devnull_w, "stdout": stdout}[stderr_mode]
                argv, extra = with_filter(argv)
                opened.extend(extra)
                spawns.append(
                    Spawn(argv=argv, stdin=stdin, stdout=stdout, stderr=stderr, pass_fds=extra)
                )
        except BaseException:
            for value in opened:
                with contextlib.suppress(OSError):
                    os.close(value)
            raise
        return await run_processes(
            spawns,
            out_r,
            cwd=cwd,
            env=env,
            timeout=command.timeout,
            cap=command.max_output_bytes,
            close_after_spawn=opened,
            kill_after=self.limits.output_bytes,
        )

    @staticmethod
    def _data_pipe(data: str, fd: Callable[[int], int]) -> int:
        raw = data.encode()
        if len(raw) > MAX_STDIN_DATA:
            raise ToolError(f"here-document larger than {MAX_STDIN_DATA} bytes")
        read_end, write_end = os.pipe2(os.O_CLOEXEC)
        fd(read_end)
        try:
            os.write(write_end, raw)
        finally:
            os.close(write_end)
        return read_end
