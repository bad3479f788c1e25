"""Database adapters: SQLite, PostgreSQL, MySQL/MariaDB, Oracle and Vertica.

Each implements the ``Database`` port over a blocking DB-API driver run in a thread, imports
its driver lazily (``MissingExtra`` names the pip extra when it is absent), reuses one
connection per alias after checking it, fetches with ``fetchmany`` and, in read-only mode,
runs every statement inside the engine's read-only transaction after the statement check.
"""

from rho_adapters.db.base import ThreadedDatabase
from rho_adapters.db.config import parse_databases
from rho_adapters.db.errors import StatementTimeout, map_driver_errors
from rho_adapters.db.factory import ADAPTERS, open_databases

__all__ = [
    "ADAPTERS",
    "StatementTimeout",
    "ThreadedDatabase",
    "map_driver_errors",
    "open_databases",
    "parse_databases",
]
