"""The server's own views (its ``sys`` schema's, MariaDB's ``mysql.user``), judged as any.

Their definer (``mariadb.sys``, ``mysql.sys``) proves nothing about their queries: an
administrator writes any definer (``CREATE DEFINER=`mariadb.sys`@`localhost` VIEW sys.v AS
SELECT rho.tune()``: its ``SET GLOBAL`` ran with the check on, MariaDB 10.11), and a view
the server installed calls ``sys`` functions an administrator may have replaced
(``sys.memory_global_total`` calls ``sys.format_bytes``: a replacement's ``SET GLOBAL``
ran). So their queries are judged where they are named, as every view's
(``mysql_views``). Their texts (100 views, 130 KB on MariaDB 10.11, 80 ms of CPU to
prepare) are read again only when their hashes, which the server computes before each
statement, change (the rows read are shared by the process's connections).

The server's ``init_connect``, which the adapter also reads before each statement
(``mysql_login``), comes in the same round trip as the hashes, and the hashes as one digest
(``server_now``): read apart, as 100 rows of hashes and a row of ``init_connect``, they cost
the client 0.54-0.63 ms of CPU a statement; as one row, 0.26-0.28 ms (MariaDB 10.11, 300
statements, best of five). The server's part, about 5 ms of its CPU (information_schema
opens each view), is the same either way.
"""

from __future__ import annotations

import threading
from typing import Any, NamedTuple

from rho_adapters.db.mysql_view_texts import judged_text
from rho_adapters.db.mysql_views import SYSTEM_SCHEMAS, VIEW_KIND

# The server's own views, by their exact spelling (a database ``Sys`` is anyone's).
_OWN = (
    "FROM information_schema.VIEWS WHERE CAST(TABLE_SCHEMA AS BINARY) IN (%s, %s, %s, %s) "
    "AND CAST(DEFINER AS BINARY) IN ('mariadb.sys@localhost', 'mysql.sys@localhost')"
)
# Each view's hash covers what its row holds (its kind, which this login decides, too), so
# that rows read once serve every connection that finds the same hashes. Its name and query
# are hashed apart first: CONCAT_WS returns NULL past max_allowed_packet, and a query that
# long (the server writes a newline in a literal as two bytes) hashed as NULL whatever it
# said, so the view's replacement kept the rows read before it; and fixed-length parts
# leave no 0x1f in a name or a query to move a field's border.
_HASH = (
    "SHA2(CONCAT_WS(0x1f, TABLE_SCHEMA, SHA2(TABLE_NAME, 256), DEFINER, SECURITY_TYPE, "
    f"SHA2(VIEW_DEFINITION, 256), {VIEW_KIND}), 256)"
)
_HASHES = f"SELECT {_HASH} {_OWN} ORDER BY 1"
# One row: init_connect, a digest of the views' hashes in order, and whether the digest is
# of them whole (GROUP_CONCAT stops at group_concat_max_len: MySQL's default, 1,024 bytes,
# holds 16 hashes; MariaDB's 1 MB, 16,000). Read as 100 rows, the hashes were most of what
# the adapter's reads before a statement cost the client (0.42 ms of CPU a statement).
_NOW = (
    "SELECT @@GLOBAL.init_connect, SHA2(hashes, 256), COALESCE(LENGTH(hashes), 0) = 64 * n "  # noqa: S608
    "FROM (SELECT COUNT(*) n, GROUP_CONCAT(h ORDER BY h SEPARATOR '') hashes "
    f"FROM (SELECT {_HASH} h {_OWN}) own) hashed"
)
_TEXTS = f"SELECT TABLE_SCHEMA, TABLE_NAME, VIEW_DEFINITION, {VIEW_KIND} {_OWN}"
_KEPT = 8  # sets of rows kept (servers, logins)


# (schema, name, query with its literals emptied where ``judged_text`` says, kind)
Row = tuple[str, str, str, str]


class ServerNow(NamedTuple):
    """What the server holds now: its ``init_connect`` ("" when unset), and its own views'
    hashes (a digest of them all, or each, sorted, where the digest could not hold them)."""

    init_connect: str
    hashes: tuple[str, ...]


def server_now(cursor: Any) -> ServerNow:
    """The server's ``init_connect`` and its own views' hashes, in one round trip (two
    where ``group_concat_max_len`` cuts their digest's input)."""
    cursor.execute(_NOW, SYSTEM_SCHEMAS)
    (init_connect, digest, whole) = cursor.fetchone()
    if not whole:
        cursor.execute(_HASHES, SYSTEM_SCHEMAS)
        # (a NULL hash, "", is no view's identity: own_views keeps no rows by it)
        hashes = tuple(str(r[0] or "") for r in cursor.fetchall())
        return ServerNow(str(init_connect or ""), hashes)
    return ServerNow(str(init_connect or ""), (f"digest:{digest or ''}",))


def own_views(cursor: Any, *, mariadb: bool, now: ServerNow) -> tuple[Row, ...]:
    """The server's own views, whose hashes are ``now``'s: as last read, by any connection,
    while their hashes are the same; read again otherwise."""
    key = (mariadb, now.hashes)
    with _LOCK:
        if key in _READ:
            return _READ[key]
    cursor.execute(_TEXTS, SYSTEM_SCHEMAS)
    rows = tuple(
        (str(schema), str(name), judged_text(str(query)) if mariadb else str(query), str(kind))
        for schema, name, query, kind in cursor.fetchall()
    )
    if "" in now.hashes or server_now(cursor).hashes != now.hashes:
        return rows  # one hashed as NULL, or changed while read: kept by no hashes
    with _LOCK:  # each connection's statements run in a thread of their own
        if len(_READ) >= _KEPT:
            del _READ[next(iter(_READ))]
        _READ[key] = rows
    return rows


_READ: dict[tuple[bool, tuple[str, ...]], tuple[Row, ...]] = {}
_LOCK = threading.Lock()
