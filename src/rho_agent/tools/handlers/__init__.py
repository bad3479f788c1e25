"""``rho_agent.tools.handlers``: the built-in handlers under the documents' names
(``rho_entry.seed_api.handlers``)."""

from rho_entry.seed_api.handlers import (
    BashHandler,
    EditHandler,
    GlobHandler,
    GrepHandler,
    ListHandler,
    MysqlHandler,
    OracleHandler,
    PostgresHandler,
    ReadExcelHandler,
    ReadHandler,
    SqliteHandler,
    VerticaHandler,
    WriteHandler,
)

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
    "VerticaHandler",
    "WriteHandler",
]
