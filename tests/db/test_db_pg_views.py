"""A PostgreSQL view runs what its query calls or reads, where the view is named.

An administrator's views ``ops."Conf Lines"`` (over ``pg_file_settings``) and ``ops.readf``
(``pg_read_file('postgresql.auto.conf')``): ``SELECT * FROM ops.readf`` names neither, so
the check let both through and the read-only transaction returned the server's files, as it
would run a user function a view calls. MariaDB's views were judged by their queries; the
PostgreSQL adapter read none. Now it reads the views' queries (``pg_get_viewdef``) with the
rest of the catalog, again when a view is made or replaced while the connection is open, and
the check judges a view's query where the view is named. A ``file_fdw`` foreign table runs
its ``program`` (``COPY FROM PROGRAM`` by another name) or reads its ``filename`` on every
read, as the server's user: refused where it is named, behind a view too.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from db_support import Server, adapter, own_pg_database

from rho_domain.errors import StatementRefused

DB = "rho_pg_views"
SETUP = [
    "CREATE SCHEMA ops",
    'CREATE VIEW ops."Conf Lines" AS SELECT sourcefile, name FROM pg_file_settings',
    "CREATE VIEW ops.readf AS SELECT pg_read_file('postgresql.auto.conf') AS t",
    "CREATE SCHEMA outer_s",
    "CREATE VIEW outer_s.over AS SELECT t FROM ops.readf",
    "CREATE VIEW ops.later AS SELECT '1'::text AS t",
    "CREATE VIEW ops.plain AS SELECT 2 AS n",
    "CREATE VIEW ops.ruled AS SELECT '1'::text AS t",
    # pg_get_viewdef writes these as calls: like_escape('b%', '#'), similar_to_escape('b')
    "CREATE VIEW ops.likes AS SELECT 'a' LIKE 'b%' ESCAPE '#' AS l, 'a' SIMILAR TO 'b' AS s",
    # literals pg_get_viewdef writes as 'C:\' (standard_conforming_strings on)
    "CREATE VIEW ops.winpath AS SELECT 'C:\\' AS p, 'it''s' AS q",
    "CREATE VIEW ops.winread AS SELECT 'C:\\' AS p, pg_read_file('PG_VERSION') AS t",
    # file_fdw: every read runs the program, or reads the file (relative: the data directory)
    "CREATE EXTENSION file_fdw",
    "CREATE SERVER files FOREIGN DATA WRAPPER file_fdw",
    "CREATE FOREIGN TABLE ops.prog (line text) SERVER files OPTIONS (program 'echo ran-by-a-read')",
    "CREATE FOREIGN TABLE \"Odd Name\" (line text) SERVER files OPTIONS (filename 'PG_VERSION')",
    "CREATE VIEW outer_s.over_prog AS SELECT line FROM ops.prog",
]
MAJOR = "<the server's major version>"  # PG_VERSION's text: 15, or 17 on a newer server
# (statement, the view the refusal names, what the server file gives without the check)
ATTACKS = [
    ('SELECT name FROM ops."Conf Lines"', "the view Conf Lines runs", "max_connections"),
    ("SELECT * FROM ops.readf", "the view readf runs", "ALTER SYSTEM"),
    ("SELECT t FROM outer_s.over", "the view readf runs", "ALTER SYSTEM"),
    ("TABLE ops.prog", "the foreign table prog runs the command its program", "ran-by-a-read"),
    ("SELECT * FROM outer_s.over_prog", "the foreign table prog runs", "ran-by-a-read"),
    ('SELECT line FROM "Odd Name"', "Odd Name reads the server file 'PG_VERSION'", MAJOR),
    ("SELECT t FROM ops.winread", "the view winread runs", MAJOR),
]


@pytest.fixture(scope="module")  # one database for the file
def views(postgres_server: Server) -> Iterator[Server]:
    """``postgres_server`` with the views above in a database of this file's own."""
    with own_pg_database(postgres_server, DB, SETUP) as server:
        yield server


async def test_a_view_reading_a_server_file_is_refused_where_it_is_named(views: Server) -> None:
    import psycopg

    db = adapter(views)
    try:
        for sql, refusal, _ in ATTACKS:
            with pytest.raises(StatementRefused) as info:
                await db.query(sql, max_rows=5, timeout=5)
            assert info.value.by == "check", (sql, info.value)
            assert refusal in str(info.value), (sql, info.value)
            assert "echo" not in str(info.value), "a program's command line may hold a password"
        assert (await db.query("SELECT * FROM ops.later", max_rows=5, timeout=5)).rows == (("1",),)
        # replaced while this connection is open: judged by its new query
        with psycopg.connect(
            host=views.config.host, port=views.config.port, user="postgres", dbname=DB
        ) as conn:
            conn.execute(
                "CREATE OR REPLACE VIEW ops.later AS SELECT pg_read_file('PG_VERSION') AS t"
            )
        with pytest.raises(StatementRefused, match="the view later runs"):
            await db.query("SELECT * FROM ops.later", max_rows=5, timeout=5)
        # its query replaced by its rule, which changes no pg_class nor pg_attribute row:
        # the open connection judged the old query, and the new one read the server file
        assert (await db.query("TABLE ops.ruled", max_rows=5, timeout=5)).rows == (("1",),)
        unchecked = adapter(views, check=False)
        try:
            with psycopg.connect(
                host=views.config.host, port=views.config.port, user="postgres", dbname=DB
            ) as conn:
                conn.execute(
                    'CREATE OR REPLACE RULE "_RETURN" AS ON SELECT TO ops.ruled '
                    "DO INSTEAD SELECT pg_read_file('PG_VERSION') AS t"
                )
            shown = await unchecked.query("SHOW server_version_num", max_rows=1, timeout=5)
            major = str(int(str(shown.rows[0][0])) // 10000)
            assert major in repr(
                (await unchecked.query("TABLE ops.ruled", max_rows=5, timeout=5)).rows
            )
        finally:
            await unchecked.aclose()
        with pytest.raises(StatementRefused, match="the view ruled runs"):
            await db.query("TABLE ops.ruled", max_rows=5, timeout=5)
        # a view over plain values still reads, a literal ending in a backslash too (it was
        # refused as unreadable: 'C:\' does not end there where backslashes escape)
        assert (await db.query("SELECT n FROM ops.plain", max_rows=5, timeout=5)).rows == ((2,),)
        rows = (await db.query("SELECT * FROM ops.likes", max_rows=5, timeout=5)).rows
        assert rows == ((False, False),)  # LIKE ... ESCAPE and SIMILAR TO were refused
        rows = (await db.query("SELECT * FROM ops.winpath", max_rows=5, timeout=5)).rows
        assert rows == (("C:\\", "it's"),)
    finally:
        await db.aclose()


async def test_without_the_check_the_views_return_the_server_files(views: Server) -> None:
    """The target is real: the read-only transaction alone returns the files' text."""
    db = adapter(views, check=False)
    try:
        version = (await db.query("SHOW server_version_num", max_rows=1, timeout=5)).rows
        major = str(int(str(version[0][0])) // 10000)
        for sql, _, said in ATTACKS:
            shown = major if said == MAJOR else said
            rows = repr((await db.query(sql, max_rows=50, timeout=5)).rows)
            assert shown in rows, (sql, rows[:200])
    finally:
        await db.aclose()
