"""Finding and reading the PostgreSQL store's session rows: an id from a prefix or
``latest`` (``resolve_id``), a row's ``SessionRecord`` (``record_of``), and the listing, one
query and one SessionInfo per row (``list_sessions``, ``info_of``).

Liveness uses the server's clock only: a holder is alive while ``beat`` is younger than its
lease (``schema.ALIVE``: the holder's own bound, or this backend's ``stale_after`` if longer;
``now()`` on the server), so hosts' clocks never disagree about it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from typing import Any

from rho_adapters.codec import config_from_dict
from rho_adapters.pgstore.backend import PgBackend
from rho_adapters.pgstore.schema import ALIVE, bounded, too_large
from rho_adapters.store.layout import META_BYTES
from rho_adapters.store.meta import info_from_meta
from rho_adapters.store.meta_fields import AHEAD_SECONDS, is_number, typed_meta
from rho_adapters.store.recording import CONFIG_BYTES
from rho_domain.errors import ConfigError, SessionNotFound, StoredConfigInvalid
from rho_domain.ports.session_control import judge_liveness
from rho_domain.ports.store import EMPTY_ID, SessionInfo, SessionRecord
from rho_domain.run import ambiguous, is_plain_id, takes_exact, whole_id_of

# labels and a parent id are in meta.json in the file store, and held to its bound here
# (what rho-agent writes is a few KiB at most: ``label_problem``'s limits); id and holder are
# indexed: a btree entry holds 8 kB compressed, under 1 MiB even of one repeated letter
ROW = (  # ALIVE and bounded's SQL are constants of ours, no one's input
    f"SELECT id, {bounded('meta', META_BYTES)}, holder, holder IS NOT NULL AND {ALIVE},"  # noqa: S608
    f" paused, {bounded('labels', META_BYTES)}, created_at FROM rho_sessions"
)


def record_columns(table: str = "") -> str:
    """SQL: the columns ``record_of`` reads, of the row ``table`` names (``"s."``: its alias),
    each bounded: a config past ``CONFIG_BYTES``, labels or a parent id past ``META_BYTES``
    are NULL, and ``record_of`` refuses them."""
    parent, labels = f"{table}parent_id", f"{table}labels"
    return (
        f"{table}id, {table}created_at, {bounded(parent, META_BYTES)},"
        f" octet_length({parent}) > {META_BYTES}, {bounded(f'{table}config', CONFIG_BYTES)},"
        f" {bounded(labels, META_BYTES)}"
    )


def info_of(row: tuple[Any, ...]) -> SessionInfo:
    """A SessionInfo from a ``ROW`` row (its stale bound given as the first parameter)."""
    session_id, meta, holder, alive, paused, labels, created = row
    # a summary another version wrote: a field of another type is left out (``meta_fields``)
    meta = typed_meta(dict(_json(meta)), f"session {session_id} in the store")
    # the row's own column when the summary has none of this type (not 1970-01-01); a column
    # edited to NaN or an infinity (double precision holds them) is no time: -Infinity
    # raised out of --list ('cannot convert float NaN to integer'), NaN and Infinity made
    # --list --json print what no JSON parser reads
    if not meta.get("created_at"):
        meta["created_at"] = created if is_number(created) else 0.0
    labels = _json(labels)
    status = str(meta.get("status", "created"))
    return info_from_meta(
        session_id,
        meta,
        status=status,
        liveness=judge_liveness(status=status, held=bool(alive), paused=bool(paused)),
        labels=labels,
        holder=holder if alive else None,
    )


def _json(text: str | None) -> Mapping[str, Any]:
    try:
        data = json.loads(text or "{}")
    except (ValueError, RecursionError):
        return {}  # a listing never fails on one broken row
    return data if isinstance(data, Mapping) else {}


def resolve_id(conn: Any, ref: str, creator: str) -> str:
    """The exact id for an id, a unique prefix or ``latest``: the newest session ``creator``
    (``user@host``, ``creator_name``) created, never a peer's. Raises SessionNotFound."""
    if not ref.strip():  # as the file store says it (``layout.resolve``)
        raise SessionNotFound(f"session {ref!r}: {EMPTY_ID}")
    if "\x00" in ref:  # no id holds one, and a text parameter cannot: the query failed
        raise SessionNotFound(f"no session matches {ref[:300]!r} in the store")
    if ref == "latest":
        row = newest_first(conn, "SELECT id FROM rho_sessions", (creator,), 1, mine=True)
        if not row:
            others = conn.execute("SELECT count(*) FROM rho_sessions").fetchone()[0]
            raise SessionNotFound(
                f"no session of {creator} in the store, so no latest"
                + (f" ({others} of other users or hosts: name one by its id)" if others else "")
            )
        return str(row[0][0])
    whole = whole_id_of(ref)
    if (
        (whole or takes_exact(ref))
        and is_plain_id(whole or ref)
        and conn.execute("SELECT 1 FROM rho_sessions WHERE id = %s", (whole or ref,)).fetchone()
    ):
        return whole or ref
    if whole is not None:  # ``=ID``: that whole id and nothing else
        raise SessionNotFound(f"no session has the whole id {whole[:300]!r} in the store")
    pattern = ref.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    rows = conn.execute(
        "SELECT id FROM rho_sessions WHERE id LIKE %s ORDER BY id LIMIT 11", (pattern,)
    ).fetchall()
    matches = [str(r[0]) for r in rows] if ref else []
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise SessionNotFound(f"no session matches {ref!r} in the store")
    raise SessionNotFound(ambiguous(ref, matches))


def record_of(row: Sequence[Any]) -> SessionRecord:
    """A SessionRecord from a row of ``record_columns``; StoreError naming the row and its
    column for a value past its bound."""
    session_id, created, parent, parent_too_large, config, labels = row
    if config is None:
        raise too_large(f"session {session_id}'s config in the store", CONFIG_BYTES)
    for name, past in (("labels", labels is None), ("parent id", parent_too_large)):
        if past:
            raise too_large(f"session {session_id}'s {name} in the store", META_BYTES)
    try:
        config, labels = json.loads(config), json.loads(labels)
    except (ValueError, RecursionError) as exc:
        raise StoredConfigInvalid(
            f"session {session_id} in the store has a broken record: {exc}"
        ) from exc
    try:
        stored = config_from_dict(config, source=f"session {session_id} in the store")
    except ConfigError as exc:  # a key or type another version wrote: say what to do
        raise StoredConfigInvalid(
            f"{exc}. The session's config was written by another rho-agent version: upgrade "
            "rho-agent to read it; its events are unchanged"
        ) from exc
    return SessionRecord(
        id=session_id,
        created_at=float(created),
        config=stored,
        parent_id=parent,
        labels={str(k): str(v) for k, v in (labels or {}).items()},
    )


async def list_sessions(backend: PgBackend, *, limit: int = 50) -> tuple[SessionInfo, ...]:
    """The store's sessions, newest first (``SessionStore.list``)."""
    rows = await backend.call(newest_first, ROW, (backend.stale_after,), limit)
    return tuple(info_of(tuple(r)) for r in rows)


# NaN fails the second; a time ahead of the reader's clock by more than a day is none too
_A_TIME = "created_at > '-Infinity' AND created_at < 'Infinity' AND created_at <= %s"
_NO_TIME = f"NOT ({_A_TIME})"


def newest_first(
    conn: Any, select: str, params: tuple[Any, ...], limit: int, *, mine: bool = False
) -> list[Any]:
    """The first ``limit`` rows of ``select`` (a SELECT over rho_sessions alone, no WHERE),
    newest first: the rows with a time by it, then those without one by id. PostgreSQL
    sorts NaN and Infinity above every time, so a row whose created_at was edited to one
    (or a library caller's record with one) was ``latest`` however old, and a hundred such
    rows pushed every real session out of a listing, which shows them with no time
    (``info_of``); so did a time no clock has reached (2096: ``meta_fields.order_time``),
    which sorts with them. The first query is a range on the index ``rho_sessions_newest``."""
    latest = time.time() + AHEAD_SECONDS
    where = "creator = %s AND " if mine else ""  # ``mine``: params' first is the creator
    rows = conn.execute(
        f"{select} WHERE {where}{_A_TIME} ORDER BY created_at DESC, id DESC LIMIT %s",
        (*params, latest, limit),
    ).fetchall()
    if len(rows) < limit:
        rows += conn.execute(
            f"{select} WHERE {where}{_NO_TIME} ORDER BY id DESC LIMIT %s",
            (*params, latest, limit - len(rows)),
        ).fetchall()
    return list(rows)
