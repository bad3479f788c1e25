"""Settings stored for other roles and databases, read by any PostgreSQL login.

``ALTER ROLE app SET app.password = '...'`` (an application's setting, or an extension's:
postgresql_anonymizer's ``anon.salt``) is kept in ``pg_db_role_setting``, a catalog every
login reads, every database's and role's rows; ``pg_roles.rolconfig`` and
``pg_user.useconfig`` show it too. The statements name no function, the read-only
transaction does not stop a read, and the check let them through: a login that is neither
``app`` nor a superuser read app's password. Now the catalog and the three columns are
refused by name, and ``pg_roles`` and ``pg_user`` (whose whole rows show ``rolconfig``)
where a stored setting has a dotted name, an application's or an extension's; the catalog
is read again when a setting is stored while the connection is open. So are the same rows
by other spellings and through views an administrator made over them, and their column
statistics: after an ``ANALYZE``, ``pg_stats.histogram_bounds`` of ``setconfig`` showed a
plain login ``app.password=...`` (``pg_stats`` is now refused to every login). The settings stored
for the agent's own login the server gives its session at login, as ``SET`` would: ``SHOW``
and ``current_setting`` read them, as the session's own (keep secrets out of them).
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
STATS = "SELECT histogram_bounds::text FROM pg_stats WHERE attname = 'setconfig'"
# (statement, the name the refusal gives)
READS = [
    (f"SELECT rolconfig FROM pg_roles WHERE rolname = '{APP}'", "rolconfig"),
    ("SELECT * FROM pg_catalog.pg_db_role_setting", "pg_db_role_setting"),
    (f"SELECT useconfig FROM pg_user WHERE usename = '{APP}'", "useconfig"),
    (f"SELECT * FROM pg_roles WHERE rolname = '{APP}'", "pg_roles shows the settings"),
    (f"SELECT u::text FROM pg_user u WHERE usename = '{APP}'", "pg_user shows the settings"),
    # the same rows by other spellings: a function of the whole row, TABLE, quoted, in capitals
    ("SELECT row_to_json(r) FROM pg_roles r", "pg_roles shows the settings"),
    ("TABLE pg_roles", "pg_roles shows the settings"),
    ('SELECT * FROM "pg_catalog"."pg_roles"', "pg_roles shows the settings"),
    ("SELECT * FROM PG_CATALOG.PG_USER", "pg_user shows the settings"),
    # views an administrator made over them: judged by their queries
    ("SELECT * FROM role_cfg", "the view role_cfg runs"),
    ("SELECT * FROM everyone", "the view everyone runs"),
    # their column statistics, after a database-wide ANALYZE (any login may read the column)
    (STATS, "most common values and histogram bounds"),
]
# the views, made in the test's database (a view's definition names the columns of *)
VIEWS = [
    "CREATE VIEW role_cfg AS SELECT setrole, setconfig FROM pg_db_role_setting",
    "CREATE VIEW everyone AS SELECT * FROM pg_roles",
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
        *VIEWS,
        f"GRANT SELECT ON role_cfg, everyone TO {READER}",
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
            _admin_run(
                server,
                f"ALTER ROLE {APP} SET app.password = '{SECRET}'",
                f"ALTER ROLE {READER} SET app.tenant = 'own-setting'",  # the login's own
                # vacuumdb --analyze's ANALYZE: the shared catalog's statistics too
                "ANALYZE pg_catalog.pg_db_role_setting",
            )
            for db in (unchecked, unchecked_reader):  # what the check stands in front of
                for sql in (READS[0][0], "SELECT * FROM role_cfg", STATS):
                    rows = (await db.query(sql, max_rows=50, timeout=10)).rows
                    assert SECRET in repr(rows), (sql, rows)
            for db in (checked, reader):  # a superuser's login and a plain one alike
                for sql, refusal in READS:
                    with pytest.raises(StatementRefused) as info:
                        await db.query(sql, max_rows=5, timeout=10)
                    assert info.value.by == "check", (sql, info.value)
                    assert refusal in str(info.value), (sql, info.value)
            # the login's own stored setting is its session's, as SET would make it: read
            for sql in ("SHOW app.tenant", "SELECT current_setting('app.tenant')"):
                rows = (await reader.query(sql, max_rows=1, timeout=10)).rows
                assert rows == (("own-setting",),), (sql, rows)
            # a built-in setting holds no credential: pg_roles answers again
            resets = (f"ALTER ROLE {role} RESET ALL" for role in (APP, READER))
            _admin_run(server, *resets, f"ALTER ROLE {APP} SET work_mem = '8MB'")
            rows = (await checked.query(READS[3][0], max_rows=5, timeout=10)).rows
            assert [row[0] for row in rows] == [APP]
        finally:
            for db in (checked, unchecked, reader, unchecked_reader):
                await db.aclose()
