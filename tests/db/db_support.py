"""Helpers shared by the database tests: servers, seed data, checksums, adapters."""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest

from rho_adapters.db import ADAPTERS
from rho_domain.config import DatabaseConfig
from rho_domain.permissions import DatabaseMode
from rho_domain.ports.database import Database

IN_CI = os.environ.get("CI", "").lower() == "true"
PG_USER = "rho-db"
SEED_USERS = [(i, f"user{i}", f"user{i}@example.com", i * 10) for i in range(1, 21)]
SEED_ORDERS = [(i, (i % 20) + 1, f"item-{i}", i * 1.5) for i in range(1, 51)]
TABLES = ("users", "orders")


@attrs.frozen
class Server:
    """A running server: its DatabaseConfig for the adapter, and an admin connect()."""

    engine: str
    config: DatabaseConfig
    admin: Callable[[], Any]
    workdir: Path


def missing(reason: str) -> None:
    if IN_CI:
        pytest.fail(f"CI=true and {reason}")
    pytest.skip(reason)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def find(*names: str) -> str | None:
    pg_dirs = sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)
    extra = ":".join(["/usr/local/bin", *pg_dirs, "/usr/sbin", "/usr/bin"])
    for name in names:
        found = shutil.which(name) or shutil.which(name, path=extra)
        if found:
            return found
    return None


class ServerExited(Exception):
    """The server process being waited for ended (``wait_for``'s ``process``)."""


def wait_for(
    connect: Callable[[], Any],
    what: str,
    seconds: float = 60.0,
    process: subprocess.Popen[bytes] | None = None,
) -> None:
    """Wait until ``connect()`` gives a connection (closed again), at most ``seconds``;
    ``ServerExited`` as soon as ``process`` (the server being waited for) has ended, rather
    than wait out the deadline on a port nobody serves, or be answered by whoever took it."""
    deadline = time.monotonic() + seconds
    while True:
        if process is not None and process.poll() is not None:
            raise ServerExited(f"{what} exited with {process.returncode} before it answered")
        try:
            connect().close()
            return
        except Exception:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)  # a server starting is ready in well under a second


def until(
    condition: Callable[[], bool], what: str, seconds: float = 60.0, every: float = 0.01
) -> None:
    """Return once ``condition()`` is true, asking every ``every`` seconds; fail naming
    ``what`` after ``seconds`` (a bound about hanging only). A loop that asks again at once
    costs the test and the server a core for as long as it waits, and can keep what it asks
    about from changing (``my_running_secret``'s ``INNODB_TRX``)."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"{what}: not within {seconds:g} s")
        time.sleep(every)


def own_server(conn: Any, query: str, data: Path) -> Any:
    """``conn`` if the server it reached reports ``data`` as its data directory (``query``);
    otherwise closed, and an error: the port was answered by another process's server."""
    cursor = conn.cursor()
    cursor.execute(query)
    (reported,) = cursor.fetchone()
    cursor.close()
    if Path(str(reported)).resolve() != data.resolve():
        conn.close()
        raise ConnectionError(f"another server answers on this port (its data: {reported})")
    return conn


def seed(conn: Any, engine: str) -> None:
    cur = conn.cursor()
    text = "VARCHAR(100)"
    cur.execute(
        f"CREATE TABLE users (id INTEGER PRIMARY KEY, name {text} NOT NULL, "
        f"email {text} UNIQUE, score INTEGER DEFAULT 0)"
    )
    cur.execute(
        f"CREATE TABLE orders (id INTEGER PRIMARY KEY, user_id INTEGER NOT NULL "
        f"REFERENCES users(id), item {text}, amount NUMERIC(10,2))"
    )
    cur.execute("CREATE INDEX ix_orders_user ON orders (user_id)")
    cur.execute("CREATE VIEW big_orders AS SELECT * FROM orders WHERE amount > 50")
    mark = "?" if engine == "sqlite" else "%s"
    cur.executemany(f"INSERT INTO users VALUES ({mark}, {mark}, {mark}, {mark})", SEED_USERS)
    cur.executemany(f"INSERT INTO orders VALUES ({mark}, {mark}, {mark}, {mark})", SEED_ORDERS)
    if engine == "postgres":
        cur.execute("CREATE SEQUENCE order_seq")
    conn.commit()


_ADMIN: dict[tuple[str, str | None, int | None], Any] = {}


def _admin(server: Server) -> Any:
    """An autocommit admin connection to ``server``, kept for the next checksum: a server's
    own connection costs a backend start (PostgreSQL) or a handshake (MariaDB), and the
    adversarial suite takes two checksums per attack. SQLite files are opened each time."""
    if server.engine == "sqlite":
        return server.admin()
    key = (server.engine, server.config.host, server.config.port)
    conn = _ADMIN.get(key)
    if conn is None:
        conn = _ADMIN[key] = server.admin()
        if server.engine == "postgres":
            conn.autocommit = True
        else:
            conn.autocommit(True)
    return conn


def checksum(server: Server) -> dict[str, Any]:
    """Every table's rows (ordered), the table list, and the PostgreSQL sequence value."""
    try:
        return _checksum(server, _admin(server))
    except Exception:  # a kept connection an attack ended: once more on a new one
        stale = _ADMIN.pop((server.engine, server.config.host, server.config.port), None)
        if stale is None:
            raise
        with contextlib.suppress(Exception):
            stale.close()
        return _checksum(server, _admin(server))


def _checksum(server: Server, conn: Any) -> dict[str, Any]:
    try:
        cur = conn.cursor()
        result: dict[str, Any] = {}
        for table in TABLES:
            cur.execute(f"SELECT * FROM {table} ORDER BY id")
            result[table] = [tuple(str(v) for v in row) for row in cur.fetchall()]
        if server.engine == "sqlite":
            cur.execute("SELECT type, name FROM sqlite_master ORDER BY name")
        elif server.engine == "postgres":
            cur.execute(
                "SELECT table_schema, table_name FROM information_schema.tables "
                "WHERE table_schema NOT IN ('pg_catalog', 'information_schema') ORDER BY 2"
            )
            result["tables"] = [tuple(r) for r in cur.fetchall()]
            cur.execute("SELECT last_value, is_called FROM order_seq")
        else:
            cur.execute(
                "SELECT table_schema, table_name FROM information_schema.tables "
                "WHERE table_schema NOT IN ('mysql', 'information_schema', "
                "'performance_schema', 'sys') ORDER BY 2"
            )
        result["catalog"] = [tuple(r) for r in cur.fetchall()]
        return result
    finally:
        if server.engine == "sqlite":
            conn.close()


def adapter(
    server: Server, *, mode: DatabaseMode = DatabaseMode.READONLY, check: bool = True
) -> Database:
    """A fresh adapter for ``server``; ``check=False`` turns off layer 1 to prove layer 2."""
    cls = ADAPTERS[server.engine]
    return cls("t", server.config, mode=mode, check_statements=check)


@contextlib.contextmanager
def own_pg_database(
    server: Server, name: str, setup: Iterable[str], *, roles: Iterable[str] = ()
) -> Iterator[Server]:
    """A database ``name`` of a test file's own on the PostgreSQL ``server`` (one a killed run
    left is dropped first), ``setup`` run in it by the administrator; yields ``server``
    pointed at it, then drops it and ``roles`` (cluster-wide: after the database, whose
    objects they may own)."""
    import psycopg

    admin = server.admin()
    admin.autocommit = True
    try:
        admin.execute(f"DROP DATABASE IF EXISTS {name}")
        admin.execute(f"CREATE DATABASE {name}")
        config = attrs.evolve(server.config, database=name)
        with psycopg.connect(
            host=config.host, port=config.port, user=config.user, dbname=name, autocommit=True
        ) as conn:
            for sql in setup:
                conn.execute(sql)
        yield attrs.evolve(server, config=config)
    finally:
        admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        for role in roles:
            admin.execute(f"DROP ROLE IF EXISTS {role}")
        admin.close()


@contextlib.contextmanager
def mariadb_objects(server: Server, setup: Iterable[str], teardown: Iterable[str]) -> Iterator[Any]:
    """An administrator's cursor on the MariaDB ``server`` once ``teardown`` (what a killed run
    left) then ``setup`` ran; afterwards the server's ``max_connections``, which the attack
    tests' stored functions raise with SET GLOBAL, is put back and ``teardown`` runs again."""
    teardown = tuple(teardown)
    conn = server.admin()
    cursor = conn.cursor()
    saved = max_connections(cursor)
    for sql in (*teardown, *setup):
        cursor.execute(sql)
    try:
        yield cursor
    finally:
        cursor.execute("SET GLOBAL max_connections = %s", (saved,))
        for sql in teardown:
            cursor.execute(sql)
        conn.close()


def max_connections(cursor: Any) -> int:
    """The MariaDB server's ``max_connections`` now: what a SET GLOBAL that ran changed."""
    cursor.execute("SELECT @@GLOBAL.max_connections")
    return int(cursor.fetchone()[0])
