"""MemoryExecutor: a workspace held in a dict, with scripted commands.

Files are bytes keyed by workspace-relative POSIX paths; directories exist implicitly.
Commands are answered by handlers you register by program name (``argv[0]`` of the first
stage, or the first word of a shell string); anything else exits 127. It takes the same
``file_write`` and ``allow_shell`` settings as the real executors and enforces them the same way
(OFF refuses every write, CREATE_ONLY refuses overwrites and what it does not create, a shell
string needs ``allow_shell``), and confines paths like them (no ``..`` or absolute escapes),
refuses secrets (``rho_domain.secrets``), paths never written (``write_rules.write_refusal``, a
planted git HEAD) and paths naming a directory. It joins their contract suite
(tests/tools/test_executor_contract.py).
"""

from __future__ import annotations

import bisect
import inspect
import posixpath
from collections.abc import Awaitable, Callable, Mapping, Sequence

from rho_domain.create_only import create_only_refusal, created_content_refusal
from rho_domain.errors import PathOutsideWorkspace, PermissionDenied, SensitivePath, ToolError
from rho_domain.paths import check_file_path, check_path_text
from rho_domain.permissions import FileWriteMode
from rho_domain.ports.executor import (
    Command,
    CommandResult,
    Executor,
    FileInfo,
    FileKind,
    FileUpload,
    Placement,
    PlacementTold,
)
from rho_domain.secrets import DEFAULT_POLICY
from rho_domain.shell.glob import expand, port_lister
from rho_domain.write_rules import (
    ENVIRONMENT_MARKERS,
    check_write_mode,
    environment_refusal,
    write_refusal,
)
from rho_domain.written_content import content_refusal

CommandHandler = Callable[[Command], CommandResult | Awaitable[CommandResult]]


class MemoryExecutor(Executor):
    """In-memory Executor. ``runs`` records every Command; ``writes`` every written path."""

    def __init__(
        self,
        files: Mapping[str, bytes | str] | None = None,
        *,
        commands: Mapping[str, CommandHandler] | None = None,
        file_write: FileWriteMode = FileWriteMode.FULL,
        allow_shell: bool = False,
        root: str = "/workspace",
    ) -> None:
        self.root = root
        self.files: dict[str, bytes] = {}
        for path, data in (files or {}).items():
            self.files[self._key(path)] = data.encode() if isinstance(data, str) else data
        self.commands = dict(commands or {})
        self.file_write = file_write
        self.allow_shell = allow_shell
        self.runs: list[Command] = []
        self.writes: list[str] = []
        self.uploads: list[str] = []
        self.closed = False
        self._keys_seen: tuple[str, ...] = ()
        self._sorted: list[str] = []  # the keys in order, for prefix ranges
        self._order: dict[str, int] = {}  # key -> its place in ``files``

    placement = Placement(backend="memory")  # ``Executor.placement``: this process

    def on_placed(self, told: PlacementTold | None) -> None:
        """See ``Executor.on_placed``: the place never changes, so no one is ever told."""
        return

    @property
    def working_dir(self) -> str:
        """See ``Executor.working_dir``."""
        return self.root

    def _key(self, path: str) -> str:
        if "/" not in path and path not in ("", ".", ".."):
            return path  # a plain name is its own normal form
        if path.startswith(self.root + "/") or path == self.root:
            path = path[len(self.root) :].lstrip("/") or "."
        if posixpath.isabs(path):
            raise PathOutsideWorkspace(f"{path!r} is outside the workspace {self.root}")
        normal = posixpath.normpath(path)
        if normal == ".." or normal.startswith("../"):
            raise PathOutsideWorkspace(f"{path!r} is outside the workspace {self.root}")
        return "" if normal == "." else normal

    def _index(self) -> list[str]:
        """The keys of ``files`` in sorted order. ``files`` is public (tests edit it), so the
        index is rebuilt whenever its keys or their order changed; with it a listing is a
        bisect, not a scan of every file (a glob over n directories cost n² comparisons)."""
        keys = tuple(self.files)
        if keys != self._keys_seen:
            self._keys_seen = keys
            self._sorted = sorted(self.files)
            self._order = {key: i for i, key in enumerate(self.files)}
        return self._sorted

    def _under(self, prefix: str) -> list[str]:
        """The keys that start with ``prefix``, in ``files`` order."""
        keys = self._index()
        found: list[str] = []
        i = bisect.bisect_left(keys, prefix)
        while i < len(keys) and keys[i].startswith(prefix):
            found.append(keys[i])
            i += 1
        found.sort(key=self._order.__getitem__)
        return found

    def _is_dir(self, key: str) -> bool:
        if key == "":
            return True
        keys = self._index()
        start = bisect.bisect_left(keys, key + "/")
        return start < len(keys) and keys[start].startswith(key + "/")

    async def run(self, command: Command) -> CommandResult:
        """See ``Executor.run``."""
        if command.shell is not None and not self.allow_shell:
            raise PermissionDenied(
                "shell commands are not allowed: this profile's shell is restricted"
            )
        self._key(command.cwd)
        self.runs.append(command)
        if command.pipeline:
            program = command.pipeline[0].argv[0]
        else:
            program = (command.shell or "").split(maxsplit=1)[0] if command.shell else ""
        handler = self.commands.get(program)
        if handler is None:
            return CommandResult(
                exit_code=127, output=f"{program}: command not found", duration=0.0
            )
        outcome = handler(command)
        return await outcome if inspect.isawaitable(outcome) else outcome

    async def stat(self, path: str) -> FileInfo:
        """See ``Executor.stat``."""
        key = self._key(path)
        name = posixpath.basename(key) or "."
        if key in self.files:
            return FileInfo(path=key, name=name, kind=FileKind.FILE, size=len(self.files[key]))
        if self._is_dir(key):
            return FileInfo(path=key or ".", name=name, kind=FileKind.DIRECTORY)
        raise ToolError(f"no such file or directory: {path}")

    async def read(self, path: str, *, offset: int = 0, length: int | None = None) -> bytes:
        """See ``Executor.read``."""
        check_path_text(path)  # as every executor: a control character, ~, a backslash
        check_file_path(path)
        key = self._key(path)
        if reason := DEFAULT_POLICY.refusal(key):
            raise SensitivePath(f"{reason}; it may not be read")
        if key not in self.files:
            if self._is_dir(key):
                raise ToolError(f"{path} is a directory")
            raise ToolError(f"no such file: {path}")
        data = self.files[key]
        end = None if length is None else offset + length
        return data[offset:end]

    async def list_dir(self, path: str) -> tuple[FileInfo, ...]:
        """See ``Executor.list_dir``."""
        key = self._key(path)
        if not self._is_dir(key):
            raise ToolError(f"not a directory: {path}")
        prefix = key + "/" if key else ""
        entries: dict[str, FileInfo] = {}
        for file_path in self._under(prefix):
            data = self.files[file_path]
            first, _, rest = file_path[len(prefix) :].partition("/")
            child = prefix + first
            kind = FileKind.DIRECTORY if rest else FileKind.FILE
            entries[first] = FileInfo(
                path=child, name=first, kind=kind, size=0 if rest else len(data)
            )
        return tuple(entries.values())

    async def write(self, path: str, data: bytes, *, overwrite: bool) -> bool:
        """See ``Executor.write``."""
        check_write_mode(path, self.file_write, overwrite=overwrite)
        check_path_text(path)
        check_file_path(path)
        key = self._key(path)
        if reason := write_refusal(key) or content_refusal(key, data):
            raise SensitivePath(reason)  # as the real executors refuse it
        if reason := DEFAULT_POLICY.refusal(key):
            raise SensitivePath(f"{reason}; secrets are never written")
        dirs = key.split("/")[:-1]
        for depth in range(1, len(dirs) + 1):  # an environment's directory, as the executors
            where = "/".join(dirs[:depth])
            if any(self._under(f"{where}/{marker}") for marker in ENVIRONMENT_MARKERS):
                raise SensitivePath(environment_refusal(path, where))
        created = self.file_write is FileWriteMode.CREATE_ONLY
        if created and (reason := create_only_refusal(key) or created_content_refusal(key, data)):
            raise PermissionDenied(reason)
        existed = key in self.files
        if existed and not overwrite:
            raise PermissionDenied(f"{path} already exists and may not be overwritten")
        if self._is_dir(key) and not existed:
            raise ToolError(f"{path} is a directory")
        self.files[key] = data
        self.writes.append(key)
        return existed

    async def upload(self, files: Sequence[FileUpload]) -> None:
        """See ``Executor.upload``: into the workspace dict, whatever ``file_write``; each
        path is recorded in ``uploads``."""
        for item in files:
            check_file_path(item.path)
            if reason := write_refusal(item.path):
                raise SensitivePath(reason)
            key = self._key(item.path)
            self.files[key] = item.data
            self.uploads.append(key)

    async def glob(self, pattern: str, *, cwd: str = ".") -> tuple[str, ...]:
        """See ``Executor.glob``."""
        return await expand(pattern, cwd, port_lister(self))

    async def which(self, program: str) -> str | None:
        """See ``Executor.which``."""
        return f"/fake/bin/{program}" if program in self.commands else None

    async def aclose(self) -> None:
        """See ``Executor.aclose``."""
        self.closed = True
