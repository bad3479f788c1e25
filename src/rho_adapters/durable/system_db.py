"""The durable runs' system database: a SQLite file for one host, PostgreSQL for many.

``system_db_url`` turns what a user typed (a path, ``sqlite:///...``, ``postgresql://...``)
into the URL DBOS takes; ``shown`` is the same URL with its password replaced by ``***`` for
every message and log line.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

from rho_adapters.durable import load_dbos
from rho_domain.errors import ConfigError
from rho_domain.url_logins import hide_url_logins

load_dbos()  # MissingExtra naming the extra, before the import below fails

import sqlalchemy as sa  # noqa: E402 - DBOS's dependency: after the check above

_SCHEMES = ("sqlite://", "postgresql://", "postgres://", "postgresql+psycopg://")


def system_db_url(given: str) -> str:
    """The SQLAlchemy URL of the system database ``given`` names: a file path (made absolute)
    or a ``sqlite://`` / ``postgresql://`` URL. Raises ``ConfigError`` for another scheme."""
    text = given.strip()
    if not text:
        raise ConfigError("the durable runs' database is empty: pass a SQLite path or a URL")
    if "://" not in text:
        return f"sqlite:///{Path(os.path.expanduser(text)).resolve()}"
    if text.startswith("postgres://"):
        text = "postgresql://" + text.removeprefix("postgres://")
    if not text.startswith(_SCHEMES):
        raise ConfigError(
            f"the durable runs' database {shown(text)} is neither a SQLite path nor a "
            "sqlite:/// or postgresql:// URL"
        )
    return text


def shown(url: str) -> str:
    """``url`` with its password hidden (``url_logins``'s one rule)."""
    return hide_url_logins(url)


def said_by_database(exc: BaseException) -> str:
    """What the database said in ``exc``, on one line, logins hidden: the driver's own error
    where SQLAlchemy wrapped one (``DBAPIError.orig``, found along the chain DBOS raised).
    SQLAlchemy's text prefixed it with the driver's class ("(psycopg.OperationalError)"),
    and ended it with "(Background on this error at: https://sqlalche.me/...)" and, for a
    statement, its SQL: a refused connection read as DBOS's and SQLAlchemy's noise."""
    found: BaseException | None = exc
    for _ in range(8):  # a chain of causes, bounded: a cycle of contexts is possible
        if found is None or isinstance(found, sa.exc.DBAPIError):
            break
        found = found.__cause__ or found.__context__
    said = found.orig if isinstance(found, sa.exc.DBAPIError) and found.orig else exc
    text = str(said).split("(Background on this error at:")[0]
    return hide_url_logins(" ".join(text.split()) or type(said).__name__)


def engine_url(url: str) -> str:
    """``url`` with the driver SQLAlchemy must use for it (psycopg 3 for PostgreSQL, as DBOS
    itself does)."""
    for scheme in ("postgresql://", "postgres://"):
        if url.startswith(scheme):
            return "postgresql+psycopg://" + url.removeprefix(scheme)
    return url


def engine_settings(url: str, *, concurrency: int) -> dict[str, Any]:
    """SQLAlchemy settings for DBOS's own engine on the system database ``url`` (its config's
    ``db_engine_kwargs``, which DBOS lays over its defaults), for a worker running
    ``concurrency`` runs at once.

    - No ping before each checkout (DBOS's default pings: one more round trip before each of
      a step's two transactions). A connection the server dropped fails its statement, and
      DBOS retries every system-database call that fails for a lost connection, on a fresh
      one (``db_retry``); nothing is lost, the retry costs what the ping saved many times.
    - A pool of at least one connection per run at once, and a few for DBOS's queue poller
      and listener (DBOS's default is 20 without overflow: a worker of more runs would wait
      for connections between steps).
    - PostgreSQL: ``synchronous_commit=off`` for these connections only (the heartbeat and the
      session store keep the server's setting). A commit is then acknowledged once the
      server has it in memory, before its WAL reaches the disk: the death of a worker, which
      is what a durable run guards against, loses nothing (the server has every step the
      worker was told was recorded). A crash of the database server itself may lose the
      last fraction of a second of step records (at most three ``wal_writer_delay``s; the
      database stays consistent): those steps are done again, as the step a worker dies in
      is (a model call sent again; a write that began answered ``interrupted`` from the
      trace). The same trade as SQLite's ``synchronous=NORMAL`` (``faster_sqlite_commits``).
    """
    settings: dict[str, Any] = {"pool_pre_ping": False, "pool_size": max(20, concurrency + 4)}
    if not url.startswith("sqlite"):
        settings["connect_args"] = {
            "application_name": "dbos_transact",  # DBOS's own default, kept
            "options": "-c synchronous_commit=off",
        }
    return settings


def faster_sqlite_commits() -> None:
    """Every SQLite connection this process opens through SQLAlchemy (DBOS's own included)
    writes ahead (``journal_mode=WAL``) and syncs at checkpoints, not at every commit
    (``synchronous=NORMAL``): a commit survives the death of the process, which is what a
    durable run on one host guards against, though not a power loss of the machine (use
    PostgreSQL for that). Measured in docs/benchmarks.md: the checkpoint of a step costs a
    fraction of the default's three fsyncs. Idempotent."""
    if not sa.event.contains(sa.engine.Engine, "connect", _sqlite_pragmas):
        sa.event.listen(sa.engine.Engine, "connect", _sqlite_pragmas)


def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
    if isinstance(dbapi_conn, sqlite3.Connection):
        dbapi_conn.execute("PRAGMA journal_mode=WAL")
        dbapi_conn.execute("PRAGMA synchronous=NORMAL")
