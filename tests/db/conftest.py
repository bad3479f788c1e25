"""Real database servers for the database tests: SQLite files, PostgreSQL and MariaDB.

PostgreSQL and MariaDB are started once per test session in temporary directories on free
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

import contextlib
import os
import pwd
import shutil
import sqlite3
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from db_support import (
    PG_USER,
    Server,
    find,
    free_port,
    missing,
    seed,
    wait_for,
)

from rho_domain.config import DatabaseConfig


@pytest.fixture
def sqlite_server(tmp_path: Path) -> Server:
    path = tmp_path / "app.db"
    conn = sqlite3.connect(path)
    seed(conn, "sqlite")
    conn.close()
    config = DatabaseConfig(engine="sqlite", path=str(path))
    return Server("sqlite", config, lambda: sqlite3.connect(path), tmp_path)


def as_db_user(argv: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return argv
    return ["runuser", "-u", PG_USER, "--", *argv]


def ensure_db_user() -> None:
    try:
        pwd.getpwnam(PG_USER)
    except KeyError:
        subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", PG_USER],
            check=True,
        )


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[Server]:
    initdb, pg_ctl = find("initdb"), find("pg_ctl")
    if not (initdb and pg_ctl):
        missing("PostgreSQL is not installed (initdb/pg_ctl not found on PATH)")
    psycopg = pytest.importorskip("psycopg")
    assert initdb
    assert pg_ctl
    workdir = Path(tempfile.mkdtemp(prefix="rho-pg-"))
    if os.geteuid() == 0:
        ensure_db_user()
        shutil.chown(workdir, PG_USER)
    data, port = workdir / "data", free_port()
    run = lambda argv: subprocess.run(as_db_user(argv), check=True, capture_output=True)  # noqa: E731
    run([initdb, "-D", str(data), "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-sync"])
    options = f"-p {port} -k {workdir} -c listen_addresses=127.0.0.1 -c fsync=off"
    run([pg_ctl, "-D", str(data), "-o", options, "-l", str(workdir / "log"), "-w", "start"])
    admin_kw = {"host": "127.0.0.1", "port": port, "user": "postgres"}
    try:
        wait_for(lambda: psycopg.connect(dbname="postgres", **admin_kw), "postgres")
        with psycopg.connect(dbname="postgres", autocommit=True, **admin_kw) as conn:
            conn.execute("CREATE DATABASE rho")
        conn = psycopg.connect(dbname="rho", **admin_kw)
        seed(conn, "postgres")
        conn.close()
        config = DatabaseConfig(
            engine="postgres", host="127.0.0.1", port=port, user="postgres", database="rho"
        )
        yield Server("postgres", config, lambda: psycopg.connect(dbname="rho", **admin_kw), workdir)
    finally:
        with contextlib.suppress(subprocess.CalledProcessError):
            run([pg_ctl, "-D", str(data), "-m", "immediate", "-w", "stop"])
        shutil.rmtree(workdir, ignore_errors=True)


@pytest.fixture(scope="session")
def mariadb_server() -> Iterator[Server]:
    mariadbd, install_db = (
        find("mariadbd", "mysqld"),
        find("mariadb-install-db", "mysql_install_db"),
    )
    if not (mariadbd and install_db):
        missing("MariaDB is not installed (mariadbd/mariadb-install-db not found)")
    pymysql = pytest.importorskip("pymysql")
    assert mariadbd
    assert install_db
    workdir = Path(tempfile.mkdtemp(prefix="rho-mariadb-"))
    data, port, sock = workdir / "data", free_port(), workdir / "mysqld.sock"
    user = ["--user=root"] if os.geteuid() == 0 else []
    subprocess.run(
        [
            install_db,
            "--no-defaults",
            f"--datadir={data}",
            "--auth-root-authentication-method=normal",
            "--skip-test-db",
            *user,
        ],
        check=True,
        capture_output=True,
    )
    log = (workdir / "server.log").open("w")
    proc = subprocess.Popen(
        [
            mariadbd,
            "--no-defaults",
            f"--datadir={data}",
            f"--port={port}",
            "--bind-address=127.0.0.1",
            f"--socket={sock}",
            f"--pid-file={workdir / 'pid'}",
            "--innodb-buffer-pool-size=32M",
            "--skip-log-bin",
            *user,
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    admin_kw = {"host": "127.0.0.1", "port": port, "user": "root", "password": ""}
    try:
        wait_for(lambda: pymysql.connect(**admin_kw), "mariadb")
        conn = pymysql.connect(**admin_kw)
        conn.cursor().execute("CREATE DATABASE rho")
        conn.close()
        conn = pymysql.connect(database="rho", **admin_kw)
        seed(conn, "mysql")
        conn.close()
        config = DatabaseConfig(
            engine="mysql", host="127.0.0.1", port=port, user="root", database="rho"
        )
        yield Server("mysql", config, lambda: pymysql.connect(database="rho", **admin_kw), workdir)
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
        shutil.rmtree(workdir, ignore_errors=True)


@pytest.fixture(params=["sqlite", "postgres", "mysql"])
def server(request: pytest.FixtureRequest) -> Server:
    """Each real engine in turn."""
    name = {"sqlite": "sqlite_server", "postgres": "postgres_server", "mysql": "mariadb_server"}
    return request.getfixturevalue(name[request.param])
