"""The database servers' rig (``db_servers``): a MariaDB or PostgreSQL whose port another
process took between ``free_port`` and the server's bind starts on another port, and the
tests reach their own server, not whoever answers on the port.

The port is chosen free and released, and the server binds it seconds later on a busy
machine (the data directory's copy, InnoDB's start): another process, another test run's
server or any program, may take it in between. The server then ends at its bind; the rig
waited the whole minute of ``wait_for`` on the port, and an answer there was taken for the
server's, so two test processes could share one server and see each other's settings.
"""

from __future__ import annotations

import socket
import time
from pathlib import Path

import db_servers
import pytest
from db_servers import running_mariadb, running_postgres
from db_support import Server, free_port


def _chosen_first(monkeypatch: pytest.MonkeyPatch, port: int) -> None:
    """``free_port`` answers ``port`` once, then free ports again."""
    chosen = [port]
    monkeypatch.setattr(db_servers, "free_port", lambda: chosen.pop() if chosen else free_port())


def test_a_mariadb_whose_port_is_taken_starts_on_another(
    monkeypatch: pytest.MonkeyPatch, machine_cache: Path | None
) -> None:
    with socket.socket() as taken:  # another process's server on the port chosen first
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        held = int(taken.getsockname()[1])
        _chosen_first(monkeypatch, held)
        started = time.monotonic()
        with running_mariadb(machine_cache) as server:  # the kept data directory
            took = time.monotonic() - started
            assert server.config.port != held
            conn = server.admin()
            try:
                cursor = conn.cursor()
                cursor.execute("SELECT count(*) FROM users")
                assert cursor.fetchone() == (20,)
            finally:
                conn.close()
            log = (server.workdir / "server.log").read_text()
    assert f"port {held} taken" in log
    assert took < 45, f"{took:.1f} s to start (the wait for a port nobody serves is 60 s)"


def test_mariadb_keeps_its_temporary_tables_in_its_own_directory(mariadb_server: Server) -> None:
    """Not the machine's shared /tmp, where a temporary table vanished mid-query on a busy
    machine and an attack test failed on it ("Error on delete of '/tmp/#sql-temptable-...'")."""
    conn = mariadb_server.admin()
    try:
        cursor = conn.cursor()
        cursor.execute("SELECT @@tmpdir")
        (tmpdir,) = cursor.fetchone()
    finally:
        conn.close()
    assert Path(tmpdir).resolve() == mariadb_server.workdir.resolve()


def test_a_postgresql_whose_port_is_taken_starts_on_another(
    monkeypatch: pytest.MonkeyPatch, machine_cache: Path | None
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        held = int(taken.getsockname()[1])
        _chosen_first(monkeypatch, held)
        with running_postgres(machine_cache) as server:
            assert server.config.port != held
            conn = server.admin()
            try:
                assert conn.execute("SELECT count(*) FROM users").fetchone() == (20,)
            finally:
                conn.close()
