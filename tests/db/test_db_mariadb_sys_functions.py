"""The ``sys`` schema's functions and views are judged as anyone's: a definer proves nothing.

The allowlist trusted the ``sys`` schema's formatting functions by name, then (redsql23) only
while the server's own account (``mariadb.sys``) defined them, and never judged the server's
own views (definer ``mariadb.sys``). An administrator writes any definer, and may replace a
function the server's views call. On MariaDB 10.11, with the check on, each of these ran its
``SET GLOBAL max_connections = ...``, which no read-only transaction stops:

- ``SELECT sys.version_patch()``, replaced under ``DEFINER=`mariadb.sys`@`localhost```;
- ``SELECT * FROM sys.memory_global_total``, the server's own view, which calls
  ``sys.format_bytes``, replaced under ``DEFINER=root``;
- ``SELECT * FROM sys.rho_spoof``, an administrator's view under ``DEFINER=`mariadb.sys```.

Now no stored function is on the list by its name (an alias vets one with
``options.allowed_functions``), and the server's own views are judged by their queries,
keyed ``sys.name``: an application's table or column ``session`` (or ``@@SESSION.x``) is
not ``sys.metrics``, unless the alias's database is ``sys``.
"""

from __future__ import annotations

import attrs
import pytest
from db_support import Server, adapter, max_connections

from rho_domain.errors import StatementRefused
from rho_domain.sql import CatalogCalls, classify

SPOOFED = (
    "CREATE DEFINER=`mariadb.sys`@`localhost` FUNCTION sys.version_patch() RETURNS int "
    "SQL SECURITY INVOKER BEGIN SET GLOBAL max_connections = @@GLOBAL.max_connections + 5; "
    "RETURN 1; END"
)
REPLACED = (
    "CREATE DEFINER=root@localhost FUNCTION sys.format_bytes(b TEXT) RETURNS TEXT "
    "BEGIN SET GLOBAL max_connections = @@GLOBAL.max_connections + 5; RETURN 'x'; END"
)
TUNE = (
    "CREATE DEFINER=root@localhost FUNCTION rho.rho_sys_tune() RETURNS int "
    "BEGIN SET GLOBAL max_connections = @@GLOBAL.max_connections + 5; RETURN 1; END"
)
SPOOFED_VIEW = (
    "CREATE DEFINER=`mariadb.sys`@`localhost` SQL SECURITY INVOKER VIEW sys.rho_spoof AS "
    "SELECT rho.rho_sys_tune() AS a"
)
ATTACKS = {
    "SELECT sys.version_patch()": r"the function sys\.version_patch\(\) is not on the mysql",
    "SELECT * FROM sys.memory_global_total": r"the view sys\.memory_global_total runs .*"
    r"the function sys\.format_bytes\(\) is not on",
    "SELECT a FROM sys.rho_spoof": r"the view sys\.rho_spoof runs .*rho\.rho_sys_tune\(\) is not",
}


async def test_sys_functions_and_views_are_judged_whatever_their_definer(
    mariadb_server: Server,
) -> None:
    conn = mariadb_server.admin()
    cursor = conn.cursor()
    originals = []
    for name in ("version_patch", "format_bytes"):
        cursor.execute(f"SHOW CREATE FUNCTION sys.{name}")
        originals.append((name, cursor.fetchone()[2]))
        assert "`mariadb.sys`@`localhost`" in originals[-1][1]
    saved = max_connections(cursor)
    checked, unchecked = adapter(mariadb_server), adapter(mariadb_server, check=False)
    in_sys = adapter(
        attrs.evolve(mariadb_server, config=attrs.evolve(mariadb_server.config, database="sys"))
    )
    try:
        cursor.execute("DROP VIEW IF EXISTS sys.rho_spoof")
        cursor.execute("DROP FUNCTION IF EXISTS rho.rho_sys_tune")
        # read once before the replacements: the server's own views are read again when
        # they change (a view made while the connection is open is judged at once)
        await checked.query("SELECT * FROM sys.`x$memory_global_total`", max_rows=1, timeout=10)
        for sql in ("DROP FUNCTION sys.version_patch", SPOOFED, "DROP FUNCTION sys.format_bytes"):
            cursor.execute(sql)
        for sql in (REPLACED, TUNE, SPOOFED_VIEW):
            cursor.execute(sql)
        for n, sql in enumerate(ATTACKS, start=1):  # each attack reaches: SET GLOBAL ran
            await unchecked.query(sql, max_rows=1, timeout=10)
            assert max_connections(cursor) == saved + 5 * n, sql
        for sql, refusal in ATTACKS.items():
            with pytest.raises(StatementRefused, match=refusal):
                await checked.query(sql, max_rows=1, timeout=10)
        assert max_connections(cursor) == saved + 5 * len(ATTACKS)
        # the server's own views that call no stored function still read
        await checked.query("SELECT * FROM sys.`x$memory_global_total`", max_rows=1, timeout=10)
        # where the alias's database is sys, its views are named by their names alone
        with pytest.raises(StatementRefused, match=r"the view memory_global_total runs"):
            await in_sys.query("SELECT * FROM memory_global_total", max_rows=1, timeout=10)
    finally:
        await checked.aclose()
        await unchecked.aclose()
        await in_sys.aclose()
        cursor.execute("SET GLOBAL max_connections = %s", (saved,))
        cursor.execute("DROP VIEW IF EXISTS sys.rho_spoof")
        cursor.execute("DROP FUNCTION IF EXISTS rho.rho_sys_tune")
        for name, original in originals:
            cursor.execute(f"DROP FUNCTION IF EXISTS sys.{name}")
            cursor.execute(original)
        conn.close()


def test_a_view_keyed_by_its_schema_is_judged_only_after_it() -> None:
    calls = CatalogCalls(views={"sys.metrics": frozenset({"SELECT sys.format_bytes(1)"})})
    for sql in (
        "SELECT * FROM sys.metrics",
        "SELECT * FROM `sys`.`metrics`",
        "SELECT sys.metrics.a",
    ):
        verdict = classify(sql, "mysql", catalog_calls=calls)
        assert "the view sys.metrics runs" in verdict.reason, sql
    for sql in (
        "SELECT metrics FROM users",
        "SELECT @@metrics.x, s.metrics FROM users s",
        "SELECT * FROM rho.metrics",
    ):
        assert classify(sql, "mysql", catalog_calls=calls).read_only, sql


async def test_a_view_added_past_a_cut_digest_is_judged(mariadb_server: Server) -> None:
    """The server's own views are read again when a digest of their hashes changes, and
    GROUP_CONCAT cuts that digest's input at ``group_concat_max_len`` (MySQL's default
    holds 16 hashes): a view added past the cut left the digest as it was, and the rows
    read before it were judged. Where the input is cut, the hashes are read one by one."""
    conn = mariadb_server.admin()
    cursor = conn.cursor()
    cursor.execute("SELECT @@GLOBAL.group_concat_max_len")
    (kept,) = cursor.fetchone()
    saved = max_connections(cursor)
    checked = adapter(mariadb_server)
    try:
        cursor.execute("DROP VIEW IF EXISTS sys.rho_spoof")
        cursor.execute("DROP FUNCTION IF EXISTS rho.rho_sys_tune")
        cursor.execute("SET GLOBAL group_concat_max_len = 4")
        await checked.query("SELECT * FROM sys.`x$memory_global_total`", max_rows=1, timeout=10)
        cursor.execute(TUNE)
        cursor.execute(SPOOFED_VIEW)
        with pytest.raises(StatementRefused, match=ATTACKS["SELECT a FROM sys.rho_spoof"]):
            await checked.query("SELECT a FROM sys.rho_spoof", max_rows=1, timeout=10)
        assert max_connections(cursor) == saved
    finally:
        await checked.aclose()
        cursor.execute("SET GLOBAL group_concat_max_len = %s", (kept,))
        cursor.execute("SET GLOBAL max_connections = %s", (saved,))
        cursor.execute("DROP VIEW IF EXISTS sys.rho_spoof")
        cursor.execute("DROP FUNCTION IF EXISTS rho.rho_sys_tune")
        conn.close()
