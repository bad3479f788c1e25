"""A view's query or a column's expression longer than ``max_allowed_packet`` is judged too.

MariaDB's string functions return NULL past ``max_allowed_packet`` (the login's, from the
global at its login: 16 MB by default, 1 KB at least), and the server writes a view's
query longer than its statement (a newline in a literal as two bytes, every name
qualified). Two reads before each statement went through such a function, and with the
check on (MariaDB 10.11, ``max_allowed_packet = 8192``, texts of 8,200 bytes):

- the server's own views' hashes were ``SHA2(CONCAT_WS(..., VIEW_DEFINITION, ...))``: a
  long query hashed as NULL whatever it said, so a ``sys`` view of the definer
  ``mariadb.sys`` replaced after a first read kept that read's query, and
  ``SELECT a FROM sys.rho_long`` ran its stored function's ``SET GLOBAL``;
- a ``VIRTUAL`` column's expression was read as ``CONCAT('SELECT ', expression)``: a long
  one was judged as the text ``None``, and each read advanced ``UUID_SHORT()``.

Now the name and the query are hashed apart before they are joined (fixed-length parts), a
hash that is NULL keeps no rows, and the expression is read as it is.
"""

from __future__ import annotations

import pytest
from db_support import Server, adapter, mariadb_objects, max_connections

from rho_domain.errors import StatementRefused

PAD = "x" * 8200  # past the 8,192 bytes the test's logins may build a string of
TUNE = (
    "CREATE DEFINER=root@localhost FUNCTION rho.rho_long_tune() RETURNS int "
    "BEGIN SET GLOBAL max_connections = @@GLOBAL.max_connections + 5; RETURN 1; END"
)
OWN_VIEW = (
    "CREATE OR REPLACE DEFINER=`mariadb.sys`@`localhost` SQL SECURITY INVOKER VIEW "
    "sys.rho_long AS SELECT {call} AS a, '" + PAD + "' AS b"
)
SETUP = [
    TUNE,
    OWN_VIEW.format(call="1"),
    f"CREATE TABLE rho.rho_long_vc (a int, b bigint AS (UUID_SHORT() + LENGTH('{PAD}')) VIRTUAL)",
    "INSERT INTO rho.rho_long_vc (a) VALUES (1)",
]
TEARDOWN = [
    "SET GLOBAL max_allowed_packet = 16777216",
    "DROP VIEW IF EXISTS sys.rho_long",
    "DROP TABLE IF EXISTS rho.rho_long_vc",
    "DROP FUNCTION IF EXISTS rho.rho_long_tune",
]


async def test_texts_past_max_allowed_packet_are_judged(mariadb_server: Server) -> None:
    with mariadb_objects(mariadb_server, SETUP, TEARDOWN) as cursor:
        saved = max_connections(cursor)
        # the adapters' logins come after this: their strings stop at 8 KB
        cursor.execute("SET GLOBAL max_allowed_packet = 8192")
        checked, unchecked = adapter(mariadb_server), adapter(mariadb_server, check=False)
        try:
            # read once while the view calls nothing: the server's own views are read
            # again when their hashes change
            read = await checked.query("SELECT a FROM sys.rho_long", max_rows=1, timeout=10)
            assert read.rows == ((1,),)
            cursor.execute(OWN_VIEW.format(call="rho.rho_long_tune()"))
            await unchecked.query("SELECT a FROM sys.rho_long", max_rows=1, timeout=10)
            assert max_connections(cursor) == saved + 5  # the attack reaches
            with pytest.raises(
                StatementRefused, match=r"the view sys\.rho_long runs .*rho_long_tune\(\) is not"
            ):
                await checked.query("SELECT a FROM sys.rho_long", max_rows=1, timeout=10)
            assert max_connections(cursor) == saved + 5
            counted = await unchecked.query("SELECT b FROM rho_long_vc", max_rows=1, timeout=10)
            assert int(counted.rows[0][0]) > 0  # UUID_SHORT() ran
            with pytest.raises(
                StatementRefused, match=r"a virtual column of rho_long_vc runs SELECT uuid_short"
            ):
                await checked.query("SELECT b FROM rho_long_vc", max_rows=1, timeout=10)
        finally:
            await checked.aclose()
            await unchecked.aclose()
