"""Start real PostgreSQL and MariaDB servers for tests and benchmarks.

PostgreSQL refuses to run as root: as root, the server runs as the unprivileged system user
``rho-db`` (created with ``useradd`` if missing) through ``runuser``. MariaDB runs as root
with ``--user=root``. A missing server calls ``missing()``: skip locally, fail under CI.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import hashlib
import os
import pwd
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from db_support import (
    PG_USER,
    Server,
    ServerExited,
    find,
    free_port,
    missing,
    own_server,
    seed,
    wait_for,
)

from rho_domain.config import DatabaseConfig


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


TEMPLATE_UNUSED_FOR = 7 * 24 * 3600  # a template no server was made from for a week goes


def initialized(data: Path, program: str, build: Callable[[Path], None], cache: Any) -> None:
    """``data``, a server's new data directory: a copy (``cp -a``: owners and modes kept) of
    the one ``build`` made once for this ``program`` binary and kept in ``cache``: the
    machine's test cache (a ``Path``: the ``machine_cache`` fixture, shared by every
    checkout), or pytest's cache directory (a ``pytest.Cache``); built in place without one
    (``cache`` None: ``-p no:cacheprovider``, or ``RHO_TEST_CACHE`` empty).

    ``initdb`` and ``mariadb-install-db`` cost 0.5-0.6 s of CPU each and the copy about 0.1 s;
    each test process that needs a server made its own, and a fresh clone's run all again.
    The first to ask builds the template under a lock while the others wait. The name is a
    digest of the program's path, size and time and of this module (where the builds'
    options are), so an upgraded server or a changed build is built anew; a template no
    server was made from for a week is removed (other checkouts' runs copy theirs)."""
    if cache is None:
        build(data)
        return
    if isinstance(cache, Path):
        shared = cache / "db-templates"
        shared.mkdir(parents=True, exist_ok=True)
    else:
        shared = Path(cache.mkdir("db-templates"))
    found = os.stat(program)
    key = f"{program} {found.st_size} {found.st_mtime_ns}".encode() + Path(__file__).read_bytes()
    template = shared / hashlib.sha256(key).hexdigest()[:16]
    with (shared / "lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if template.exists():
            os.utime(template)  # made from now: kept another week
        else:
            for old in shared.iterdir():  # one copied from now was touched: not this old
                if old.is_dir() and time.time() - old.stat().st_mtime > TEMPLATE_UNUSED_FOR:
                    shutil.rmtree(old, ignore_errors=True)
            # built where the server will run (the cache's parents may be closed to PG_USER)
            building = Path(tempfile.mkdtemp(prefix="rho-db-template-"))
            try:
                build(building / "data")
                partial = shared / f"{template.name}.partial"
                shutil.rmtree(partial, ignore_errors=True)
                subprocess.run(["cp", "-a", str(building / "data"), str(partial)], check=True)
                partial.rename(template)
            finally:
                shutil.rmtree(building, ignore_errors=True)
    subprocess.run(["cp", "-a", str(template), str(data)], check=True)


# A port is chosen free (``free_port``) and released before the server binds it, seconds
# later on a busy machine: another process may take it in between. The server then ends at
# its bind, and is started again on another port, this many times in all.
PORT_TRIES = 3

_SHARED: dict[str, Server] = {}
_STOPS = contextlib.ExitStack()


def _stop_shared() -> None:
    _SHARED.clear()
    _STOPS.close()


atexit.register(_stop_shared)  # a backstop: the session's finalizer stops it first


def shared_postgres(request: pytest.FixtureRequest) -> Server:
    """The one seeded PostgreSQL of this test process, started on first use by a
    session-scoped fixture (``request``) and stopped when the test session ends.

    Every module that needs a server asks here, not with a session fixture of its own: a
    session-scoped fixture imported into several modules is one fixture per module to pytest,
    so each of them started its own cluster (``initdb`` and a start, seconds apiece) in each
    worker. Tests keep apart by schema (the stores) or by the seed's checksums (the attacks).
    """
    if "postgres" not in _SHARED:
        cache = request.getfixturevalue("machine_cache")  # tests/conftest.py
        _SHARED["postgres"] = _STOPS.enter_context(running_postgres(cache))
        request.addfinalizer(_stop_shared)
    return _SHARED["postgres"]


@contextlib.contextmanager
def running_postgres(cache: Any = None) -> Iterator[Server]:
    """Start a seeded PostgreSQL in a temporary directory; stop and remove it on exit. Its
    data directory is a copy of the one ``initdb`` made once in ``cache``
    (``initialized``)."""
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
    data = workdir / "data"

    def run(argv: list[str]) -> None:
        subprocess.run(as_db_user(argv), check=True, capture_output=True)

    def build(into: Path) -> None:
        if os.geteuid() == 0:
            shutil.chown(into.parent, PG_USER)  # initdb, as PG_USER, creates ``into`` there
        run([initdb, "-D", str(into), "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-sync"])

    initialized(data, initdb, build, cache)
    log = workdir / "log"
    for attempt in range(1, PORT_TRIES + 1):
        port = free_port()
        options = f"-p {port} -k {workdir} -c listen_addresses=127.0.0.1 -c fsync=off"
        try:
            run([pg_ctl, "-D", str(data), "-o", options, "-l", str(log), "-w", "start"])
            break
        except subprocess.CalledProcessError:
            said = log.read_text() if log.exists() else ""
            if "Address already in use" not in said or attempt == PORT_TRIES:
                shutil.rmtree(workdir, ignore_errors=True)
                raise AssertionError(f"PostgreSQL did not start:\n{said}") from None
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


@contextlib.contextmanager
def running_mariadb(cache: Any = None, options: tuple[str, ...] = ()) -> Iterator[Server]:
    """Start a seeded MariaDB in a temporary directory; stop and remove it on exit. Its
    data directory is a copy of the one ``mariadb-install-db`` made once in ``cache``
    (``initialized``); ``options``: more of ``mariadbd``'s options."""
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
    data, sock = workdir / "data", workdir / "mysqld.sock"
    user = ["--user=root"] if os.geteuid() == 0 else []

    def build(into: Path) -> None:
        installed = subprocess.run(
            [
                install_db,
                "--no-defaults",
                f"--datadir={into}",
                "--auth-root-authentication-method=normal",
                "--skip-test-db",
                *user,
            ],
            check=False,
            capture_output=True,
            text=True,
        )
        # its own words, so that a failure on a busy shared machine can be told from a bug
        assert installed.returncode == 0, installed.stdout + installed.stderr

    initialized(data, install_db, build, cache)
    log_path = workdir / "server.log"
    log = log_path.open("w")
    proc: subprocess.Popen[bytes] | None = None
    try:
        for attempt in range(1, PORT_TRIES + 1):
            port = free_port()
            proc = subprocess.Popen(
                [
                    mariadbd,
                    "--no-defaults",
                    f"--datadir={data}",
                    f"--port={port}",
                    "--bind-address=127.0.0.1",
                    f"--socket={sock}",
                    f"--pid-file={workdir / 'pid'}",
                    # its temporary tables in its own directory, not the machine's shared /tmp,
                    # where one vanished mid-query on a busy machine (an attack test failed
                    # with "Error on delete of '/tmp/#sql-temptable-...'")
                    f"--tmpdir={workdir}",
                    "--innodb-buffer-pool-size=32M",
                    "--skip-log-bin",
                    *user,
                    *options,
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
            )
            # No TLS on loopback (the product's adapter does the same): PyMySQL would
            # otherwise negotiate it on every admin connection the checksums open, ~23 ms each.
            admin_kw = {
                "host": "127.0.0.1",
                "port": port,
                "user": "root",
                "password": "",
                "ssl_disabled": True,
            }

            def ours(kw: dict[str, Any] = admin_kw) -> Any:
                # a read timeout: a server of another kind on the port (PostgreSQL's waits
                # for the client to speak first) would leave the greeting's read waiting.
                # A short one: a greeting not read is asked for again until the deadline,
                # and while the read waits, our server's exit (its port taken) goes unseen
                # (5 s here were most of test_a_mariadb_whose_port_is_taken_starts_on_another)
                conn = pymysql.connect(**kw, read_timeout=1)
                return own_server(conn, "SELECT @@datadir", data)

            try:
                wait_for(ours, "mariadb", process=proc)
                break
            except ServerExited:
                said = log_path.read_text()
                if "Address already in use" not in said or attempt == PORT_TRIES:
                    raise AssertionError(f"mariadbd ended as it started:\n{said}") from None
                log.write(f"-- port {port} taken between its choice and the bind: another\n")
                log.flush()
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
        if proc is not None:
            proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        log.close()
        shutil.rmtree(workdir, ignore_errors=True)
