"""The versioned schema of the PostgreSQL session store, created or migrated on first use.

``rho_schema`` holds one row: the schema version. A store at an older version is migrated
step by step (``MIGRATIONS``), one process at a time (a transaction-level advisory lock); a
store at a NEWER version than this build knows is refused, never touched: an older rho-agent
writing a newer layout would corrupt what the newer one relies on.

Tables (every name prefixed ``rho_``, so the store can share a database):

- ``rho_sessions``: one row per session: its record (config as JSON text, without secrets;
  JSON text rather than jsonb, which refuses a ``\u0000`` a prompt may hold), the
  summary a listing shows (``meta``, the same keys as meta.json), who holds it (``holder``)
  and when it last beat (``beat``, the server's clock, so hosts' clocks never matter), how
  long its beats may be apart (``lease``: the holder's own ``stale_after``, schema 2; a host
  of an earlier version than the store's may not claim, schema 3: ``rho_claim_check``), the
  ``cancel`` and ``paused`` flags, the last trace line number, and who created it
  (``creator``, ``user@host``: whose ``latest`` it is, schema 4; NULL in an older row).
- ``rho_events``: the trace, one row per line, ``line`` exactly as trace.jsonl holds it.
- ``rho_directives``: operator directives, numbered from 0 per session.
- ``rho_exports``: context-export requests and their answers.

The two columns that hold free text as it is (a directive's ``text``, an export's ``answer``)
go through ``to_column``/``from_column``: PostgreSQL text cannot hold a NUL character, which
a directive or a history (a prompt, a tool's output) may.

Notifications go on one channel, ``rho``, with payloads ``cancel <id>`` and ``trace <id>``.
"""

from __future__ import annotations

import json
import os
import socket
from typing import Any

from rho_adapters.pgstore.connection import StoreAddress
from rho_domain.errors import StoredPastBound, StoreError

SCHEMA_VERSION = 4
CHANNEL = "rho"
DECLARED = "rho.schema"
"""The setting each connection of this build sets to ``SCHEMA_VERSION`` (``declare``)."""
_MIGRATION_LOCK = 0x72686F  # "rho": one migrating process at a time
_ENCODED = "\x01"  # a column value starting with it holds a JSON string


def to_column(text: str) -> str:
    """``text`` as a text column can hold it: as it is, or (holding a NUL, or starting with
    the mark) the mark and its JSON string, which escapes the NUL. ``from_column`` inverts
    it; rows written before were always as they are (none held a NUL: it was refused)."""
    if "\x00" in text or text.startswith(_ENCODED):
        return _ENCODED + json.dumps(text)
    return text


def from_column(value: str) -> str:
    """The text ``to_column`` stored as ``value``."""
    if value.startswith(_ENCODED):
        return str(json.loads(value[len(_ENCODED) :]))
    return value


_V1 = (
    """CREATE TABLE rho_sessions (
        id text PRIMARY KEY,
        created_at double precision NOT NULL,
        parent_id text,
        config text NOT NULL,
        labels text NOT NULL DEFAULT '{}',
        meta text NOT NULL,
        holder text,
        beat timestamptz,
        cancel boolean NOT NULL DEFAULT false,
        paused boolean NOT NULL DEFAULT false,
        last_seq bigint NOT NULL DEFAULT 0
    )""",
    "CREATE INDEX rho_sessions_newest ON rho_sessions (created_at DESC, id DESC)",
    "CREATE INDEX rho_sessions_holder ON rho_sessions (holder) WHERE holder IS NOT NULL",
    """CREATE TABLE rho_events (
        session_id text NOT NULL REFERENCES rho_sessions (id) ON DELETE CASCADE,
        seq bigint NOT NULL,
        line text NOT NULL,
        PRIMARY KEY (session_id, seq)
    )""",
    """CREATE TABLE rho_directives (
        session_id text NOT NULL REFERENCES rho_sessions (id) ON DELETE CASCADE,
        seq integer NOT NULL,
        text text NOT NULL,
        at double precision NOT NULL,
        PRIMARY KEY (session_id, seq)
    )""",
    """CREATE TABLE rho_exports (
        session_id text NOT NULL REFERENCES rho_sessions (id) ON DELETE CASCADE,
        request_id text NOT NULL,
        answer text,
        PRIMARY KEY (session_id, request_id)
    )""",
)

# a claim's lease, written by its holder: a taker configured with a shorter stale bound than
# the holder's (RHO_AGENT_STORE_STALE_AFTER=1 against another machine's 60, beating every
# 2 s) read the holder's live claim as stale between its beats, and took the session over
_V2 = ("ALTER TABLE rho_sessions ADD COLUMN lease double precision",)

# A host started before the store was migrated goes on writing as its own version: one of
# schema 1 claimed without a lease (read by everyone with their own bound, the hole schema 2
# closed) and judged a claim's age by its own bound alone, so it took live sessions over from
# hosts with a longer one. Every writer now says which schema it writes (``DECLARED``, set on
# each connection); one that says less than the store's version may release, flag and edit,
# but not claim (refused, naming what to do), and a beat of a claim it made before the
# migration gets the lease earlier versions kept by default (``STALE_AFTER_SECONDS``: 8).
_V3 = (
    """CREATE FUNCTION rho_claim_check() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
        declared text := current_setting('rho.schema', true);
        stored integer;
    BEGIN
        -- an update that keeps the holder, and a lease or no claim, is let through whatever
        -- the versions (as below): every append and beat, without the dynamic read of
        -- rho_schema, which took 50-150 us of an append's 120-170 (server-side, 1,000)
        IF TG_OP = 'UPDATE' AND NEW.holder IS NOT DISTINCT FROM OLD.holder
                AND (NEW.holder IS NULL OR NEW.lease IS NOT NULL) THEN
            RETURN NEW;
        END IF;
        -- the table's own schema: an edit from a session with another search_path
        EXECUTE format('SELECT version FROM %I.rho_schema', TG_TABLE_SCHEMA) INTO stored;
        IF declared ~ '^[0-9]{1,6}$' THEN
            IF declared::integer >= stored THEN
                RETURN NEW;
            END IF;
        END IF;
        IF NEW.holder IS NULL THEN
            RETURN NEW;
        END IF;
        IF TG_OP = 'INSERT' OR NEW.holder IS DISTINCT FROM OLD.holder THEN
            RAISE EXCEPTION USING ERRCODE = 'object_not_in_prerequisite_state',
                MESSAGE = format('session %s: %s runs a rho-agent older than the session '
                    'store''s schema (version %s), which claims sessions without the lease '
                    'newer hosts rely on; its claim is refused: upgrade rho-agent on that '
                    'host (pip install -U ''rho-agent[postgres]'') and start it again',
                    NEW.id, NEW.holder, stored);
        END IF;
        IF NEW.lease IS NULL THEN
            NEW.lease := 8;
        END IF;
        RETURN NEW;
    END $$""",
    "CREATE TRIGGER rho_claims BEFORE INSERT OR UPDATE ON rho_sessions"
    " FOR EACH ROW EXECUTE FUNCTION rho_claim_check()",
    # after the trigger, whose lock waits for every claim still being written and holds off
    # any later one until the migration commits: run first, the update missed an old host's
    # claim committed between the two, which kept no lease until its next beat
    "UPDATE rho_sessions SET lease = 8 WHERE holder IS NOT NULL AND lease IS NULL",
)

# who created the session (``creators.py``): ``latest`` is the asker's newest, not any
# host's (a peer's session created a moment later was resumed by ``--resume latest``)
_V4 = (
    "ALTER TABLE rho_sessions ADD COLUMN creator text",
    "CREATE INDEX rho_sessions_creator ON rho_sessions (creator, created_at DESC, id DESC)",
)

MIGRATIONS: dict[int, tuple[str, ...]] = {1: _V1, 2: _V2, 3: _V3, 4: _V4}
"""Statements that bring the schema from version ``n - 1`` to ``n``."""


LEASE_MAX_SECONDS = 3600
"""The longest lease that counts, as ``RHO_AGENT_STORE_STALE_AFTER`` allows: a row's lease is
whatever its holder wrote (a library user's ``stale_after`` of ``inf`` or NaN, a hand edit),
and one past what an interval holds failed every reader's query ('interval out of range')."""

ALIVE = (
    f"(beat >= now() - make_interval(secs => LEAST(GREATEST(lease, %s), {LEASE_MAX_SECONDS}))"
    f" AND beat <= now() + make_interval(secs => {LEASE_MAX_SECONDS}))"
)
"""SQL: the row's holder still holds it. Its beat is younger than the holder's own lease or
than the reader's stale bound (the parameter), whichever is longer, and at most
``LEASE_MAX_SECONDS`` (NaN counts as that): whose bound counts is the holder's, who knows how
often it beats, and a reader never judges a claim sooner than it would its own. A claim an
earlier version made has no lease (NULL, which GREATEST skips). A beat is the server's
``now()``, so one ahead of it by more than ``LEASE_MAX_SECONDS`` is a hand edit
('infinity'): counted alive, it held the session for ever, never stale nor taken over."""


def declare(conn: Any) -> None:
    """Say on ``conn`` (in autocommit) which schema this build writes: the store's trigger
    refuses a claim from a connection that says less than the store's version (schema 3).
    Hand edits through the pool's connections rely on it; claims do not (``declare_here``)."""
    conn.execute("SELECT set_config(%s, %s, false)", (DECLARED, str(SCHEMA_VERSION)))


def declare_here(conn: Any) -> None:
    """Say which schema this build writes for the rest of ``conn``'s transaction alone; each
    claim (``create``, ``open``) does, in its own transaction. A session's setting does not
    last as long as the connection object: a pooler's reset of the server connection
    (PgBouncer's ``DISCARD ALL``, ``RESET ALL``) dropped it, or a transaction-mode pooler ran
    the claim on a server connection that never had it, and the trigger refused the new
    host's own claims, telling it to upgrade the rho-agent it already ran."""
    conn.execute("SELECT set_config(%s, %s, true)", (DECLARED, str(SCHEMA_VERSION)))


def holder_name(conn: Any) -> str:
    """A name for a new holder: ``host pid N (xid X)``. Every claim is checked against it
    (appends, the heartbeat, the takeover's cancel), so two holders of one name each took
    the other's claims for their own; two containers with one hostname and pid 1 drew it
    from 24 random bits, and on a collision the taker of a stale session never told the
    frozen holder, which went on appending beside it. ``X`` is a transaction id of the
    database server (``txid_current``), which it never gives twice: unique by construction."""
    xid = conn.execute("SELECT txid_current()").fetchone()[0]
    return f"{socket.gethostname()} pid {os.getpid()} (xid {xid})"


def bounded(column: str, limit: int) -> str:
    """SQL: ``column``, or NULL when it holds more than ``limit`` bytes. A row holds what its
    writer wrote (a peer with the store's password): read whole, one value of a gigabyte
    cost every reader that much memory, as a planted file did in a session directory; the
    file store's bounds apply (``store.layout.META_BYTES`` and its neighbours)."""
    return f"CASE WHEN octet_length({column}) <= {int(limit)} THEN {column} END"


def bounded_lines(conn: Any, session_id: str, after: int, limit: int) -> list[Any]:
    """The session's trace rows after line ``after``, ``(seq, line)`` in order; the
    ``too_large`` StoreError when they hold more than ``limit`` bytes
    (``PgBackend.trace_bytes``): read whole, a gigabyte row written by a peer cost every
    reader that much memory, as a planted trace.jsonl did. The sizes are judged in the
    statement that reads the rows: summed in one and read in the next (READ COMMITTED, a
    snapshot each), a row a peer made a gigabyte in between was read whole."""
    rows = conn.execute(
        "WITH total AS (SELECT coalesce(sum(octet_length(line)), 0) AS bytes"
        " FROM rho_events WHERE session_id = %s AND seq > %s)"
        " SELECT total.bytes, e.seq, e.line FROM total LEFT JOIN LATERAL (SELECT seq, line"
        " FROM rho_events WHERE total.bytes <= %s AND session_id = %s AND seq > %s OFFSET 0)"
        " e ON true ORDER BY e.seq",  # OFFSET 0: not pulled up, so the bound stays a
        # one-time filter (joined, it was judged against each of the 100,000 rows)
        (session_id, after, limit, session_id, after),
    ).fetchall()
    if int(rows[0][0]) > limit:
        raise trace_too_large(session_id, limit)
    return [(seq, line) for _, seq, line in rows if seq is not None]


def bounded_text(conn: Any, session_id: str, limit: int) -> str:
    """The session's whole trace as one text (``string_agg``: its lines, each without its
    newline, joined by one), judged as ``bounded_lines`` judges, in the one statement."""
    total, text = conn.execute(
        "WITH total AS (SELECT coalesce(sum(octet_length(line)), 0) AS bytes"
        " FROM rho_events WHERE session_id = %s)"
        " SELECT total.bytes, (SELECT string_agg(line, E'\\n' ORDER BY seq) FROM rho_events"
        " WHERE session_id = %s AND total.bytes <= %s) FROM total",
        (session_id, session_id, limit),
    ).fetchone()
    if int(total) > limit:
        raise trace_too_large(session_id, limit)
    return str(text or "")


def too_large(what: str, limit: int) -> StoredPastBound:
    """The error for a value ``bounded`` left out: ``what`` names the row and its column."""
    return StoredPastBound(
        f"{what} holds more than {limit} bytes, far more than rho-agent writes there; not "
        "read (restore or delete that row)"
    )


def trace_too_large(session_id: str, limit: int) -> StoredPastBound:
    """``too_large`` for session ``session_id``'s trace rows, past ``limit`` bytes together."""
    return too_large(f"session {session_id}'s trace (its rho_events rows)", limit)


def ensure_schema(conn: Any, address: StoreAddress) -> int:
    """Create or migrate the schema inside the caller's transaction; return its version.

    Raises StoreError when the store's schema is newer than ``SCHEMA_VERSION``.
    """
    conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
    conn.execute(
        "CREATE TABLE IF NOT EXISTS rho_schema ("
        " one boolean PRIMARY KEY DEFAULT true CHECK (one), version integer NOT NULL)"
    )
    row = conn.execute("SELECT version FROM rho_schema").fetchone()
    version = 0 if row is None else int(row[0])
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"the session store {address.shown} (set by {address.origin}) has schema version "
            f"{version}, newer than this rho-agent knows ({SCHEMA_VERSION}): upgrade rho-agent "
            f"on this host (pip install -U 'rho-agent[postgres]') before using it"
        )
    for step in range(version + 1, SCHEMA_VERSION + 1):
        for statement in MIGRATIONS[step]:
            conn.execute(statement)
    if version == 0:
        conn.execute("INSERT INTO rho_schema (version) VALUES (%s)", (SCHEMA_VERSION,))
    elif version < SCHEMA_VERSION:
        conn.execute("UPDATE rho_schema SET version = %s", (SCHEMA_VERSION,))
    return SCHEMA_VERSION
