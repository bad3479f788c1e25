"""Whether a PostgreSQL database's catalog changed since the last statement, cheaply.

Before each statement the adapter asks whether anything the statement check reads
(``pg_catalog_calls``) changed: the user objects' rows (``pg_catalog_queries.VERSION``),
the built-in rows written after initdb (``pg_rewritten.VERSION``) and the login's rights
(``pg_privileged.PRIVILEGES``, whether it may set ``temp_file_limit``). The scans of the
first two are most of that cost (~6,000 rows; planning them too), and they are skipped
while the server's snapshot is the one they were last read at:

- what a scan returns is a function of the rows its statement's snapshot sees, and a
  snapshot (``xmin:xmax:in-progress``) stays the same only while no transaction commits,
  anywhere on the server: a commit either removes its xid from the in-progress list or
  moves ``xmax`` past it, and neither goes back (an aborted one changes no visible row);
- ``pg_current_snapshot()`` is the statement's own snapshot, the one its scans read at, so
  the snapshot kept is the one the kept scans saw;
- the rights are read at every statement, whatever the snapshot: ``pg_has_role`` and
  ``has_*_privilege`` answer through the backend's caches, which a commit's invalidations
  reach a moment after the commit is visible in snapshots, so a right read then may lag
  its snapshot (a scan never does).

So a quiet server costs one small statement a check (the snapshot and the rights), and
a busy one, whose snapshot changes at every statement, the same one round trip as before:
after a check that found the snapshot changed, the next asks the whole question in one
statement, the scans behind a one-time filter on the snapshot (not run when it is the
same); after one that found it unchanged, the small statement first, the whole one only
when the snapshot moved (two round trips then, once).

Constant SQL only; every function and comparison named by its schema (this runs with the
user's search path, outside ``pg_catalog_only``), the snapshot turned into text by its
output function (``snapshot::text`` is an I/O conversion a superuser's cast may take over).
"""

from __future__ import annotations

from typing import Any

import attrs

from rho_adapters.db import pg_catalog_queries as query
from rho_adapters.db import pg_rewritten
from rho_adapters.db.pg_privileged import PRIVILEGES
from rho_domain.value_methods import value_eq, value_hash, value_repr

_SNAPSHOT = "pg_catalog.textin(pg_catalog.pg_snapshot_out(pg_catalog.pg_current_snapshot()))"
# before PostgreSQL 13 (the same snapshot, its older spelling)
_TXID_SNAPSHOT = (
    "pg_catalog.textin(pg_catalog.txid_snapshot_out(pg_catalog.txid_current_snapshot()))"
)


@attrs.frozen
class CatalogVersion:
    """One check's answer: ``snapshot`` the server's at the scans (``""``: none yet),
    ``scans`` what they returned, ``rights`` the login's (the last: whether it may set
    ``temp_file_limit``), ``quiet`` whether the snapshot was the one before."""

    snapshot: str
    scans: tuple[Any, ...]
    rights: tuple[Any, ...]
    quiet: bool
    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    def same_catalog(self, other: CatalogVersion | None) -> bool:
        """Whether nothing the statement check reads changed between ``other`` and this."""
        return other is not None and (self.scans, self.rights) == (other.scans, other.rights)

    @property
    def temp_limit(self) -> bool:
        """Whether the login may set ``temp_file_limit`` now (a superuser, or granted
        ``SET`` on it): the ``is_superuser`` the server reported at login stays as it was
        after an ``ALTER ROLE ... NOSUPERUSER`` on another connection."""
        return bool(self.rights and self.rights[-1])


def catalog_version(conn: Any, last: CatalogVersion | None) -> CatalogVersion:
    """``conn``'s catalog version now, the scans skipped where the snapshot is ``last``'s
    (see the module); one round trip, two when a quiet server's snapshot moved."""
    snapshot = _SNAPSHOT if conn.info.server_version >= 130000 else _TXID_SNAPSHOT
    rights = f"SELECT {snapshot}, p.*, t.* FROM ({PRIVILEGES}) p, ({_temp_limit_right(conn)}) t"  # noqa: S608
    if last is not None and last.quiet:
        row = conn.execute(rights, prepare=False).fetchone()
        if row is not None and row[0] == last.snapshot:
            return CatalogVersion(snapshot=row[0], scans=last.scans, rights=row[1:], quiet=True)
    whole = (
        f"SELECT r.*, s.* FROM ({rights}) r LEFT JOIN (SELECT * FROM ({query.VERSION}) v,"  # noqa: S608
        f" ({pg_rewritten.VERSION}) w WHERE {snapshot} OPERATOR(pg_catalog.<>)"
        " %s::pg_catalog.text) s ON true"
    )
    seen = "" if last is None else last.snapshot
    row = conn.execute(whole, (seen,), prepare=False).fetchone()
    if row is None:  # no row for the login: nothing kept, asked whole again next time
        return CatalogVersion(snapshot="", scans=(), rights=(), quiet=False)
    width = len(row) - 5  # VERSION's three columns, pg_rewritten.VERSION's two
    quiet = last is not None and row[0] == seen
    scans = last.scans if quiet and last is not None else tuple(row[width:])
    return CatalogVersion(snapshot=str(row[0]), scans=scans, rights=row[1:width], quiet=quiet)


def _temp_limit_right(conn: Any) -> str:
    """SQL: whether the current role may set ``temp_file_limit`` now (a superuser, or
    PostgreSQL 15+ with ``GRANT SET ON PARAMETER temp_file_limit``), read from the catalog:
    the ``is_superuser`` the server reported at login stays as it was after an ``ALTER ROLE
    ... NOSUPERUSER`` on another connection, which the server's own check follows."""
    granted = (
        " OR pg_catalog.has_parameter_privilege('temp_file_limit', 'SET')"
        if conn.info.server_version >= 150000
        else ""
    )
    return (
        f"SELECT r.rolsuper{granted} FROM pg_catalog.pg_roles r"  # noqa: S608 - constant
        " WHERE r.rolname OPERATOR(pg_catalog.=) current_user"
    )
