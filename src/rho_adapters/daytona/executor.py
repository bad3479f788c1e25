"""DaytonaExecutor: the Executor port inside a Daytona sandbox, on httpx alone (no SDK).

The same tool handlers that run locally run here unchanged, under the same profile:

* the sandbox is created lazily by the first call (once, under a lock) and deleted by
  ``aclose`` (failures logged, never raised: ``auto_delete_interval`` is the safety net;
  workspace.py);
* ``file_write`` is enforced here before any request: OFF refuses every write, CREATE_ONLY
  refuses overwrites and creates atomically (``ln``, which fails on an existing name);
* every path is confined lexically, then again after the sandbox resolved its symlinks
  (confine.py, workspace.py); secrets are never read or written, agent/editor/VCS
  configuration never written (``rho_domain.paths``);
* a ``pipeline`` is validated again (``check_argv``/``harden_argv``: restricted.py), each
  argv word quoted with ``shlex.quote``, and run in an empty environment with ``ulimit -f 0``;
  a ``shell`` string runs only when ``allow_shell`` (the unrestricted profiles);
* timeouts are the daemon's (it kills the process group; the output is lost), and the
  sandbox's own a second later (``scripts.capped``'s deadline: daemons that do not kill),
  and what a shell command left running (``setsid``, ``nohup``, a double fork) is killed
  when it ends; output is capped inside the sandbox and the omitted bytes counted (scripts.py).

Known gap: between the canonical check and the operation (two requests) an unrestricted
shell in the same sandbox could swap a directory for a symlink; restricted profiles cannot.
"""

from __future__ import annotations

import re
import stat as stat_mod
import time
from collections.abc import Sequence
from secrets import token_hex

import httpx

from rho_adapters.daytona import scripts, uploads
from rho_adapters.daytona.api import Sandbox
from rho_adapters.daytona.listing import list_script, parse_listing
from rho_adapters.daytona.restricted import RestrictedPipelines
from rho_adapters.daytona.settings import DaytonaSettings
from rho_adapters.daytona.workspace import RESOLVE_TIMEOUT, SandboxWorkspace
from rho_adapters.daytona.writing import write_file
from rho_adapters.local.files import kind_of
from rho_domain.errors import PathOutsideWorkspace, PermissionDenied, ToolError
from rho_domain.limits import ResourceLimits, limit_hit
from rho_domain.paths import check_file_path, check_path_text
from rho_domain.permissions import FileWriteMode
from rho_domain.ports.clock import Clock
from rho_domain.ports.executor import (
    Command,
    CommandResult,
    Executor,
    FileInfo,
    FileUpload,
    Placement,
    PlacementTold,
)
from rho_domain.reach import OutsideReads, ReadReach
from rho_domain.secrets import SecretPolicy
from rho_domain.shell.glob import expand, port_lister
from rho_domain.shell.programs import check_argv

_PROGRAM = re.compile(r"[A-Za-z0-9._+-]+\Z")


class DaytonaExecutor(Executor):
    """Executor for one Daytona sandbox. See the module docstring for the guarantees.
    ``read_bytes``: the most a ``read`` without ``length`` (``--download``) returns; a larger
    file is a ``ToolError`` (a 10 GB file was base64'd whole in the sandbox)."""

    read_bytes = 128 * 1024 * 1024  # base64'd: 171 MiB, within SandboxAPI.answer_bytes

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
        self._workspace = SandboxWorkspace(
            settings,
            extra_read_roots=extra_read_roots,
            transport=transport,
            homes=homes,
            clock=clock,
            read_outside=read_outside,
        )
        self.limits = limits if limits is not None else ResourceLimits()
        self._pipelines = RestrictedPipelines(self._workspace)
        self._found: dict[str, str] = {}

    @property
    def policy(self) -> SecretPolicy:
        """The secrets policy the workspace judges by: with the sandbox's homes once it exists."""
        return self._workspace.policy

    @property
    def working_dir(self) -> str:
        """See ``Executor.working_dir``."""
        return self._workspace.roots.given

    @property
    def sandbox_id(self) -> str | None:
        """The sandbox's id once created (for logs and the monitor)."""
        return self._workspace.sandbox_id

    @property
    def placement(self) -> Placement:
        """See ``Executor.placement``: ``daytona`` and the sandbox's id once created."""
        return Placement(backend="daytona", id=self._workspace.sandbox_id)

    @property
    def recreated(self) -> str | None:
        """Why a resumed session's sandbox is a new, empty one (its own was gone), else None."""
        return self._workspace.recreated

    @property
    def unmade(self) -> str | None:
        """Why the last try to find or make the sandbox failed (the error the calls that
        needed it got), while none exists; None once one is made."""
        return self._workspace.unmade

    def serve(self, session_id: str, *, resumed: bool = False) -> None:
        """Label the sandbox, still to be created, with ``session_id`` (``resumed``: reattach
        the session's own), as ``DaytonaSettings.session_id`` does; raises ``ExecutorError``
        once it exists."""
        self._workspace.serve(session_id, resumed=resumed)
        self.settings = self._workspace.settings

    def expect(self, sandbox_id: str) -> None:
        """Reattach sandbox ``sandbox_id`` only (the one a resumed session's trace names,
        ``Executor.placement``): a sandbox that merely carries the session's labels is never
        taken instead, and when that one is gone a new one is made (and said)."""
        self._workspace.known = sandbox_id

    def on_placed(self, told: PlacementTold | None) -> PlacementTold | None:
        """See ``Executor.on_placed``: told when the sandbox is made or reattached."""
        before, self._workspace.told = self._workspace.told, told
        return before

    async def attach(self) -> str | None:
        """Find or create the sandbox now rather than at the first call, and return
        ``recreated`` (a resume says it before the next run). Raises as the first call would."""
        await self._workspace.ensure()
        return self._workspace.recreated

    @property
    def orphaned(self) -> Sandbox | None:
        """A sandbox that ``aclose`` could not delete (it logged why), else None."""
        return self._workspace.orphaned

    @property
    def reach(self) -> ReadReach:
        """Where reads may go (``rho_domain.reach``), with the roots as given and canonical."""
        return self._workspace.reach

    async def stat(self, path: str) -> FileInfo:
        """See ``Executor.stat``."""
        res, root, parts = await self._workspace.resolve(path, write=False)
        if res.mode is None:
            raise ToolError(f"no such file or directory: {path}")
        if reason := self.reach.refusal(res.canonical):
            raise PathOutsideWorkspace(f"{path!r} may not be read: {reason}")
        return FileInfo(
            path=self._workspace.roots.display(root, parts),
            name=parts[-1] if parts else ".",
            kind=kind_of(res.mode),
            size=res.size,
            mtime=res.mtime,
            mode=stat_mod.S_IMODE(res.mode),
        )

    async def read(self, path: str, *, offset: int = 0, length: int | None = None) -> bytes:
        """See ``Executor.read``."""
        check_path_text(path)
        check_file_path(path)
        self._workspace.check_read(path)
        offset = max(0, offset)
        asked = self.read_bytes + 1 if length is None else length
        res, _, _ = await self._workspace.resolve(path, write=False, read_range=(offset, asked))
        self._workspace.check_read(path, res.canonical, res.git_place)
        if res.mode is None:
            raise ToolError(f"no such file: {path}")
        if stat_mod.S_ISDIR(res.mode):
            raise ToolError(f"{path} is a directory; it cannot be read")
        if not stat_mod.S_ISREG(res.mode):
            raise ToolError(f"{path} is not a regular file (FIFO/device); it cannot be read")
        await self._workspace.check_hard_link(path, res)
        data = res.data or b""
        if length is None and len(data) > self.read_bytes:
            raise ToolError(
                f"{path} is {res.size:,} bytes, more than the {self.read_bytes:,} one read takes "
                f"from Daytona sandbox {self.sandbox_id}: read it in parts (offset, length)"
            )
        return data

    async def list_dir(self, path: str) -> tuple[FileInfo, ...]:
        """See ``Executor.list_dir``."""
        res, root, parts = await self._workspace.resolve(path, write=False)
        if res.mode is None:
            raise ToolError(f"no such file or directory: {path}")
        if not stat_mod.S_ISDIR(res.mode):
            raise ToolError(f"{path} is not a directory")
        self._workspace.check_read(path, res.canonical, res.git_place)
        answer = await self._workspace.script(list_script(res.canonical), RESOLVE_TIMEOUT)
        return parse_listing(answer, self._workspace.roots.display(root, parts))

    async def write(self, path: str, data: bytes, *, overwrite: bool) -> bool:
        """See ``Executor.write`` (``writing.write_file``)."""
        return await write_file(self._workspace, self.file_write, path, data, overwrite=overwrite)

    async def upload(self, files: Sequence[FileUpload]) -> None:
        """See ``Executor.upload``: anywhere in the sandbox (a relative path joins the
        workspace), whatever the profile's write mode; parents are created by the daemon."""
        await uploads.put(self._workspace, files)

    async def glob(self, pattern: str, *, cwd: str = ".") -> tuple[str, ...]:
        """See ``Executor.glob``."""
        return await expand(pattern, cwd, port_lister(self))

    async def which(self, program: str) -> str | None:
        """See ``Executor.which``."""
        if not _PROGRAM.match(program) or program in self._found:
            return self._found.get(program)  # a name that is no program's: None
        script = f"PATH={scripts.SEARCH_PATH} command -v -- {scripts.q(program)} || true\n"
        found = (await self._workspace.script(script, RESOLVE_TIMEOUT)).strip()
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
        env = scripts.checked_env(command.env)
        cwd = await self._workspace.directory(command.cwd)
        if command.shell is not None:
            inner = scripts.shell_inner(command.shell, cwd, env)
        else:
            inner = await self._pipelines.inner(command, cwd, env)
        sandbox = await self._workspace.ensure()
        started = time.monotonic()
        limits = self.limits
        script = scripts.capped(
            scripts.ulimited(inner, limits.memory_bytes, limits.cpu_seconds),
            command.max_output_bytes,
            limits.output_bytes,
            deadline=command.timeout,
            # a shell may leave programs running, in its group or not; a pipeline cannot
            mark=token_hex(8) if command.shell is not None else None,
        )
        answer = await self._workspace.api.execute(
            sandbox, scripts.wrap(script), timeout=command.timeout
        )
        duration = time.monotonic() - started
        if answer is None:
            return CommandResult(exit_code=None, output="", duration=duration, timed_out=True)
        captured = scripts.parse_capped(answer.result)
        if captured.late:
            # ended by its own deadline: a daemon that answers past the timeout let it run
            return CommandResult(
                exit_code=None, output=captured.output, duration=duration, timed_out=True
            )
        seen = len(captured.output.encode()) + captured.omitted
        cut = limits.output_bytes is not None and seen >= limits.output_bytes
        return CommandResult(
            exit_code=captured.exit_code,
            output=captured.output,
            duration=duration,
            omitted_bytes=captured.omitted,
            limit="output" if cut else limit_hit(captured.exit_code, captured.output, limits),
        )

    async def aclose(self) -> None:
        """Delete the sandbox (errors logged, not raised) and close the HTTP client."""
        await self._workspace.close()
