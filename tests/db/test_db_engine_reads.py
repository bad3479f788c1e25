"""Readings the engines could have made differently, tried on the real servers; no hole:
these pin that they read as the check does.

- PostgreSQL parses XML without fetching external entities: an allowlisted ``xmlparse``,
  ``xpath`` or ``xmltable`` over a DOCTYPE naming ``file:///etc/hostname`` never returns the
  file (the statement check cannot see inside a string literal, so the engine must hold).
- MariaDB with a multi-byte global client character set (GBK, where a lead byte can swallow
  the backslash that escapes a quote): the adapter resets the session after every call
  (``COM_RESET_CONNECTION``), and a reset could have given the session the global character
  set while PyMySQL still sends UTF-8; ``'<U+4E2D>\\'`` would then end the string early. The
  session keeps the connection's utf8mb4, so the text stays one string literal.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from db_support import Server, adapter

from rho_domain.errors import StatementRefused

HOSTNAME = Path("/etc/hostname").read_text().strip() if Path("/etc/hostname").exists() else ""
DTD = '<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/hostname">]><x>&e;</x>'
XML_READS = [
    f"SELECT xmlparse(document '{DTD}')::text",
    f"SELECT xpath('/x/text()', '{DTD}')::text",
    f"SELECT v FROM xmltable('/x' PASSING '{DTD}' COLUMNS v text PATH '.')",
]


@pytest.mark.skipif(not HOSTNAME, reason="no /etc/hostname to look for")
@pytest.mark.parametrize("sql", XML_READS)
async def test_postgres_xml_never_loads_an_external_entity(
    postgres_server: Server, sql: str
) -> None:
    db = adapter(postgres_server)
    try:
        result = await db.query(sql, max_rows=5, timeout=5)
    finally:
        await db.aclose()
    assert HOSTNAME not in repr(result.rows)


async def test_postgres_xmltable_columns_with_a_length_read(postgres_server: Server) -> None:
    """XMLTABLE's COLUMNS list has no parentheses of its own, so a column's ``char(2)``,
    ``decimal(5,2)`` or ``bit(3)`` was refused as a call of ``char()``, ``decimal()``..."""
    db = adapter(postgres_server)
    try:
        result = await db.query(
            "SELECT a, b, c FROM xmltable('/r' PASSING '<r><a>xy</a><b>1.5</b></r>' "
            "COLUMNS a char(2) PATH 'a', b decimal(5,2) PATH 'b', c bit(3) DEFAULT '101')",
            max_rows=5,
            timeout=5,
        )
    finally:
        await db.aclose()
    assert [str(v) for v in result.rows[0]] == ["xy", "1.50", "101"]


@pytest.fixture
def gbk_clients(mariadb_server: Server) -> Iterator[Server]:
    conn = mariadb_server.admin()
    cursor = conn.cursor()
    cursor.execute("SELECT @@GLOBAL.character_set_client")
    (saved,) = cursor.fetchone()
    cursor.execute("SET GLOBAL character_set_client = 'gbk'")
    try:
        yield mariadb_server
    finally:
        cursor.execute("SET GLOBAL character_set_client = %s", (saved,))
        conn.close()


async def test_mariadb_keeps_utf8mb4_after_the_reset_under_a_gbk_global(
    gbk_clients: Server,
) -> None:
    db = adapter(gbk_clients)
    attack = "SELECT '\u4e2d\\' , LOAD_FILE(0x2f6574632f686f73746e616d65) AS f -- '"
    try:
        for _ in range(2):  # the second call comes after a reset
            charset = await db.query("SELECT @@SESSION.character_set_client", max_rows=1, timeout=5)
            assert charset.rows == (("utf8mb4",),)
            result = await db.query(attack, max_rows=1, timeout=5)
            assert len(result.columns) == 1  # one string literal: nothing after it ran
    finally:
        await db.aclose()


async def test_postgres_large_objects_are_application_data(postgres_server: Server) -> None:
    """``pg_largeobject`` reads as a table does (docs/security.md says why: application
    data, not the server's secrets), while the ``lo_*`` functions, ``lo_export`` writing a
    server file among them, stay refused."""
    admin = postgres_server.admin()
    admin.autocommit = True
    (oid,) = admin.execute("SELECT lo_from_bytea(0, 'blob-bytes')").fetchone()
    db = adapter(postgres_server)
    try:
        read = await db.query(
            f"SELECT data FROM pg_largeobject WHERE loid = {oid}", max_rows=1, timeout=5
        )
        assert bytes(read.rows[0][0]) == b"blob-bytes"
        for call in (f"lo_get({oid})", f"lo_export({oid}, '/tmp/rho-lo')"):
            with pytest.raises(StatementRefused, match=r"the function lo_\w+\(\) is not on"):
                await db.query(f"SELECT {call}", max_rows=1, timeout=5)
    finally:
        await db.aclose()
        admin.execute(f"SELECT lo_unlink({oid})")
        admin.close()
