"""An administrator's replacement of a listed ``sys`` function is judged as their own.

The MySQL allowlist trusts the ``sys`` schema's formatting functions by name
(``sys.format_bytes``, ``sys.version_patch``...). An administrator may drop one and create
their own by the same name: ``SELECT sys.version_patch()`` then ran its ``SET GLOBAL
max_connections = ...`` with the statement check on, which no read-only transaction stops.
Now such a name is on the list only while the server's own account (``mariadb.sys``,
``mysql.sys``) defines it, read before each statement.
"""

from __future__ import annotations

import pytest
from db_support import Server, adapter, max_connections

from rho_domain.errors import StatementRefused

REPLACED = (
    "CREATE DEFINER=root@localhost FUNCTION sys.version_patch() RETURNS int "
    "BEGIN SET GLOBAL max_connections = @@GLOBAL.max_connections + 5; RETURN 1; END"
)


async def test_a_replaced_sys_function_is_refused(mariadb_server: Server) -> None:
    conn = mariadb_server.admin()
    cursor = conn.cursor()
    cursor.execute("SHOW CREATE FUNCTION sys.version_patch")
    original = cursor.fetchone()[2]
    assert "`mariadb.sys`@`localhost`" in original
    saved = max_connections(cursor)
    checked, unchecked = adapter(mariadb_server), adapter(mariadb_server, check=False)
    try:
        await checked.query("SELECT sys.version_patch()", max_rows=1, timeout=10)  # the server's
        cursor.execute("DROP FUNCTION sys.version_patch")
        cursor.execute(REPLACED)
        await unchecked.query("SELECT sys.version_patch()", max_rows=1, timeout=10)
        assert max_connections(cursor) == saved + 5  # the attack reaches: SET GLOBAL ran
        with pytest.raises(StatementRefused, match=r"sys\.version_patch\(\) is not on the mysql"):
            await checked.query("SELECT sys.version_patch()", max_rows=1, timeout=10)
        assert max_connections(cursor) == saved + 5
        await checked.query("SELECT sys.version_major()", max_rows=1, timeout=10)
    finally:
        await checked.aclose()
        await unchecked.aclose()
        cursor.execute("SET GLOBAL max_connections = %s", (saved,))
        cursor.execute("DROP FUNCTION IF EXISTS sys.version_patch")
        cursor.execute(original)
        conn.close()
