"""Settings stored for other roles and databases, read by any PostgreSQL login.

``ALTER ROLE app SET app.password = '...'`` (an application's setting, or an extension's:
postgresql_anonymizer's ``anon.salt``) is kept in ``pg_db_role_setting``, a catalog every
login reads, every database's and role's rows; ``pg_roles.rolconfig`` and
``pg_user.useconfig`` show it too. The statements name no function, the read-only
transaction does not stop a read, and the check let them through: a login that is neither
``app`` nor a superuser read app's password. Now the catalog and the three columns are
refused by name, and ``pg_roles`` and ``pg_user`` (whose whole rows show ``rolconfig``)
where a stored setting has a dotted name, an application's or an extension's; the catalog
is read again when a setting is stored while the connection is open.
"""

from __future__ import annotations

import attrs
import pytest
from db_support import Server, adapter, own_pg_database

from rho_adapters.db import ADAPTERS
from rho_domain.errors import StatementRefused
from rho_domain.permissions import DatabaseMode

DB = "rho_role_settings20"
APP, READER = "rho_rs_app20", "rho_rs_reader20"
SECRET = "hunter2-role"
# (statement, the name the refusal gives)
READS = [
    (f"SELECT rolconfig FROM pg_roles WHERE rolname = '{APP}'", "rolconfig"),
    ("SELECT * FROM pg_catalog.pg_db_role_setting", "pg_db_role_setting"),
    (f"SELECT useconfig FROM pg_user WHERE usename = '{APP}'", "useconfig"),
    (f"SELECT * FROM pg_roles WHERE rolname = '{APP}'", "pg_roles shows the settings"),
    (f"SELECT u::text FROM pg_user u WHERE usename = '{APP}'", "pg_user shows the settings"),
]


def _admin_run(server: Server, *statements: str) -> None:
    import psycopg

    c = server.config
    with psycopg.connect(host=c.host, port=c.port, user=c.user, dbname=c.database) as conn:
        conn.autocommit = True
        for sql in statements:
            conn.execute(sql)


async def test_settings_stored_for_other_roles_are_refused(postgres_server: Server) -> None:
    setup = [
        *(f"DROP ROLE IF EXISTS {role}" for role in (APP, READER)),  # a killed run's
        f"CREATE ROLE {APP} LOGIN",
        f"CREATE ROLE {READER} LOGIN PASSWORD 'pw'",
    ]
    roles = (APP, READER)
    with own_pg_database(postgres_server, DB, setup, roles=roles) as server:
        checked, unchecked = adapter(server), adapter(server, check=False)
        reader, unchecked_reader = (
            ADAPTERS["postgres"](
                "r",
                attrs.evolve(server.config, user=READER),
                mode=DatabaseMode.READONLY,
                password="pw",
                check_statements=check,
            )
            for check in (True, False)
        )
        try:
            # a connection opened before the setting is stored judges by the catalog of now
            await checked.query("SELECT 1 FROM pg_roles", max_rows=1, timeout=10)
            _admin_run(server, f"ALTER ROLE {APP} SET app.password = '{SECRET}'")
            for db in (unchecked, unchecked_reader):  # what the check stands in front of
                rows = (await db.query(READS[0][0], max_rows=5, timeout=10)).rows
                assert SECRET in repr(rows), rows
            for db in (checked, reader):  # a superuser's login and a plain one alike
                for sql, refusal in READS:
                    with pytest.raises(StatementRefused) as info:
                        await db.query(sql, max_rows=5, timeout=10)
                    assert info.value.by == "check", (sql, info.value)
                    assert refusal in str(info.value), (sql, info.value)
            # a built-in setting holds no credential: pg_roles answers again
            reset = f"ALTER ROLE {APP} RESET ALL"
            _admin_run(server, reset, f"ALTER ROLE {APP} SET work_mem = '8MB'")
            rows = (await checked.query(READS[3][0], max_rows=5, timeout=10)).rows
            assert [row[0] for row in rows] == [APP]
        finally:
            for db in (checked, unchecked, reader, unchecked_reader):
                await db.aclose()
