"""CommandRunner: turns a ``Command`` into processes, pipes, environment and sandbox.

Restricted pipelines: each stage is re-validated and hardened (domain rules), its program
resolved to an absolute path in the fixed search path, and it runs with RLIMIT_FSIZE (0
without a sandbox: no data can be written to any file), RLIMIT_NPROC, RLIMIT_CPU, and, when
bubblewrap works, inside ``bwrap --ro-bind / / --unshare-net --unshare-pid ...``: a read-only
view of the machine with no network. Unrestricted shell strings run through
``bash --noprofile --norc -c`` with the caller's environment minus credentials.
"""

from __future__ import annotations

import asyncio
import contextlib
import glob
import os
import re
import stat
import subprocess
from collections.abc import Callable, Mapping, Sequence

from rho_adapters.local.guard import guarded
from rho_adapters.local.hardlinks import AliasCache, several_links, with_aliases
from rho_adapters.local.process import Spawn, restricted_limits, run_processes
from rho_domain.errors import ExecutorError, SensitivePath, ToolError
from rho_domain.paths import MAX_PATH
from rho_domain.ports.executor import Command
from rho_domain.secrets import HOME_SECRETS, SYSTEM_SECRETS, SecretPolicy
from rho_domain.shell.awk import VERSION_ARGS, AwkFlavor, flavor_from_version
from rho_domain.shell.git import HARDENING
from rho_domain.shell.programs import check_argv, harden_argv, xargs_target_index
from rho_domain.shell.reads import GUARD_NAME, git_object_args, path_words, secret_safe_argv

_SECRET_VAR = re.compile(r"KEY|SECRET|TOKEN|PASSWORD|PASSWD|CREDENTIAL|AUTH|COOKIE|SESSION", re.I)
_DROPPED_VARS = frozenset(
    {"BASH_ENV", "ENV", "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "PROMPT_COMMAND",
     "GIT_EXTERNAL_DIFF", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_ASKPASS", "SSH_ASKPASS",
     "RIPGREP_CONFIG_PATH", "GIT_CONFIG_PARAMETERS", "GIT_DIR", "GIT_WORK_TREE"}
)  # fmt: skip
_SANDBOX_DIR = "/tmp"  # noqa: S108 - a private tmpfs inside the sandbox, not the host /tmp
# Whether a bwrap binary works on this machine (namespaces allowed): probed once per process.
_PROBED: dict[str, bool] = {}
MAX_STDIN_DATA = 60_000  # stays below a pipe buffer, so writing it can never block
# Which awk implementation a program path is (gawk, mawk, other): asked once per process.
_AWK_FLAVORS: dict[str, AwkFlavor] = {}


def scrub_env(env: Mapping[str, str]) -> dict[str, str]:
    """The environment minus credentials (*KEY*, *SECRET*, *TOKEN*, ...) and code-loading hooks."""
    return {
        k: v
        for k, v in env.items()
        if not _SECRET_VAR.search(k) and k not in _DROPPED_VARS and not k.startswith("BASH_FUNC_")
    }


def restricted_env(search_path: Sequence[str]) -> dict[str, str]:
    """A fresh environment for restricted commands: nothing inherited."""
    return {
        "PATH": ":".join(search_path),
        "LC_ALL": "C.UTF-8",
        "LANG": "C.UTF-8",
        "HOME": _SANDBOX_DIR,
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


def _host_keys() -> list[str]:
    return glob.glob("/etc/ssh/ssh_host_*_key")


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
    ) -> None:
        self.search_path = tuple(search_path)
        # Bound again on top of the private /tmp, so a workspace under /tmp stays visible.
        self.visible_roots = tuple(visible_roots)
        # Kept, not copied: read (and scrubbed) as each unrestricted command starts, so
        # ``os.environ`` passed here stays live, and opening a session copies nothing.
        self.base_env = base_env
        self.policy = policy if policy is not None else SecretPolicy()
        self.aliases = AliasCache(self.policy)
        self._sandbox_wanted = sandbox
        self._sandbox: bool | None = None if sandbox is not False else False

    def resolve(self, program: str) -> str | None:
        """The absolute path of ``program`` on the search path, or None (a name with a
        slash is never resolved)."""
        if "/" in program:
            return None
        for directory in self.search_path:
            candidate = os.path.join(directory, program)
            if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
                return candidate
        return None

    async def sandboxed(self) -> bool:
        """Whether restricted commands run under bubblewrap (probed once)."""
        if self._sandbox is None:
            bwrap = self.resolve("bwrap")
            works = False
            if bwrap is not None:
                works = _PROBED.get(bwrap)  # type: ignore[assignment]
                if works is None:
                    probe = [bwrap, *self._bwrap_args("/"), "--", "/bin/true"]
                    result = await asyncio.to_thread(
                        subprocess.run, probe, capture_output=True, timeout=10, check=False
                    )
                    works = _PROBED[bwrap] = result.returncode == 0
            if self._sandbox_wanted and not works:
                raise ExecutorError("the bubblewrap sandbox was required but does not work here")
            self._sandbox = works
        return self._sandbox

    async def sandbox_prefix(self, cwd: str, binds: Sequence[str] = ()) -> tuple[str, ...]:
        """The argv prefix that runs a program in the sandbox in ``cwd`` (empty without one)."""
        if not await self.sandboxed():
            return ()
        bwrap = self.resolve("bwrap")
        assert bwrap is not None
        return (bwrap, *self._bwrap_args(cwd, binds), "--")

    def _rebound(self) -> tuple[str, ...]:
        """Directories to show again over the private /tmp: the workspace roots, and program
        directories that live under /tmp (a checkout's .venv/bin, for instance) — without
        them the allowlisted programs would vanish inside the sandbox."""
        hidden_programs = tuple(
            d
            for d in self.search_path
            if os.path.isdir(d) and os.path.commonpath([d, _SANDBOX_DIR]) == _SANDBOX_DIR
        )
        return tuple(dict.fromkeys((*self.visible_roots, *hidden_programs)))

    def _hidden(self) -> list[str]:
        """Arguments for bwrap that hide every concrete secret location that exists: an empty tmpfs
        over a directory, /dev/null over a file (symlinks are left: their targets are judged
        by the real-path checks, and a secret target is hidden in its own right)."""
        locations = (
            *SYSTEM_SECRETS,
            *(os.path.join(h, rel) for h in self.policy.homes for rel in HOME_SECRETS),
            *self.policy.locations,
            *_host_keys(),
        )
        args: list[str] = []
        for location in dict.fromkeys(locations):
            try:
                st = os.lstat(location)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode):
                args += ["--tmpfs", location]
            elif stat.S_ISREG(st.st_mode):
                args += ["--ro-bind", "/dev/null", location]
        return args

    def _bwrap_args(self, cwd: str, binds: Sequence[str] = ()) -> list[str]:
        """Arguments for bwrap. ``binds`` (the git shadow directory) come after the hidden
        locations, so no hidden location can cover them; they hold only a filtered config and
        symlinks, which resolve inside the sandbox, where a hidden target stays hidden."""
        return [
            "--ro-bind", "/", "/",
            "--dev", "/dev",
            "--proc", "/proc",
            "--tmpfs", _SANDBOX_DIR,
            *(arg for root in self._rebound() for arg in ("--ro-bind", root, root)),
            *self._hidden(),
            *(arg for root in binds for arg in ("--ro-bind", root, root)),
            "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
            "--cap-drop", "ALL",
            "--die-with-parent", "--new-session",
            "--chdir", cwd,
        ]  # fmt: skip

    def check_reads(self, argv: Sequence[str], cwd: str) -> tuple[list[str], SecretPolicy]:
        """Refuse a stage naming a secret by any real path or by another name of the same file
        (a hard link, ``hardlinks.py``); return the canonical directories it may walk (its
        directory operands and ``cwd``) and the policy its recursive readers and ``xargs``
        guard must apply (the hard links found are secret locations in it)."""
        walked, linked = self._judge_words(argv, cwd, self.policy)
        # The workspace (not the extra read roots: one may be "/"), what this stage walks and
        # the directories of the files with several links it names.
        roots = (*self.visible_roots[:1], *walked, *map(os.path.dirname, linked))
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
        argv: Sequence[str], cwd: str, policy: SecretPolicy, aliases: Sequence[str] = ()
    ) -> tuple[list[str], list[str]]:
        """Judge every path word by ``policy`` (``aliases``: hard links to secrets); return
        (walked directories, real paths of files with several links)."""
        walked = [os.path.realpath(cwd)]
        if reason := policy.refusal(walked[0]):
            raise SensitivePath(
                f"{argv[0]}: commands may not run inside a secret location: {reason}"
            )
        linked: list[str] = []
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
    ) -> tuple[int | None, str, bool, int]:
        """Run ``command`` in ``cwd``. ``git_env`` (restricted pipelines) is added to the
        environment and ``binds`` are shown read-only inside the sandbox: the git shadow."""
        if command.shell is not None:
            argvs: list[tuple[str, ...]] = [
                guarded(("/bin/bash", "--noprofile", "--norc", "-c", command.shell))
            ]
            env = scrub_env(self.base_env)
            env.setdefault("PATH", ":".join(self.search_path))
            env.update({"PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0"})
            preexec: Callable[[], None] | None = None
            stages_null = [(False, "capture")]
            datas: list[str | None] = [None]
            stdin_fds = [None]
        else:
            argvs = [
                await self._prepare(stage.argv, cwd, binds, git_env) for stage in command.pipeline
            ]
            env = {**restricted_env(self.search_path), **(git_env or {})}
            sandbox = await self.sandboxed()
            if not sandbox:  # bubblewrap's --die-with-parent does this inside the sandbox
                argvs = [guarded(argv) for argv in argvs]
            nproc = 1 << 20 if os.getuid() == 0 else _user_process_count() + 256
            preexec = restricted_limits(command.timeout, (1 << 28) if sandbox else 0, nproc)
            stages_null = [(s.stdout_null, s.stderr) for s in command.pipeline]
            datas = [s.stdin_data for s in command.pipeline]
        if not argvs:
            raise ToolError("empty command")
        return await self._spawn(argvs, stages_null, datas, stdin_fds, cwd, env, preexec, command)

    async def _prepare(
        self,
        argv: Sequence[str],
        cwd: str,
        binds: Sequence[str] = (),
        git_env: Mapping[str, str] | None = None,
    ) -> tuple[str, ...]:
        check_argv(argv)
        walked, policy = await asyncio.to_thread(self.check_reads, argv, cwd)
        if objects := git_object_args(argv):
            prefix = await self.sandbox_prefix(cwd, binds)
            await asyncio.to_thread(self._refuse_blobs, objects, cwd, prefix, git_env)
        flavor: AwkFlavor = "gawk"
        if argv[0] in ("awk", "gawk"):
            argv, flavor = await asyncio.to_thread(self._awk, tuple(argv))
        hardened = secret_safe_argv(harden_argv(argv, awk=flavor), policy, walked)
        program = self.resolve(hardened[0])
        if program is None:
            raise ToolError(f"{hardened[0]}: program not installed on this machine")
        if hardened[0] == "xargs":
            hardened = self._resolve_xargs_target(hardened)
        full = (program, *hardened[1:])
        if await self.sandboxed():
            bwrap = self.resolve("bwrap")
            assert bwrap is not None
            return (bwrap, *self._bwrap_args(cwd, binds), "--", *full)
        return full

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
        preexec: Callable[[], None] | None,
        command: Command,
    ) -> tuple[int | None, str, bool, int]:
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
                spawns.append(Spawn(argv=argv, stdin=stdin, stdout=stdout, stderr=stderr))
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
            preexec=preexec,
            close_after_spawn=opened,
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
