"""A definer's view over information_schema shows what its definer sees.

The server fills information_schema as its reader may see it, and inside a definer's view
the reader is the definer: root's view over ``ROUTINES`` (or ``VIEWS``, ``TRIGGERS``,
``EVENTS``, ``COLUMNS``) showed a login granted ``SELECT, SHOW VIEW ON rho.*`` the routine
bodies, view queries and trigger statements of ``rho_isx``, a database it has no privilege
on (read directly, information_schema shows it none). information_schema was exempt from
the unseen-relation refusal as "every login's"; an invoker's view inside a definer's runs
as the definer too. Now such a view is refused where named; its static lists still read.
"""

from __future__ import annotations

from collections.abc import Iterator

import attrs
import pytest
from db_support import Server

from rho_adapters.db import ADAPTERS
from rho_domain.errors import StatementRefused

_WHERE = "WHERE {}_SCHEMA = 'rho_isx'"
# each view and the information_schema table (with its definition column) it reads
CATALOG = {
    "rho_is_r": ("ROUTINES", "ROUTINE_DEFINITION", "ROUTINE"),
    "rho_is_v": ("VIEWS", "VIEW_DEFINITION", "TABLE"),
    "rho_is_t": ("TRIGGERS", "ACTION_STATEMENT", "TRIGGER"),
    "rho_is_e": ("EVENTS", "EVENT_DEFINITION", "EVENT"),
    "rho_is_c": ("COLUMNS", "COLUMN_DEFAULT", "TABLE"),
}
SETUP = [
    "CREATE USER 'rho_is'@'%' IDENTIFIED BY 'pw-is'",
    "GRANT SELECT, SHOW VIEW ON rho.* TO 'rho_is'@'%'",
    "CREATE DATABASE rho_isx",
    "CREATE DEFINER=root@localhost FUNCTION rho_isx.f() RETURNS int RETURN 424242",
    "CREATE DEFINER=root@localhost VIEW rho_isx.v AS SELECT 424242 AS a",
    "CREATE TABLE rho_isx.t (a INT DEFAULT 424242)",
    "CREATE DEFINER=root@localhost TRIGGER rho_isx.tr BEFORE INSERT ON rho_isx.t "
    "FOR EACH ROW SET NEW.a = 424242",
    "CREATE DEFINER=root@localhost EVENT rho_isx.ev ON SCHEDULE EVERY 1 DAY DISABLE "
    "DO SELECT 424242",
    *(
        f"CREATE DEFINER=root@localhost VIEW rho.{view} AS SELECT {column} AS d "
        f"FROM information_schema.{table} {_WHERE.format(schema)}"
        for view, (table, column, schema) in CATALOG.items()
    ),
    # an invoker's view reads as whoever runs it: inside root's view, as root
    "CREATE SQL SECURITY INVOKER VIEW rho.rho_is_inner AS SELECT ROUTINE_DEFINITION AS d "
    f"FROM information_schema.ROUTINES {_WHERE.format('ROUTINE')}",
    "CREATE DEFINER=root@localhost VIEW rho.rho_is_nest AS SELECT d FROM rho.rho_is_inner",
    "CREATE DEFINER=root@localhost VIEW rho.rho_is_col AS "
    "SELECT COLLATION_NAME AS d FROM information_schema.COLLATIONS WHERE ID = 8",
]
TEARDOWN = [
    f"DROP VIEW IF EXISTS {', '.join(f'rho.{v}' for v in CATALOG)}, "
    "rho.rho_is_inner, rho.rho_is_nest, rho.rho_is_col",
    "DROP DATABASE IF EXISTS rho_isx",
    "DROP USER IF EXISTS 'rho_is'@'%'",
]
REFUSED = {**{v: t for v, (t, _, _) in CATALOG.items()}, "rho_is_nest": "ROUTINES"}


@pytest.fixture
def catalog_views(mariadb_server: Server) -> Iterator[Server]:
    conn = mariadb_server.admin()
    cursor = conn.cursor()
    for sql in TEARDOWN + SETUP:
        cursor.execute(sql)
    try:
        yield mariadb_server
    finally:
        for sql in TEARDOWN:
            cursor.execute(sql)
        conn.close()


async def test_a_definers_view_over_information_schema_is_refused(
    catalog_views: Server,
) -> None:
    login = attrs.evolve(catalog_views.config, user="rho_is")
    checked, unchecked = (
        ADAPTERS["mysql"]("t", login, password="pw-is", check_statements=check)
        for check in (True, False)
    )
    try:
        for view, table in REFUSED.items():
            sql = f"SELECT d FROM {view}"
            shown = await unchecked.query(sql, max_rows=5, timeout=5)
            assert any("424242" in str(row[0]) for row in shown.rows), (view, shown.rows)
            with pytest.raises(StatementRefused) as info:
                await checked.query(sql, max_rows=5, timeout=5)
            assert info.value.by == "check"
            assert f"reads information_schema.{table} as its definer" in str(info.value)
            assert "SQL SECURITY INVOKER" in str(info.value)
        # read as the login, information_schema shows it nothing of rho_isx; static lists read
        for sql, rows in (
            ("SELECT d FROM rho_is_inner", ()),
            ("SELECT d FROM rho_is_col", (("latin1_swedish_ci",),)),
        ):
            assert (await checked.query(sql, max_rows=5, timeout=5)).rows == rows
    finally:
        await checked.aclose()
        await unchecked.aclose()
