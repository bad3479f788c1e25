"""Settings holding credentials, read by a login that sees every setting.

A standby's ``primary_conninfo`` holds its connection string, password included, and only a
superuser or a member of ``pg_read_all_settings`` may read it. The agent's superuser login
did, by ``SHOW primary_conninfo``, ``current_setting('primary_conninfo')`` (or a computed
name), ``pg_settings`` and ``SHOW ALL``: the check let them through (and, once it refused
``SHOW primary_conninfo``, ``SHOW "Primary_ConnInfo"``, and ``SHOW "all"`` once it refused
``SHOW ALL``: the server finds a name whatever its case, quoted too). Now the adapter asks
at connect whether the login sees every setting and, if so, the check refuses those names
(``pg_privileged``); ``SHOW <name>`` of any other setting still answers. Another login
keeps them, the server hiding such settings from it.
"""

from __future__ import annotations

from collections.abc import Iterator

import attrs
import pytest
from db_support import Server, adapter, until

from rho_adapters.db import ADAPTERS
from rho_domain.errors import StatementRefused
from rho_domain.permissions import DatabaseMode

SECRET = "host=primary.example user=replicator password=hunter2-conn"
READER = "rho_settings_reader17"
# (statement, what the refusal says)
READS = [
    ("SHOW primary_conninfo", "primary_conninfo is a setting that holds a connection string"),
    # the server finds a setting whatever its name's case, quoted too: this one passed
    ('SHOW "Primary_ConnInfo"', "primary_conninfo is a setting that holds a connection string"),
    ("SELECT current_setting('primary' || '_conninfo')", "current_setting shows this login"),
    ("SELECT name, setting FROM pg_settings", "pg_settings shows this login"),
    ("SELECT * FROM pg_show_all_settings()", "pg_show_all_settings"),  # off the list too
    ("SHOW ALL", "pg_show_all_settings shows this login"),
    ('SHOW "all"', "pg_show_all_settings shows this login"),  # the server's ALL too
    # the names written with Unicode escapes, which the server decodes first (held already)
    ('SHOW U&"primary\\005fconninfo"', "primary_conninfo is a setting that holds"),
    ("SHOW U&\"!0061ll\" UESCAPE '!'", "pg_show_all_settings shows this login"),
]


@pytest.fixture
def standby_setting(postgres_server: Server) -> Iterator[None]:
    """``primary_conninfo`` set with a password (harmless on a primary), and a login that
    may not read it."""
    import psycopg

    admin = postgres_server.admin()
    admin.autocommit = True
    admin.execute(f"DROP ROLE IF EXISTS {READER}")
    admin.execute(f"CREATE ROLE {READER} LOGIN PASSWORD 'pw'")
    admin.execute(f"ALTER SYSTEM SET primary_conninfo = '{SECRET}'")
    admin.execute("SELECT pg_reload_conf()")
    config = postgres_server.config

    def reloaded() -> bool:
        with psycopg.connect(
            host=config.host, port=config.port, user=config.user, dbname=config.database
        ) as conn:
            return conn.execute("SHOW primary_conninfo").fetchone() == (SECRET,)

    try:
        until(reloaded, "a new session running with primary_conninfo set")  # asynchronous
        yield
    finally:
        admin.execute("ALTER SYSTEM RESET primary_conninfo")
        admin.execute("SELECT pg_reload_conf()")
        admin.execute(f"DROP ROLE IF EXISTS {READER}")
        admin.close()


async def test_settings_holding_credentials_are_refused_to_a_login_that_sees_them(
    postgres_server: Server, standby_setting: None
) -> None:
    checked, unchecked = adapter(postgres_server), adapter(postgres_server, check=False)
    reader_config = attrs.evolve(postgres_server.config, user=READER)
    reader = ADAPTERS["postgres"]("r", reader_config, mode=DatabaseMode.READONLY, password="pw")
    try:
        for sql, refusal in READS:
            with pytest.raises(StatementRefused) as info:
                await checked.query(sql, max_rows=1000, timeout=10)
            assert refusal in str(info.value), (sql, info.value)
            rows = repr((await unchecked.query(sql, max_rows=1000, timeout=10)).rows)
            assert "hunter2-conn" in rows, sql  # the target is real: the check alone holds
        for other in ("SHOW work_mem", 'SHOW "WORK_MEM"'):
            assert (await checked.query(other, max_rows=1, timeout=10)).rows
        # a login that may not read it keeps pg_settings, without the setting
        shown = repr((await reader.query(READS[3][0], max_rows=1000, timeout=10)).rows)
        assert "work_mem" in shown
        assert "hunter2-conn" not in shown
    finally:
        for db in (checked, unchecked, reader):
            await db.aclose()
