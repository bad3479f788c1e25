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

Their hashes come with the rest of the catalog, in the statement that reads it
(``mysql_catalog``), one row a view: summed up by the server as one digest, they had it open
every view a second time (about 9 ms of its CPU a statement, MariaDB 10.11), for 0.3 ms of
the client's CPU saved.
"""

from __future__ import annotations

import threading
from typing import Any

from rho_adapters.db.mysql_catalog import OWN, OWN_HASH, VIEW_KIND
from rho_adapters.db.mysql_view_texts import judged_text

# The server's own views, by their exact spelling (a database ``Sys`` is anyone's).
_OWN = f"FROM information_schema.VIEWS WHERE {OWN}"
_HASHES = f"SELECT {OWN_HASH} {_OWN}"
_TEXTS = f"SELECT TABLE_SCHEMA, TABLE_NAME, VIEW_DEFINITION, {VIEW_KIND} {_OWN}"
_KEPT = 8  # sets of rows kept (servers, logins)


# (schema, name, query with its literals emptied where ``judged_text`` says, kind)
Row = tuple[str, str, str, str]


def own_views(cursor: Any, *, mariadb: bool, hashes: tuple[str, ...]) -> tuple[Row, ...]:
    """The server's own views, whose hashes (sorted) are ``hashes``: as last read, by any
    connection, while their hashes are the same; read again otherwise."""
    key = (mariadb, hashes)
    with _LOCK:
        if key in _READ:
            return _READ[key]
    cursor.execute(_TEXTS)
    rows = tuple(
        (str(schema), str(name), judged_text(str(query)) if mariadb else str(query), str(kind))
        for schema, name, query, kind in cursor.fetchall()
    )
    cursor.execute(_HASHES)
    now = tuple(sorted(str(h or "") for (h,) in cursor.fetchall()))
    if "" in hashes or now != hashes:
        return rows  # one hashed as NULL, or changed while read: kept by no hashes
    with _LOCK:  # each connection's statements run in a thread of their own
        if len(_READ) >= _KEPT:
            del _READ[next(iter(_READ))]
        _READ[key] = rows
    return rows


_READ: dict[tuple[bool, tuple[str, ...]], tuple[Row, ...]] = {}
_LOCK = threading.Lock()
