"""What a read of a PostgreSQL table runs besides the table: its policies, its children.

Row-level security: ``SELECT * FROM notes`` runs the ``USING`` expression of every policy
that applies to the login. An administrator's policy calling ``pg_read_file`` or a user
function (here a ``SECURITY DEFINER`` one that raises with a server file's text) names
nothing in the statement, so the check let it through and the read-only transaction ran it:
the file's text came back in the error. Now the adapter reads the policies that apply to its
login (``row_security_active``) with the rest of the catalog, and the check judges a
policy's expression where its table is named, as it judges a view's query.

Inheritance and partitions: a read of a table reads its children, and a ``file_fdw`` child
runs its ``program`` on every read. ``SELECT * FROM parent`` named no foreign table and ran
the child's program; now every table above such a child is refused by name. Any wrapper: a
``postgres_fdw`` table over a view calling ``pg_read_file``, mapped to a superuser, gave a
plain login the server file.
"""

from __future__ import annotations

from collections.abc import Iterator

import attrs
import pytest
from db_support import Server, own_pg_database

from rho_adapters.db import ADAPTERS
from rho_domain.errors import DatabaseError, StatementRefused
from rho_domain.permissions import DatabaseMode
from rho_domain.ports.database import Database

DB = "rho_pg_read_runs"
ROLE = "rho_rls_reader"
SETUP = [
    f"DROP ROLE IF EXISTS {ROLE}",
    f"CREATE ROLE {ROLE} LOGIN PASSWORD 'pw'",
    "CREATE FUNCTION leak() RETURNS boolean LANGUAGE plpgsql SECURITY DEFINER AS "
    "$$ BEGIN RAISE EXCEPTION 'leaked %', pg_read_file('PG_VERSION'); END $$",
    "CREATE TABLE notes (owner text)",
    "CREATE TABLE plain_rls (owner text)",
    "CREATE TABLE later (owner text)",
    "INSERT INTO notes VALUES ('a')",
    f"INSERT INTO plain_rls VALUES ('{ROLE}'), ('other')",
    "INSERT INTO later VALUES ('b')",
    "ALTER TABLE notes ENABLE ROW LEVEL SECURITY",
    "ALTER TABLE plain_rls ENABLE ROW LEVEL SECURITY",
    "ALTER TABLE later ENABLE ROW LEVEL SECURITY",
    "CREATE POLICY by_file ON notes FOR SELECT USING (leak())",
    "CREATE POLICY mine ON plain_rls USING (owner = current_user)",
    "CREATE POLICY all_rows ON later USING (true)",
    "CREATE VIEW over_notes WITH (security_invoker = true) AS SELECT owner FROM notes",
    f"GRANT SELECT ON notes, plain_rls, later, over_notes TO {ROLE}",
    # a view reads its tables as its owner: the policies apply to ROLE even for a superuser
    "CREATE VIEW owned_view AS SELECT owner FROM notes",
    f"ALTER VIEW owned_view OWNER TO {ROLE}",
    # a file_fdw table below a parent (inheritance) and below a partitioned table
    "CREATE EXTENSION file_fdw",
    "CREATE SERVER files FOREIGN DATA WRAPPER file_fdw",
    "CREATE TABLE parent (line text)",
    "CREATE FOREIGN TABLE kid () INHERITS (parent) SERVER files "
    "OPTIONS (program 'echo ran-by-inheritance')",
    "CREATE TABLE parted (line text) PARTITION BY LIST (line)",
    "CREATE FOREIGN TABLE part_kid PARTITION OF parted DEFAULT SERVER files "
    "OPTIONS (program 'echo ran-by-partition')",
    f"GRANT SELECT ON parent, kid, parted, part_kid TO {ROLE}",
    # column-less tables: a child attached later changes no pg_attribute or pg_class row
    "CREATE TABLE bare ()",
    "CREATE TABLE bare_kid () INHERITS (bare)",
    "CREATE FOREIGN TABLE bare_prog () SERVER files OPTIONS (program 'echo x')",
    f"GRANT SELECT ON bare, bare_kid, bare_prog TO {ROLE}",
    # postgres_fdw back into this database as the superuser, over a view reading a file
    "CREATE VIEW remote_file AS SELECT 'remote-' || pg_read_file('PG_VERSION') AS v",
    "CREATE EXTENSION postgres_fdw",
    "CREATE USER MAPPING FOR PUBLIC SERVER loop "
    "OPTIONS (user 'postgres', password_required 'false')",
    "CREATE FOREIGN TABLE remote (v text) SERVER loop OPTIONS (table_name 'remote_file')",
    "CREATE TABLE fdw_parent (v text)",
    "CREATE FOREIGN TABLE fdw_kid () INHERITS (fdw_parent) SERVER loop "
    "OPTIONS (table_name 'remote_file')",
    f"GRANT SELECT ON remote, fdw_parent, fdw_kid TO {ROLE}",
]
# (statement, what the refusal says, what the server gives without the check)
ATTACKS = [
    (
        "SELECT * FROM notes",
        "the row security policy of notes runs SELECT public.leak()",
        "leaked 1",
    ),
    ("SELECT * FROM over_notes", "the row security policy of notes runs", "leaked 1"),
    ("SELECT * FROM parent", "parent reads its child or partition kid", "ran-by-inheritance"),
    ("TABLE parted", "parted reads its child or partition part_kid", "ran-by-partition"),
    (
        "SELECT * FROM remote",
        "the foreign table remote reads through the foreign server loop",
        "remote-1",
    ),
    ("TABLE fdw_parent", "fdw_parent reads its child or partition fdw_kid", "remote-1"),
]


@pytest.fixture(scope="module")  # one database for the file
def reader(postgres_server: Server) -> Iterator[Server]:
    """``postgres_server``'s database of this file, logged in as a role RLS applies to."""
    config = postgres_server.config
    loop = (  # the foreign server before its user mapping: it names this port
        "CREATE SERVER loop FOREIGN DATA WRAPPER postgres_fdw OPTIONS "
        f"(host '{config.host}', port '{config.port}', dbname '{DB}')"
    )
    setup = [
        step for sql in SETUP for step in ((loop, sql) if "CREATE USER MAPPING" in sql else (sql,))
    ]
    with own_pg_database(postgres_server, DB, setup, roles=(ROLE,)) as server:
        yield attrs.evolve(server, config=attrs.evolve(server.config, user=ROLE))


def _db(server: Server, *, check: bool = True) -> Database:
    cls = ADAPTERS["postgres"]
    return cls(
        "t", server.config, mode=DatabaseMode.READONLY, password="pw", check_statements=check
    )


async def test_a_policy_or_a_child_that_runs_code_is_refused_where_the_table_is_named(
    reader: Server,
) -> None:
    import psycopg

    db = _db(reader)
    try:
        for sql, refusal, _ in ATTACKS:
            with pytest.raises(StatementRefused) as info:
                await db.query(sql, max_rows=5, timeout=5)
            assert info.value.by == "check", (sql, info.value)
            assert refusal in str(info.value), (sql, info.value)
        # a policy over allowlisted functions reads, filtered as the server filters it
        rows = (await db.query("SELECT owner FROM plain_rls", max_rows=5, timeout=5)).rows
        assert rows == ((ROLE,),)
        assert (await db.query("TABLE later", max_rows=5, timeout=5)).rows == (("b",),)
        # a policy made while this connection is open is judged by the next statement
        with psycopg.connect(
            host=reader.config.host, port=reader.config.port, user="postgres", dbname=DB
        ) as conn:
            conn.execute("CREATE POLICY by_file_too ON later USING (leak())")
        with pytest.raises(StatementRefused, match="the row security policy of later runs"):
            await db.query("TABLE later", max_rows=5, timeout=5)
        # and a child attached to a column-less parent (its one new row is pg_inherits')
        with psycopg.connect(
            host=reader.config.host, port=reader.config.port, user="postgres", dbname=DB
        ) as conn:
            conn.execute("ALTER FOREIGN TABLE bare_prog INHERIT bare")
        with pytest.raises(StatementRefused, match="bare reads its child or partition bare_p"):
            await db.query("SELECT count(*) FROM bare", max_rows=5, timeout=5)
    finally:
        await db.aclose()


async def test_without_the_check_the_policies_and_children_run(reader: Server) -> None:
    """The targets are real: the read-only transaction alone runs the policy's function
    (the server file's text in its error) and the children's programs."""
    db = _db(reader, check=False)
    try:
        for sql, _, shown in ATTACKS:
            try:
                said = repr((await db.query(sql, max_rows=5, timeout=5)).rows)
            except DatabaseError as exc:
                said = str(exc)
            assert shown in said, (sql, said[:300])
    finally:
        await db.aclose()


async def test_a_superuser_reading_a_view_another_role_owns_is_refused_its_policies(
    reader: Server,
) -> None:
    """Policies that do not apply to the login still run through a view another role owns
    (the view reads as its owner): a superuser's ``SELECT * FROM owned_view`` ran notes'
    policy, the server file's text in its error, when only the login's policies were read."""
    superuser = attrs.evolve(reader, config=attrs.evolve(reader.config, user="postgres"))
    for check in (True, False):
        db = _db(superuser, check=check)
        try:
            if check:
                with pytest.raises(StatementRefused) as info:
                    await db.query("SELECT * FROM owned_view", max_rows=5, timeout=5)
                assert "the row security policy of notes runs" in str(info.value)
            else:
                with pytest.raises(DatabaseError, match="leaked 1"):
                    await db.query("SELECT * FROM owned_view", max_rows=5, timeout=5)
        finally:
            await db.aclose()
