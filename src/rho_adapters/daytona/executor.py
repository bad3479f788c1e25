"""DaytonaExecutor: the Executor port inside a Daytona sandbox, on httpx alone (no SDK).

The same tool handlers that run locally run here unchanged, under the same profile:

* the sandbox is created lazily by the first call (once, under a lock) and deleted by
  ``aclose`` (failures logged, never raised: ``auto_delete_interval`` is the safety net);
* ``file_write`` is enforced here before any request: OFF refuses every write, CREATE_ONLY
  refuses overwrites and creates atomically (``ln``, which fails on an existing name);
* every path is confined lexically, then again after the sandbox resolved its symlinks
  (confine.py); secrets are never read or written, agent/editor/VCS configuration never
  written (``rho_domain.paths``);
* a ``pipeline`` is validated again (``check_argv``/``harden_argv``), each argv word quoted
  with ``shlex.quote``, and run in an empty environment with ``ulimit -f 0``; a ``shell``
  string runs only when ``allow_shell`` (the unrestricted profiles);
* timeouts are the daemon's (it kills the process group; the output is lost), output is
  capped inside the sandbox and the omitted bytes counted (scripts.py).

Known gap: between the canonical check and the operation (two requests) an unrestricted
shell in the same sandbox could swap a directory for a symlink; restricted profiles cannot.
"""

from __future__ import annotations

import asyncio
import logging
import posixpath
import re
import secrets
import stat as stat_mod
import time
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import attrs
import httpx

from rho_adapters.daytona import scripts
from rho_adapters.daytona.api import Sandbox, SandboxAPI
from rho_adapters.daytona.confine import Roots
from rho_adapters.daytona.settings import DaytonaSettings
from rho_domain.errors import (
    ExecutorError,
    PathOutsideWorkspace,
    PermissionDenied,
    SensitivePath,
    ToolError,
)
from rho_domain.limits import ResourceLimits, limit_hit
from rho_domain.paths import check_file_path, check_path_text, check_write_mode, write_refusal
from rho_domain.permissions import FileWriteMode
from rho_domain.ports.clock import Clock
from rho_domain.ports.executor import (
    Command,
    CommandResult,
    Executor,
    FileInfo,
    FileKind,
    FileUpload,
)
from rho_domain.reach import OutsideReads, ReadReach
from rho_domain.secrets import SecretPolicy
from rho_domain.shell.awk import AwkFlavor
from rho_domain.shell.git_repo import shadow_config
from rho_domain.shell.glob import expand, port_lister
from rho_domain.shell.programs import check_argv, harden_argv
from rho_domain.shell.reads import git_object_args, path_words, secret_safe_argv
from rho_domain.shell.texts import reach_words

log = logging.getLogger(__name__)
_ENV_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_PROGRAM = re.compile(r"[A-Za-z0-9._+-]+\Z")
MAX_STDIN_DATA = 60_000
_RESOLVE_TIMEOUT = 30.0
_EXISTS = 17  # the finalize script's exit code when create-only met an existing name


def _kind(mode: int) -> FileKind:
    if stat_mod.S_ISREG(mode):
        return FileKind.FILE
    if stat_mod.S_ISDIR(mode):
        return FileKind.DIRECTORY
    if stat_mod.S_ISLNK(mode):
        return FileKind.SYMLINK
    return FileKind.OTHER


class DaytonaExecutor(Executor):
    """Executor for one Daytona sandbox. See the module docstring for the guarantees."""

    def __init__(
        self,
        settings: DaytonaSettings,
        *,
        file_write: FileWriteMode = FileWriteMode.OFF,
        allow_shell: bool = False,
        extra_read_roots: Sequence[str] = (),
        transport: httpx.AsyncBaseTransport | None = None,
        homes: Sequence[str] = ("/root", "/home/daytona"),
        clock: Clock | None = None,
        limits: ResourceLimits | None = None,
        read_outside: OutsideReads = OutsideReads.DENY,
    ) -> None:
        self.settings = settings
        self.file_write = file_write
        self.allow_shell = allow_shell
        self.read_outside = read_outside
        self._roots = Roots(
            settings.working_dir,
            tuple(extra_read_roots),
            anywhere=read_outside is OutsideReads.ALLOW,
        )
        self.policy = SecretPolicy(homes=tuple(homes))
        self.limits = limits if limits is not None else ResourceLimits()
        self._api = SandboxAPI(settings, transport=transport, clock=clock)
        self._sandbox: Sandbox | None = None
        self._lock = asyncio.Lock()
        self._closed = False
        self._found: dict[str, str] = {}
        self._awk_flavor: tuple[str, AwkFlavor] | None = None
        self.orphaned: Sandbox | None = None  # a sandbox that aclose could not delete

    @property
    def working_dir(self) -> str:
        """See ``Executor.working_dir``."""
        return self._roots.given

    @property
    def sandbox_id(self) -> str | None:
        """The sandbox's id once created (for logs and the monitor)."""
        return self._sandbox.id if self._sandbox else None

    async def _ensure(self) -> Sandbox:
        """Create the sandbox and the workspace on first use (exactly once)."""
        if self._sandbox is not None:
            return self._sandbox
        async with self._lock:
            if self._closed:
                raise ExecutorError("the Daytona executor is closed")
            if self._sandbox is None:
                sandbox = await self._api.create()
                self._sandbox = sandbox
                roots = (self._roots.given, *self._roots.extra)
                script = f"mkdir -p -- {scripts.q(roots[0])} || exit 1\n" + "".join(
                    f"realpath -m -- {scripts.q(r)}\n" for r in roots
                )
                answer = await self._script(script, _RESOLVE_TIMEOUT, sandbox)
                lines = answer.splitlines()
                if len(lines) != len(roots):
                    raise ExecutorError(f"could not create the workspace {roots[0]}: {answer}")
                self._roots.root, self._roots.extra = lines[0], tuple(lines[1:])
        return self._sandbox

    async def _script(self, script: str, timeout: float, sandbox: Sandbox | None = None) -> str:
        """Run one of our scripts; its output on success, else ExecutorError/ToolError."""
        sandbox = sandbox or await self._ensure()
        answer = await self._api.execute(sandbox, scripts.wrap(script), timeout=timeout)
        if answer is None:
            raise ExecutorError(f"the sandbox did not answer within {timeout:g} s")
        if answer.exit_code != 0:
            raise ExecutorError(f"sandbox script failed ({answer.exit_code}): {answer.result}")
        return answer.result

    async def _resolve(
        self, path: str, *, write: bool, read_range: tuple[int, int | None] | None = None
    ) -> tuple[scripts.Resolved, str, tuple[str, ...]]:
        """Confine ``path`` lexically, let the sandbox canonicalise it, confine it again."""
        absolute = self._roots.locate(path, write=write)
        await self._ensure()  # the canonical roots are known from here on
        absolute = self._roots.locate(path, write=write)
        roots = (self._roots.root, *self._roots.extra)
        if self._roots.anywhere and not write:  # allow: judged by reach once canonical
            roots = ("/",)
        script = scripts.resolve_script(absolute, read_range, roots)
        answer = await self._script(script, _RESOLVE_TIMEOUT)
        res = scripts.parse_resolved(answer, with_data=read_range is not None)
        root, parts = self._roots.below(res.canonical, path, write=write)
        return res, root, parts

    @property
    def reach(self) -> ReadReach:
        """Where reads may go (``rho_domain.reach``), with the roots as given and canonical."""
        roots = self._roots
        return ReadReach.of(
            self.read_outside,
            workspace=(roots.given, roots.root),
            read_roots=roots.extra,
            homes=self.policy.homes,
        )

    def _check_read(self, path: str, canonical: str | None = None) -> None:
        """Refuse a secret: by the model's text (names), then by the canonical path; and a
        canonical path out of the profile's reach."""
        if reason := self.policy.refusal(path):
            raise SensitivePath(f"{reason}; it may not be read")
        if canonical is not None and (reason := self.policy.refusal(canonical)):
            raise SensitivePath(f"{path!r} resolves to a secret: {reason}; it may not be read")
        if canonical is not None and (reason := self.reach.refusal(canonical)):
            raise PathOutsideWorkspace(f"{path!r} may not be read: {reason}")

    def _check_write(self, path: str, parts: tuple[str, ...]) -> None:
        for candidate in (path, "/".join(parts)):
            if reason := write_refusal(candidate):
                raise SensitivePath(reason)

    async def stat(self, path: str) -> FileInfo:
        """See ``Executor.stat``."""
        res, root, parts = await self._resolve(path, write=False)
        if res.mode is None:
            raise ToolError(f"no such file or directory: {path}")
        if reason := self.reach.refusal(res.canonical):
            raise PathOutsideWorkspace(f"{path!r} may not be read: {reason}")
        return FileInfo(
            path=self._roots.display(root, parts),
            name=parts[-1] if parts else ".",
            kind=_kind(res.mode),
            size=res.size,
            mtime=res.mtime,
            mode=stat_mod.S_IMODE(res.mode),
        )

    async def read(self, path: str, *, offset: int = 0, length: int | None = None) -> bytes:
        """See ``Executor.read``."""
        check_path_text(path)
        check_file_path(path)
        self._check_read(path)
        offset = max(0, offset)
        res, _, _ = await self._resolve(path, write=False, read_range=(offset, length))
        self._check_read(path, res.canonical)
        if res.mode is None:
            raise ToolError(f"no such file: {path}")
        if stat_mod.S_ISDIR(res.mode):
            raise ToolError(f"{path} is a directory; it cannot be read")
        if not stat_mod.S_ISREG(res.mode):
            raise ToolError(f"{path} is not a regular file (FIFO/device); it cannot be read")
        return res.data or b""

    async def list_dir(self, path: str) -> tuple[FileInfo, ...]:
        """See ``Executor.list_dir``."""
        res, root, parts = await self._resolve(path, write=False)
        if res.mode is None:
            raise ToolError(f"no such file or directory: {path}")
        if not stat_mod.S_ISDIR(res.mode):
            raise ToolError(f"{path} is not a directory")
        self._check_read(path, res.canonical)
        entries = await self._api.list_files(await self._ensure(), res.canonical, path)
        shown = self._roots.display(root, parts)
        return tuple(_file_info(entry, shown) for entry in entries if entry.get("name"))

    async def write(self, path: str, data: bytes, *, overwrite: bool) -> bool:
        """See ``Executor.write``."""
        check_write_mode(path, self.file_write, overwrite=overwrite)
        check_path_text(path)
        check_file_path(path)
        self._check_write(path, ())
        res, _, parts = await self._resolve(path, write=True)
        self._check_write(path, parts)
        if not parts:
            raise ToolError(f"{path} is the workspace directory")
        if res.is_link:
            raise PermissionDenied(f"{path} is a symbolic link; writing through links is refused")
        if res.mode is not None and not stat_mod.S_ISREG(res.mode):
            raise ToolError(f"{path} exists and is not a regular file")
        if res.mode is not None and not overwrite:
            raise PermissionDenied(f"{path} already exists and may not be overwritten")
        target = res.canonical
        parent, name = posixpath.split(target)
        temp = posixpath.join(parent, f".{name[:200]}.{secrets.token_hex(6)}.rho-tmp")
        await self._api.upload(await self._ensure(), temp, data, path)
        answer = await self._api.execute(
            await self._ensure(),
            scripts.wrap(_finalize_script(temp, target, overwrite=overwrite)),
            timeout=_RESOLVE_TIMEOUT,
        )
        if answer is None or answer.exit_code not in (0, _EXISTS):
            raise ExecutorError(f"could not write {path} in the sandbox: {answer}")
        if answer.exit_code == _EXISTS:
            raise PermissionDenied(f"{path} already exists and may not be overwritten")
        return answer.result.strip() == "replaced"

    async def upload(self, files: Sequence[FileUpload]) -> None:
        """See ``Executor.upload``: anywhere in the sandbox (a relative path joins the
        workspace), whatever the profile's write mode; parents are created by the daemon."""
        pairs: list[tuple[str, bytes]] = []
        sandbox = await self._ensure()
        for item in files:
            check_path_text(item.path)
            check_file_path(item.path)
            if reason := write_refusal(item.path):
                raise SensitivePath(reason)
            target = posixpath.normpath(posixpath.join(self._roots.root, item.path))
            if target == self._roots.root:
                raise ToolError(f"{item.path} is the workspace directory, not a file")
            pairs.append((target, item.data))
        await self._api.upload_many(sandbox, pairs)

    async def glob(self, pattern: str, *, cwd: str = ".") -> tuple[str, ...]:
        """See ``Executor.glob``."""
        return await expand(pattern, cwd, port_lister(self))

    async def which(self, program: str) -> str | None:
        """See ``Executor.which``."""
        if not _PROGRAM.match(program):
            return None
        if program in self._found:
            return self._found[program]
        script = f"PATH={scripts.SEARCH_PATH} command -v -- {scripts.q(program)} || true\n"
        found = (await self._script(script, _RESOLVE_TIMEOUT)).strip()
        if not found.startswith("/"):
            return None  # absent, or a shell builtin/function: not a program
        self._found[program] = found  # only positives: an unrestricted shell may install one
        return found

    async def run(self, command: Command) -> CommandResult:
        """See ``Executor.run``."""
        if command.shell is not None and not self.allow_shell:
            raise PermissionDenied(
                "shell commands are not allowed: this profile's shell is restricted"
            )
        if command.shell is None and not command.pipeline:
            raise ToolError("empty command")
        for stage in command.pipeline:  # before any request: a refusal costs nothing
            check_argv(stage.argv)
        env = _checked_env(command.env)
        cwd = await self._directory(command.cwd)
        if command.shell is not None:
            inner = scripts.shell_inner(command.shell, cwd, env)
        else:
            inner = await self._restricted(command, cwd, env)
        sandbox = await self._ensure()
        started = time.monotonic()
        limits = self.limits
        inner = scripts.ulimited(inner, limits.memory_bytes, limits.cpu_seconds)
        answer = await self._api.execute(
            sandbox,
            scripts.wrap(scripts.capped(inner, command.max_output_bytes, limits.output_bytes)),
            timeout=command.timeout,
        )
        duration = time.monotonic() - started
        if answer is None:
            return CommandResult(exit_code=None, output="", duration=duration, timed_out=True)
        captured = scripts.parse_capped(answer.result)
        seen = len(captured.output.encode()) + captured.omitted
        cut = limits.output_bytes is not None and seen >= limits.output_bytes
        return CommandResult(
            exit_code=captured.exit_code,
            output=captured.output,
            duration=duration,
            omitted_bytes=captured.omitted,
            limit="output" if cut else limit_hit(captured.exit_code, captured.output, limits),
        )

    async def _walked(self, command: Command, cwd: str) -> list[list[str]]:
        """Resolve every path word of every stage in the sandbox (one request), refuse a
        secret, and return each stage's walked directories (see ``secret_safe_argv``)."""
        if reason := self.policy.refusal(cwd):
            raise SensitivePath(f"commands may not run inside a secret location: {reason}")
        words = [path_words(stage.argv) for stage in command.pipeline]
        # Reach judges the words a program may open, not its pattern or script (texts.py).
        opened = [reach_words(stage.argv) for stage in command.pipeline]
        reach = self.reach
        walked: list[list[str]] = [[cwd] for _ in words]
        flat = [(i, w) for i, stage_words in enumerate(words) for w in stage_words]
        answer = ""
        if flat:
            answer = await self._script(scripts.realpaths_script(cwd, [w for _, w in flat]), 30.0)
        for (i, word), found in zip(flat, scripts.parse_realpaths(answer), strict=True):
            if found is None:
                continue  # names nothing: a pattern, a value, a missing file
            real, is_dir = found
            full = posixpath.join(cwd, word)
            for candidate in (full, real):
                if reason := self.policy.refusal(candidate):
                    shown = word if candidate == full else f"{word!r} (really {real})"
                    argv0 = command.pipeline[i].argv[0]
                    raise SensitivePath(f"{argv0}: {shown} may not be read: {reason}")
            if word in opened[i] and (reason := reach.refusal(real)):
                argv0 = command.pipeline[i].argv[0]
                raise PathOutsideWorkspace(f"{argv0}: {word} may not be read: {reason}")
            if is_dir:
                walked[i].append(real)
        return walked

    async def _refuse_blobs(
        self, command: Command, cwd: str, git: scripts.GitShadow | None
    ) -> None:
        """Ask git (through the shadow directory, never the repository's config) the type of
        each object word of a ``git show/cat-file/diff`` stage; a blob named by id has no path
        the policy could judge, so it is refused (see ``git_object_args``)."""
        for stage in command.pipeline:
            if objects := git_object_args(stage.argv):
                script = scripts.object_types_script(cwd, objects, git)
                answer = await self._script(script, _RESOLVE_TIMEOUT)
                for name, kind in zip(objects, answer.splitlines(), strict=False):
                    if kind.strip() == "blob":
                        raise SensitivePath(
                            f"git: {name!r} is a file's content named by id; name it as "
                            "rev:path (HEAD:src/app.py) so the secrets policy can judge the path"
                        )

    async def _restricted(self, command: Command, cwd: str, env: Mapping[str, str]) -> str:
        # Secrets first (one request resolves every path word; a refusal stops here).
        walked = await self._walked(command, cwd)
        # git reads GIT_CONFIG_* / GIT_DIR...: never from the caller in a restricted pipeline.
        env = {k: v for k, v in env.items() if not k.startswith("GIT_")}
        git: scripts.GitShadow | None = None
        if any(stage.argv[:1] == ("git",) for stage in command.pipeline):
            repo, listing = scripts.parse_git_discovery(
                await self._script(scripts.git_discovery(cwd), _RESOLVE_TIMEOUT)
            )
            git = scripts.GitShadow(
                directory=f"/tmp/rho-git-{secrets.token_hex(8)}",  # noqa: S108 - the sandbox's
                repo=repo,
                config=shadow_config(listing),
            )
            env = {**env, **git.environment()}
        await self._refuse_blobs(command, cwd, git)
        stages = []
        stdin_files: list[str | None] = []
        for stage, dirs in zip(command.pipeline, walked, strict=True):
            argv = tuple(stage.argv)
            flavor: AwkFlavor = "gawk"
            if argv[0] in ("awk", "gawk"):
                argv, flavor = await self._awk(argv)
            argv = secret_safe_argv(harden_argv(argv, awk=flavor), self.policy, dirs, self.reach)
            stages.append(attrs.evolve(stage, argv=argv))
            if stage.stdin_data is not None and len(stage.stdin_data.encode()) > MAX_STDIN_DATA:
                raise ToolError(f"here-document larger than {MAX_STDIN_DATA} bytes")
            stdin_files.append(await self._input(stage.stdin_path) if stage.stdin_path else None)
        return scripts.restricted_inner(scripts.render_pipeline(stages, stdin_files), cwd, env, git)

    async def _awk(self, argv: tuple[str, ...]) -> tuple[tuple[str, ...], AwkFlavor]:
        """The awk to run: gawk when the sandbox has it (--sandbox), else ``awk`` (probed once)."""
        if self._awk_flavor is None:
            self._awk_flavor = scripts.parse_awk_probe(
                await self._script(scripts.AWK_PROBE, _RESOLVE_TIMEOUT)
            )
        installed, flavor = self._awk_flavor
        if installed == "gawk":
            return ("gawk", *argv[1:]), "gawk"
        if argv[0] == "gawk":
            raise ToolError("gawk: program not installed in the sandbox")
        return argv, flavor

    async def _input(self, path: str) -> str:
        self._check_read(path)
        res, _, _ = await self._resolve(path, write=False)
        self._check_read(path, res.canonical)
        if res.mode is None or not stat_mod.S_ISREG(res.mode):
            raise ToolError(f"{path}: not a readable regular file")
        return res.canonical

    async def _directory(self, path: str) -> str:
        await self._ensure()
        if path in ("", "."):
            return self._roots.root
        res, _, _ = await self._resolve(path, write=True)  # write=True: the workspace only
        if res.mode is None:
            raise ToolError(f"no such directory: {path}")
        if not stat_mod.S_ISDIR(res.mode):
            raise ToolError(f"{path} is not a directory")
        return res.canonical

    async def aclose(self) -> None:
        """Delete the sandbox (errors logged, not raised) and close the HTTP client."""
        async with self._lock:
            if self._closed:
                return
            self._closed = True
            sandbox, self._sandbox = self._sandbox, None
        try:
            if sandbox is not None:
                await self._api.delete(sandbox.id)
        except Exception:  # teardown must not mask the run's own outcome
            log.warning(
                "could not delete Daytona sandbox %s", sandbox and sandbox.id, exc_info=True
            )
            self.orphaned = sandbox
        finally:
            await self._api.aclose()


def _checked_env(env: Mapping[str, str]) -> dict[str, str]:
    for key in env:
        if not _ENV_KEY.match(key):
            raise ToolError(f"invalid environment variable name {key!r}")
    return dict(env)


def _finalize_script(temp: str, target: str, *, overwrite: bool) -> str:
    """Move the uploaded temp file into place: ``ln`` (create-only, atomic) or ``mv -T``."""
    t, d = scripts.q(temp), scripts.q(target)
    if not overwrite:
        return (
            f"if ln -- {t} {d} 2>/dev/null; then rc=0; "
            f"elif [ -e {d} ] || [ -L {d} ]; then rc={_EXISTS}; else rc=1; fi\n"
            f"rm -f -- {t}\nexit $rc\n"
        )
    return (
        f"if [ -f {d} ]; then chmod --reference={d} -- {t} 2>/dev/null; w=replaced; "
        f"else w=created; fi\n"
        f"mv -fT -- {t} {d} || {{ rm -f -- {t}; exit 1; }}\necho $w\n"
    )


def _file_info(entry: Mapping[str, Any], shown: str) -> FileInfo:
    """A toolbox ``FileInfo`` (Go ``FileMode.String()`` in ``mode``) as the port's FileInfo."""
    name = str(entry["name"])
    mode_text = str(entry.get("mode") or "")
    kind = {"d": FileKind.DIRECTORY, "L": FileKind.SYMLINK, "-": FileKind.FILE}.get(
        mode_text[:1], FileKind.DIRECTORY if entry.get("isDir") else FileKind.OTHER
    )
    perms = str(entry.get("permissions") or "")
    mode = int(perms, 8) if perms.isdigit() else _perm_bits(mode_text[-9:])
    return FileInfo(
        path=name if shown == "." else f"{shown}/{name}",
        name=name,
        kind=kind,
        size=int(entry.get("size") or 0),
        mtime=_timestamp(entry.get("modifiedAt")),
        mode=mode & 0o7777,
    )


def _perm_bits(rwx: str) -> int:
    if len(rwx) != 9:
        return 0
    return sum(1 << (8 - i) for i, c in enumerate(rwx) if c != "-")


def _timestamp(value: Any) -> float:
    if not value:
        return 0.0
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return 0.0
