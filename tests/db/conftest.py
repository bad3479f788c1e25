"""Real database servers for the database tests: SQLite files, PostgreSQL and MariaDB.

PostgreSQL and MariaDB are started once per test process in temporary directories on free
loopback ports, and stopped afterwards. Locally a missing server binary skips those tests
with the reason; under ``CI=true`` it fails them (CI installs the servers with
``.ci/install-db-servers.sh``).

PostgreSQL refuses to run as root. When the tests run as root, the server runs as the
unprivileged system user ``rho-db`` (created here with ``useradd`` if missing), through
``runuser``. MariaDB runs as root with ``--user=root``.

Every engine gets the same seed: ``users``, ``orders`` (and a view ``big_orders``), which
the adversarial suite checksums before and after its attacks.
"""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from db_servers import running_mariadb, shared_postgres
from db_support import (
    Server,
    seed,
)

from rho_domain.config import DatabaseConfig


@pytest.fixture(scope="session")
def sqlite_seeded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The seeded SQLite file, built once: seeding commits each DDL statement (an fsync
    apiece, ~50 ms a test on a busy disk), while a copy of the finished file costs nothing."""
    path = tmp_path_factory.mktemp("sqlite-seed") / "app.db"
    conn = sqlite3.connect(path)
    seed(conn, "sqlite")
    conn.close()
    return path


@pytest.fixture
def sqlite_server(tmp_path: Path, sqlite_seeded: Path) -> Server:
    """A fresh copy of the seeded file per test: what one test's attack did to its file,
    the next test never sees."""
    path = tmp_path / "app.db"
    shutil.copyfile(sqlite_seeded, path)
    config = DatabaseConfig(engine="sqlite", path=str(path))
    return Server("sqlite", config, lambda: sqlite3.connect(path), tmp_path)


@pytest.fixture(scope="session")
def postgres_server(request: pytest.FixtureRequest) -> Server:
    """The process's one PostgreSQL, shared with the session-store tests (``shared_postgres``)."""
    return shared_postgres(request)


@pytest.fixture(scope="session")
def mariadb_server(machine_cache: Path | None) -> Iterator[Server]:
    with running_mariadb(machine_cache) as server:
        yield server


@pytest.fixture(params=["sqlite", "postgres", "mysql"])
def server(request: pytest.FixtureRequest) -> Server:
    """Each real engine in turn."""
    name = {"sqlite": "sqlite_server", "postgres": "postgres_server", "mysql": "mariadb_server"}
    server: Server = request.getfixturevalue(name[request.param])
    return server
