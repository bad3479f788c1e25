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
"""

from __future__ import annotations

import threading
from typing import Any

from rho_adapters.db.mysql_view_texts import judged_text
from rho_adapters.db.mysql_views import SYSTEM_SCHEMAS, VIEW_KIND

# The server's own views, by their exact spelling (a database ``Sys`` is anyone's).
_OWN = (
    "FROM information_schema.VIEWS WHERE CAST(TABLE_SCHEMA AS BINARY) IN (%s, %s, %s, %s) "
    "AND CAST(DEFINER AS BINARY) IN ('mariadb.sys@localhost', 'mysql.sys@localhost')"
)
# Each view's hash covers what its row holds (its kind, which this login decides, too), so
# that rows read once serve every connection that finds the same hashes.
_HASHES = (
    "SELECT SHA2(CONCAT_WS(0x1f, TABLE_SCHEMA, TABLE_NAME, DEFINER, SECURITY_TYPE, "
    f"VIEW_DEFINITION, {VIEW_KIND}), 256) {_OWN} ORDER BY 1"
)
_TEXTS = f"SELECT TABLE_SCHEMA, TABLE_NAME, VIEW_DEFINITION, {VIEW_KIND} {_OWN}"
_KEPT = 8  # sets of rows kept (servers, logins)


# (schema, name, query with its literals emptied where ``judged_text`` says, kind)
Row = tuple[str, str, str, str]


def own_views(cursor: Any, *, mariadb: bool) -> tuple[Row, ...]:
    """The server's own views now: as last read, by any connection, while their hashes are
    the same; read again otherwise."""
    key = (mariadb, _hashes(cursor))
    with _LOCK:
        if key in _READ:
            return _READ[key]
    cursor.execute(_TEXTS, SYSTEM_SCHEMAS)
    rows = tuple(
        (str(schema), str(name), judged_text(str(query)) if mariadb else str(query), str(kind))
        for schema, name, query, kind in cursor.fetchall()
    )
    if _hashes(cursor) != key[1]:  # one changed while read: kept by no hashes
        return rows
    with _LOCK:  # each connection's statements run in a thread of their own
        if len(_READ) >= _KEPT:
            del _READ[next(iter(_READ))]
        _READ[key] = rows
    return rows


def _hashes(cursor: Any) -> tuple[str, ...]:
    cursor.execute(_HASHES, SYSTEM_SCHEMAS)
    return tuple(str(row[0]) for row in cursor.fetchall())


_READ: dict[tuple[bool, tuple[str, ...]], tuple[Row, ...]] = {}
_LOCK = threading.Lock()
