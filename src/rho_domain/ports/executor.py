"""Executor: where commands run and files live (local machine, sandbox, memory).

Every tool is written once against this port. Paths are relative to ``working_dir`` (absolute
paths are accepted only when they lie inside it, or inside an allowed extra read root). The
executor confines every path to the workspace and enforces the profile's write mode itself, so
a bug in a tool handler cannot escape or write in read-only mode.

A command's values and an uploaded file (``Stage``, ``Command``, ``CommandResult``,
``FileUpload``) are defined in ``rho_domain.ports.commands`` and named here, imported with the
first one asked for: a run that starts no command and uploads nothing never builds them.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Awaitable, Callable, Sequence
from enum import Enum
from typing import TYPE_CHECKING, Protocol

import attrs

from rho_domain.lazy_names import lazy_names
from rho_domain.placement import Placement as Placement
from rho_domain.value_methods import value_eq, value_hash, value_repr

PlacementTold = Callable[[Placement], Awaitable[None]]
"""What ``Executor.on_placed`` calls with a place just made or reattached: it records it."""

if TYPE_CHECKING:
    from rho_domain.ports.commands import Command as Command
    from rho_domain.ports.commands import CommandResult as CommandResult
    from rho_domain.ports.commands import FileUpload as FileUpload
    from rho_domain.ports.commands import Stage as Stage


class FileKind(Enum):
    """What a path is."""

    FILE = "file"
    DIRECTORY = "directory"
    SYMLINK = "symlink"
    OTHER = "other"  # FIFO, socket, device: never read


@attrs.frozen(kw_only=True)
class FileInfo:
    """What a directory listing or stat reports. ``path`` is relative to the working dir."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    path: str
    name: str
    kind: FileKind
    size: int = 0
    mtime: float = 0.0
    mode: int = 0
    link_target: str | None = None


class Executor(Protocol):
    """Runs commands and performs file operations inside one workspace."""

    @property
    @abstractmethod
    def working_dir(self) -> str:
        """The workspace root, as the model should see it."""

    @property
    @abstractmethod
    def placement(self) -> Placement:
        """Where the work runs: the backend and what it calls the place (a sandbox's id,
        None until one exists). Never raises and sends no request: each run records it on
        ``run_start`` and ``run_end``, so an operator can find (and delete) the sandbox."""

    @abstractmethod
    def on_placed(self, told: PlacementTold | None) -> PlacementTold | None:
        """Have ``told`` awaited with the placement whenever the executor makes or reattaches
        its place (a sandbox), before any command runs there (None: tell no one); returns
        the one it replaces, which a run gives back when it ends (``run_boundaries``: a
        sub-agent's run on its parent's executor). A run registers its journal's here, so
        the trace names a sandbox the moment it exists: a run killed before its ``run_end``
        has still named it for its resume. A failure of ``told`` is logged, never raised
        into the call that made the place. Executors whose place never changes (this
        machine, memory) keep nothing and return None."""

    @abstractmethod
    async def run(self, command: Command) -> CommandResult:
        """Run the command in a fresh process group with stdin from /dev/null.

        On timeout the whole group is killed and ``timed_out`` is set. On cancellation of the
        awaiting task the whole group is killed before CancelledError propagates. Raises
        ``PathOutsideWorkspace`` for a cwd outside the workspace, ``ExecutorError`` when the
        machinery fails; a program that fails is a result with its exit code, not an error.
        """

    @abstractmethod
    async def stat(self, path: str) -> FileInfo:
        """Describe one path without following a final symlink out of the workspace.

        Raises ``FileNotFoundError``-like ``ToolError`` when missing, ``PathOutsideWorkspace``
        or ``SensitivePath`` when the path is not allowed.
        """

    @abstractmethod
    async def read(self, path: str, *, offset: int = 0, length: int | None = None) -> bytes:
        """Read up to ``length`` bytes of a regular file from ``offset``.

        Refuses FIFOs, devices and directories (never blocks), secrets files and paths outside
        the workspace (``PermissionDenied`` subclasses).
        """

    @abstractmethod
    async def list_dir(self, path: str) -> tuple[FileInfo, ...]:
        """List a directory's entries (unsorted, hidden entries included)."""

    @abstractmethod
    async def write(self, path: str, data: bytes, *, overwrite: bool) -> bool:
        """Write a file atomically, creating parent directories; return True if it replaced one.

        ``overwrite=False`` fails if the path exists (atomically, O_EXCL). Overwrites go through
        a temp file and rename, preserving the mode. Raises ``PermissionDenied`` when the
        profile's write mode forbids it or the path is sensitive.
        """

    @abstractmethod
    async def glob(self, pattern: str, *, cwd: str = ".") -> tuple[str, ...]:
        """Expand one pathname pattern relative to ``cwd`` as bash would.

        The rules are ``rho_domain.shell.glob`` (``*``, ``?``, brackets, no dotglob, no
        globstar, byte order); implementations list directories through their own confined
        listing and call ``rho_domain.shell.glob.expand``. Returns the sorted matches as bash
        prints them, or ``()`` when nothing matches. Raises ``PermissionDenied`` when the
        pattern's fixed directory lies outside the roots; matches below it that lead outside
        (a symlinked directory) are left out. Names are listed, never read, so secrets are
        returned: the caller checks them like any argument.
        """

    @abstractmethod
    async def upload(self, files: Sequence[FileUpload]) -> None:
        """Put the operator's files in place before the agent works (``--upload``): the
        operator's act, so the profile's write mode does not apply; parent directories are
        created and an existing file is replaced. Where a file may go is the executor's: a
        sandbox anywhere inside it (a relative path joins ``working_dir``), the local machine
        inside the workspace only. A destination named like a secret (``.env``, a key) or
        never written by agents (``.git/``) is refused (``SensitivePath``), as is ambiguous
        path text; the source was judged by the caller. ``ExecutorError`` when the transfer
        fails. The entry layer calls it (the agent never does); downloads are ``read``."""

    @abstractmethod
    async def which(self, program: str) -> str | None:
        """Return the path of an installed program, or None (e.g. to choose a grep fallback)."""

    @abstractmethod
    async def aclose(self) -> None:
        """Release resources (sandboxes, processes). Idempotent."""


__getattr__ = lazy_names(
    __name__,
    dict.fromkeys(("Command", "CommandResult", "FileUpload", "Stage"), "rho_domain.ports.commands"),
)
