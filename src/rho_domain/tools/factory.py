"""build_registry: the tools a permission profile gives the model, and nothing else.

The one place tools are registered (the facade and every test call it):

* restricted shell: bash (restricted), read, grep, glob, list, read_excel;
* unrestricted shell: bash (unrestricted) plus the same read tools;
* file_write FULL adds write and edit; CREATE_ONLY adds a create-only write and no edit;
* database tools (one per engine) come from ``database_tools`` when databases are configured;
* ``delegation`` adds ``delegate`` (a child agent gets a registry without it);
* ``bash_only`` keeps bash alone; ``denied_tools`` are removed last.

A tool the profile does not register does not exist for the model. The executor enforces the
same profile, so a registry mistake still cannot write in read-only mode.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from rho_domain.permissions import FileWriteMode, PermissionProfile, ShellMode
from rho_domain.ports.line_search import LineSearcher
from rho_domain.ports.spreadsheet import SpreadsheetReader
from rho_domain.tools.base import ToolHandler
from rho_domain.tools.bash import BashHandler
from rho_domain.tools.excel import ReadExcelHandler
from rho_domain.tools.grep import GrepHandler
from rho_domain.tools.listing import GlobHandler, ListHandler
from rho_domain.tools.read import ReadHandler
from rho_domain.tools.registry import ToolRegistry

if TYPE_CHECKING:  # built with the first database configured
    from rho_domain.database_config import DatabaseConfig

_EMPTY: Mapping[str, DatabaseConfig] = {}

BUILT_IN_TOOL_NAMES = (
    *("bash", "read", "grep", "glob", "list", "read_excel", "write", "edit", "delegate"),
    *("mysql", "oracle", "postgres", "sqlite", "vertica"),  # tools.database.DATABASE_TOOL_NAMES
)
"""Every tool ``build_registry`` can register, whatever the profile (the database tools
without importing their SQL checker); a test keeps it equal to the handlers' names."""


def build_registry(
    profile: PermissionProfile,
    *,
    databases: Mapping[str, DatabaseConfig] = _EMPTY,
    spreadsheet_reader: SpreadsheetReader | None = None,
    line_searcher: LineSearcher | None = None,
    delegation: bool = False,
    extra: tuple[ToolHandler, ...] = (),
    output_limit: int = 20_000,
) -> ToolRegistry:
    """Return the registry for ``profile`` (see the module docstring for the rules).

    ``extra`` handlers (an embedder's own tools) join before ``denied_tools`` applies.
    ``line_searcher`` runs grep's pattern where ripgrep is missing (without one, grep needs
    ripgrep).
    """
    restricted = profile.shell is ShellMode.RESTRICTED
    handlers: list[ToolHandler] = [
        BashHandler(restricted=restricted, timeout=profile.shell_timeout)
    ]
    if not profile.bash_only:
        handlers += [
            ReadHandler(),
            GrepHandler(line_searcher),
            GlobHandler(),
            ListHandler(),
            ReadExcelHandler(spreadsheet_reader),
        ]
        # The writing tools and delegate are imported where the profile registers them: a
        # read-only run without delegation (a one-shot's) never loads them.
        if profile.file_write is FileWriteMode.FULL:
            from rho_domain.tools.write import EditHandler, WriteHandler

            handlers += [WriteHandler(create_only=False), EditHandler()]
        elif profile.file_write is FileWriteMode.CREATE_ONLY:
            from rho_domain.tools.write import WriteHandler

            handlers.append(WriteHandler(create_only=True))
        if databases:
            # Imported here: the SQL checker (rho_domain.sql) is loaded only by a process
            # that has databases, not by every run's start-up.
            from rho_domain.tools.database import database_tools

            handlers += database_tools(databases, profile)
        if delegation:
            from rho_domain.tools.delegate import DelegateTool

            handlers.append(DelegateTool())
    handlers += extra
    kept = [h for h in handlers if h.name not in profile.denied_tools]
    return ToolRegistry(kept, output_limit=output_limit)


def dangerous_on_every_call(profile: PermissionProfile) -> frozenset[str]:
    """The built-in tools ``profile`` registers whose handler declares every call dangerous:
    bash when the shell is unrestricted, write and edit whenever they are registered.

    Naming such a tool in a GRANULAR profile's ``approval_required_tools`` asks nothing that
    DANGEROUS would not, so ``profile_grants`` compares profiles without them (the built-in
    ``developer``, GRANULAR with bash, write and edit, grants what a DANGEROUS one does). An
    embedder's ``extra`` tool of the same name replaces the built-in one and its policy.
    """
    names: set[str] = set()
    if profile.shell is ShellMode.UNRESTRICTED:
        names.add("bash")
    if not profile.bash_only:
        if profile.file_write is FileWriteMode.FULL:
            names |= {"write", "edit"}
        elif profile.file_write is FileWriteMode.CREATE_ONLY:
            names.add("write")
    return frozenset(names)
