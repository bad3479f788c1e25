"""The design documents' handler names and ``ToolFactory``, over the domain's tools.

Each handler name is the domain handler itself, or a subclass that only gives the documents'
constructor defaults (``BashHandler(restricted=True)``: 120 s restricted, 300 s unrestricted;
``WriteHandler()``: overwriting allowed; ``ReadExcelHandler()``: openpyxl). The database
handlers are the domain's one tool per engine, for the aliases given::

    SqliteHandler({"local": DatabaseConfig(engine="sqlite", path="app.db")})

``ToolFactory(profile).create_registry(working_dir=...)`` is ``build_registry``: the tools the
profile gives a model (database tools for the databases configured in ``databases.yaml``, the
file ``$RHO_AGENT_DB_CONFIG`` names, or the engines' environment variables), as a
``ToolRegistry`` whose ``dispatch(invocation)`` runs in ``working_dir`` under that profile.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from rho_domain.config import DatabaseConfig
from rho_domain.permissions import PermissionProfile, readonly_profile
from rho_domain.tools import bash, database, excel, write
from rho_domain.tools.factory import build_registry
from rho_domain.tools.grep import GrepHandler
from rho_domain.tools.listing import GlobHandler, ListHandler
from rho_domain.tools.read import ReadHandler
from rho_domain.tools.write import EditHandler
from rho_entry.seed_api.tools import ToolRegistry

__all__ = [
    "BashHandler",
    "EditHandler",
    "GlobHandler",
    "GrepHandler",
    "ListHandler",
    "MysqlHandler",
    "OracleHandler",
    "PostgresHandler",
    "ReadExcelHandler",
    "ReadHandler",
    "SqliteHandler",
    "ToolFactory",
    "VerticaHandler",
    "WriteHandler",
]

RESTRICTED_TIMEOUT = 120.0
UNRESTRICTED_TIMEOUT = 300.0


class BashHandler(bash.BashHandler):
    """``bash``; ``restricted`` (default True) runs allowlisted read-only programs only."""

    def __init__(self, restricted: bool = True, timeout: float | None = None) -> None:
        if timeout is None:
            timeout = RESTRICTED_TIMEOUT if restricted else UNRESTRICTED_TIMEOUT
        super().__init__(restricted=restricted, timeout=timeout)


class WriteHandler(write.WriteHandler):
    """``write``; ``create_only`` refuses to overwrite an existing file."""

    def __init__(self, create_only: bool = False) -> None:
        super().__init__(create_only=create_only)


class ReadExcelHandler(excel.ReadExcelHandler):
    """``read_excel``, reading workbooks with openpyxl unless another reader is given."""

    def __init__(self, reader: Any = None) -> None:
        if reader is None:
            from rho_entry.wiring import build_spreadsheet_reader

            reader = build_spreadsheet_reader()
        super().__init__(reader)


class _EngineHandler(database.DatabaseTool):
    engine = ""

    def __init__(
        self, aliases: Mapping[str, DatabaseConfig], profile: PermissionProfile | None = None
    ) -> None:
        super().__init__(self.engine, aliases, profile or readonly_profile())


class SqliteHandler(_EngineHandler):
    """``sqlite``: the SQLite databases of ``aliases`` (read-only unless the profile allows
    mutations)."""

    engine = "sqlite"


class PostgresHandler(_EngineHandler):
    """``postgres``: the PostgreSQL databases of ``aliases``."""

    engine = "postgres"


class MysqlHandler(_EngineHandler):
    """``mysql``: the MySQL/MariaDB databases of ``aliases``."""

    engine = "mysql"


class OracleHandler(_EngineHandler):
    """``oracle``: the Oracle databases of ``aliases``."""

    engine = "oracle"


class VerticaHandler(_EngineHandler):
    """``vertica``: the Vertica databases of ``aliases``."""

    engine = "vertica"


class _FactoryRegistry(ToolRegistry):
    """A profile's registry whose workspace also opens its configured databases."""

    def __init__(self, *args: Any, databases: Mapping[str, DatabaseConfig], **kw: Any) -> None:
        super().__init__(*args, **kw)
        self._configured = dict(databases)

    def databases(self) -> Mapping[str, Any]:
        """The configured databases, opened lazily in the profile's database mode."""
        if not self._configured:
            return {}
        from rho_adapters.db import open_databases

        return open_databases(self._configured, mode=self.profile.database, environ=os.environ)


class ToolFactory:
    """Builds the registry of a permission profile (``create_registry``)."""

    def __init__(
        self,
        profile: PermissionProfile,
        *,
        databases: Mapping[str, DatabaseConfig] | None = None,
    ) -> None:
        self.profile = profile
        self._databases = databases

    def create_registry(self, working_dir: str | os.PathLike[str] | None = None) -> ToolRegistry:
        """The profile's tools (see the module docstring), dispatching in ``working_dir`` (a
        text or a ``pathlib.Path``)."""
        databases = self._databases
        if databases is None:
            from rho_entry.config.databases_config import load_databases

            databases = load_databases(os.environ)
        tools = build_registry(
            self.profile, databases=databases, spreadsheet_reader=ReadExcelHandler().reader
        )
        return _FactoryRegistry(
            [handler for name in tools.names if (handler := tools.get(name)) is not None],
            output_limit=tools.output_limit,
            working_dir=working_dir,
            profile=self.profile,
            databases=databases,
        )
