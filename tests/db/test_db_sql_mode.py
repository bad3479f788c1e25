"""The MySQL adapter's statement check and the server read a statement alike, even when the
server's global ``sql_mode`` changes while the adapter's connection is open.

The adapter reads ``sql_mode`` once per connection and lexes for it, and resets the session
after every call (``COM_RESET_CONNECTION``), which gives the session the server's global
settings of that moment. A ``SET GLOBAL sql_mode`` made by an administrator (or by another
test on the same server: ``test_item_15`` in test_db_issue10.py) after the connection was
made reached the session at the next reset, while the check still lexed for the mode read at
connect: a text the check read as one string literal ran as a call of ``LOAD_FILE``.

The adapter's own reads before each statement are parsed in that mode too: under
``EMPTY_STRING_IS_NULL`` their ``VIEW_DEFINITION = ''`` was NULL, and a view whose query the
login may not read (no ``SHOW VIEW``) was judged as an empty query: through one, an
application's or a ``sys`` view of the definer ``mariadb.sys``, a stored function's ``SET
GLOBAL`` ran with the check on (MariaDB 10.11).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import attrs
import pytest
from db_support import Server, adapter, mariadb_objects, max_connections

from rho_domain.errors import StatementRefused

# With backslash escapes (the default) one string literal; under NO_BACKSLASH_ESCAPES the
# string ends at the backslash, LOAD_FILE('/etc/hostname') follows and a comment hides the rest.
SMUGGLED = "SELECT 'a\\', LOAD_FILE(0x2f6574632f686f73746e616d65) -- '"
# MariaDB's sql_mode=MSSQL reads [...] as a name ("]]" is one "]" in it), where the other
# modes' readings see a string start at its quote and hide the call in it.
BRACKETED = (
    "SELECT 1 AS [a'], LOAD_FILE(0x2f6574632f686f73746e616d65) AS f -- ']",
    "SELECT 1 AS [a]]'], LOAD_FILE(0x2f6574632f686f73746e616d65) AS f -- ']",
)
# Views whose queries the login rho_esn may not read (SELECT, no SHOW VIEW), each over an
# administrator's function that runs SET GLOBAL as its definer.
HIDDEN = ("rho.rho_esn_v", "sys.rho_esn_v")
HIDDEN_SETUP = [
    "CREATE DEFINER=root@localhost FUNCTION rho.rho_esn_tune() RETURNS int "
    "BEGIN SET GLOBAL max_connections = @@GLOBAL.max_connections + 5; RETURN 1; END",
    "CREATE DEFINER=root@localhost SQL SECURITY INVOKER VIEW rho.rho_esn_v AS "
    "SELECT rho.rho_esn_tune() AS a",
    "CREATE DEFINER=`mariadb.sys`@`localhost` SQL SECURITY INVOKER VIEW sys.rho_esn_v AS "
    "SELECT rho.rho_esn_tune() AS a",
    "CREATE USER 'rho_esn'@'%'",
    "GRANT SELECT, EXECUTE ON rho.* TO 'rho_esn'@'%'",
    "GRANT SELECT ON sys.rho_esn_v TO 'rho_esn'@'%'",
]
HIDDEN_TEARDOWN = [
    "DROP VIEW IF EXISTS rho.rho_esn_v",
    "DROP VIEW IF EXISTS sys.rho_esn_v",
    "DROP FUNCTION IF EXISTS rho.rho_esn_tune",
    "DROP USER IF EXISTS 'rho_esn'@'%'",
]


@pytest.fixture
def global_sql_mode(mariadb_server: Server) -> Iterator[Callable[[str], object]]:
    """A function that sets the server's global ``sql_mode``; the mode before is set back
    afterwards, whatever the test did."""
    conn = mariadb_server.admin()
    cursor = conn.cursor()
    cursor.execute("SELECT @@GLOBAL.sql_mode")
    (saved,) = cursor.fetchone()
    yield lambda mode: cursor.execute("SET GLOBAL sql_mode = %s", (mode,))
    try:
        cursor.execute("SET GLOBAL sql_mode = %s", (saved,))
    finally:
        conn.close()


async def test_a_global_sql_mode_set_while_connected_does_not_change_the_reading(
    mariadb_server: Server, global_sql_mode: Callable[[str], object]
) -> None:
    db = adapter(mariadb_server)
    try:
        connected = await db.query("SELECT @@SESSION.sql_mode", max_rows=1, timeout=5)
        assert "NO_BACKSLASH_ESCAPES" not in str(connected.rows[0][0]).upper()
        global_sql_mode("NO_BACKSLASH_ESCAPES")
        # two calls, so that a reset after a call (the session's state cleared) came between
        # the global change and the statement
        for _ in range(2):
            await db.query("SELECT 1", max_rows=1, timeout=5)
        result = await db.query(SMUGGLED, max_rows=1, timeout=5)
    finally:
        await db.aclose()
    # the server read the one string literal the check read: no second column, no file
    assert result.columns == ("a', LOAD_FILE(0x2f6574632f686f73746e616d65) -- ",)
    assert len(result.rows[0]) == 1


async def test_hidden_views_stay_refused_under_empty_string_is_null(
    mariadb_server: Server, global_sql_mode: Callable[[str], object]
) -> None:
    server = attrs.evolve(
        mariadb_server, config=attrs.evolve(mariadb_server.config, user="rho_esn")
    )
    with mariadb_objects(mariadb_server, HIDDEN_SETUP, HIDDEN_TEARDOWN) as cursor:
        global_sql_mode("EMPTY_STRING_IS_NULL")
        saved = max_connections(cursor)
        checked, unchecked = adapter(server), adapter(server, check=False)
        try:
            for n, view in enumerate(HIDDEN, start=1):  # each attack reaches: SET GLOBAL ran
                await unchecked.query(f"SELECT a FROM {view}", max_rows=1, timeout=10)
                assert max_connections(cursor) == saved + 5 * n, view
            for view in HIDDEN:
                with pytest.raises(StatementRefused, match=r"rho_esn_v hides its query from"):
                    await checked.query(f"SELECT a FROM {view}", max_rows=1, timeout=10)
            assert max_connections(cursor) == saved + 5 * len(HIDDEN)
        finally:
            await checked.aclose()
            await unchecked.aclose()


async def test_bracketed_names_under_mssql_are_read_as_the_server_does(
    mariadb_server: Server, global_sql_mode: Callable[[str], object]
) -> None:
    global_sql_mode("MSSQL")
    checked, unchecked = adapter(mariadb_server), adapter(mariadb_server, check=False)
    try:
        for sql in BRACKETED:
            reached = await unchecked.query(sql, max_rows=1, timeout=5)
            assert reached.columns[1] == "f", sql  # the server read a name, then the call
            with pytest.raises(StatementRefused, match=r"the function load_file\(\) is not on"):
                await checked.query(sql, max_rows=1, timeout=5)
    finally:
        await checked.aclose()
        await unchecked.aclose()
