"""What PostgreSQL 17 added ran an administrator's code, or wrote, under the readonly profile.

``EXPLAIN (ANALYZE, SERIALIZE 'binary')`` ran an administrator's PL/pgSQL send function.
PostgreSQL 17 added ``EXPLAIN``'s ``SERIALIZE`` option: ``SERIALIZE BINARY`` converts every
row as a binary result would, calling each column type's send function, which may be
PL/pgSQL (``ALTER TYPE t SET (SEND = f)``). The check refused the word ``BINARY`` but let
any string through as an option's value, and the server reads ``'binary'`` (or
``$$binary$$``, ``E'binary'``) as the word: on PostgreSQL 18.6, with the check on, the read
ran ``probe_ran``. Now only ``FORMAT``'s value may be a string.

A login event trigger (17+) runs an administrator's function as the connecting login at every
connection, before the adapter's first ``BEGIN TRANSACTION READ ONLY``: one inserting into a
table wrote a row at each of the agent's connections. Now the session starts with
``default_transaction_read_only`` on, so such a trigger fails the connection, with a hint
that says why; one that skips read-only sessions lets it in.

The attacks need PostgreSQL 17+; the suite's server is the machine's (15 here). Put a newer
server's ``bin`` first on ``PATH`` to run it (docs/testing.md, "Newer PostgreSQL servers").
"""

from __future__ import annotations

import pytest
from db_support import Server, adapter, own_pg_database

from rho_adapters.db.factory import open_databases
from rho_adapters.db.postgres import PostgresDatabase
from rho_domain.config import DatabaseConfig
from rho_domain.errors import DatabaseError, StatementRefused
from rho_domain.permissions import DatabaseMode
from rho_domain.sql import CatalogCalls, classify
from rho_domain.sql.functions import POSTGRES_GRAMMAR, POSTGRES_GRAMMAR_16, POSTGRES_GRAMMAR_17

_SETUP = [
    "CREATE TABLE arm (armed bool)",
    "INSERT INTO arm VALUES (false)",
    "CREATE FUNCTION probe_ran(int) RETURNS int IMMUTABLE LANGUAGE plpgsql AS $$BEGIN "
    "IF (SELECT armed FROM arm) THEN RAISE EXCEPTION 'probe_ran for %', current_user; END IF; "
    "RETURN $1; END$$",
    "CREATE TYPE io_int",
    "CREATE FUNCTION io_in(cstring) RETURNS io_int IMMUTABLE STRICT LANGUAGE internal AS 'int4in'",
    "CREATE FUNCTION io_out(io_int) RETURNS cstring IMMUTABLE STRICT LANGUAGE internal "
    "AS 'int4out'",
    "CREATE TYPE io_int (INPUT = io_in, OUTPUT = io_out, LIKE = int4)",
    "CREATE FUNCTION io_send(io_int) RETURNS bytea IMMUTABLE STRICT LANGUAGE plpgsql AS "
    "$$BEGIN PERFORM probe_ran(1); RETURN '\\x00'::bytea; END$$",
    "ALTER TYPE io_int SET (SEND = io_send)",
    "CREATE TABLE sent (v io_int)",
    "INSERT INTO sent VALUES ('1')",
    "UPDATE arm SET armed = true",
]
SENDS = [
    "EXPLAIN (ANALYZE, SERIALIZE 'binary') SELECT * FROM sent",
    "EXPLAIN (ANALYZE, SERIALIZE $$binary$$) SELECT * FROM sent",
    "EXPLAIN (ANALYZE, FORMAT 'json', SERIALIZE E'binary') SELECT * FROM sent",
]
READS = [
    "EXPLAIN (ANALYZE, SERIALIZE TEXT) SELECT * FROM sent",  # the output function, as a read
    "EXPLAIN (FORMAT 'json') SELECT * FROM sent",
]


def _needs_17(server: Server, what: str) -> None:
    admin = server.admin()
    version = admin.info.server_version
    admin.close()
    if version < 170000:
        pytest.skip(f"{what} needs PostgreSQL 17+ (docs/testing.md, Newer PostgreSQL servers)")


async def test_explain_serialize_never_runs_a_send_function(postgres_server: Server) -> None:
    _needs_17(postgres_server, "EXPLAIN's SERIALIZE")
    with own_pg_database(postgres_server, "rho_serialize", _SETUP) as server:
        unchecked, checked = adapter(server, check=False), adapter(server)
        try:
            for sql in SENDS:  # the attack reaches: the send function ran
                with pytest.raises(Exception, match="probe_ran for postgres"):
                    await unchecked.query(sql, max_rows=1, timeout=10)
                with pytest.raises(StatementRefused, match="only FORMAT's value may be a string"):
                    await checked.query(sql, max_rows=1, timeout=10)
            for sql in READS:
                await checked.query(sql, max_rows=1, timeout=10)
        finally:
            await unchecked.aclose()
            await checked.aclose()


_LOGINS = [
    "CREATE TABLE logins (who text)",
    "CREATE FUNCTION on_login() RETURNS event_trigger LANGUAGE plpgsql AS $$BEGIN "
    "IF current_setting('application_name') = 'rho-agent' THEN "
    "INSERT INTO public.logins VALUES (current_user); END IF; END$$",
    "CREATE EVENT TRIGGER log_in ON login EXECUTE FUNCTION on_login()",
]


async def test_a_login_trigger_writes_nothing_for_the_agent(postgres_server: Server) -> None:
    _needs_17(postgres_server, "a login event trigger")
    import psycopg  # here, not at collection (tests/test_collection_costs.py)

    with own_pg_database(postgres_server, "rho_login", _LOGINS) as server:
        c = server.config
        admin = psycopg.connect(
            host=c.host, port=c.port, user=c.user, dbname=c.database, autocommit=True
        )
        try:
            db = adapter(server, check=False)  # the session alone holds, the check off
            with pytest.raises(DatabaseError, match="let the trigger skip read-only sessions"):
                await db.query("SELECT 1", max_rows=1, timeout=10)
            await db.aclose()
            written = admin.execute("SELECT count(*) FROM logins").fetchone()
            assert written == (0,)
            admin.execute(  # as the hint says: the trigger skips a read-only session
                "CREATE OR REPLACE FUNCTION on_login() RETURNS event_trigger LANGUAGE plpgsql "
                "AS $$BEGIN IF current_setting('transaction_read_only') = 'off' THEN "
                "INSERT INTO public.logins VALUES (current_user); END IF; END$$"
            )
            db = adapter(server)
            assert (await db.query("SELECT 1", max_rows=1, timeout=10)).rows == ((1,),)
            await db.aclose()
        finally:
            admin.close()


def test_the_read_only_default_keeps_the_dsns_options() -> None:
    """A dsn's own ``options`` (or ``$PGOPTIONS``'s, which a given one replaces) stay, with
    the read-only default and the emptied local_preload_libraries after them."""
    config = DatabaseConfig(engine="postgres", dsn="host=h options='-c work_mem=8MB'")
    said = PostgresDatabase("t", config)._read_only_options(config.dsn or "")
    ours = "-c default_transaction_read_only=on -c local_preload_libraries="
    assert said == f"-c work_mem=8MB {ours}"
    # PGOPTIONS comes from the environment the wiring gives (never the process's, read
    # below the entry layer), and a dsn's own options replace it, as libpq's do
    bare = DatabaseConfig(engine="postgres", dsn="host=h")
    environ = {"PGOPTIONS": "-c work_mem=4MB"}
    (wired,) = open_databases({"t": bare}, mode=DatabaseMode.READONLY, environ=environ).values()
    assert isinstance(wired, PostgresDatabase)
    assert wired._read_only_options("host=h") == f"-c work_mem=4MB {ours}"
    assert wired._read_only_options(config.dsn or "").startswith("-c work_mem=8MB ")


def test_the_sql_json_words_of_16_and_17_read_and_their_casts_are_judged() -> None:
    """``JSON_ARRAYAGG`` and ``JSON_OBJECTAGG`` (16) were refused as functions off the list,
    where ``json_agg`` reads; a user type's cast to json, which they call as ``json_agg``
    does, stays judged."""
    grammar = POSTGRES_GRAMMAR | POSTGRES_GRAMMAR_16 | POSTGRES_GRAMMAR_17
    for name in sorted(POSTGRES_GRAMMAR_16 | POSTGRES_GRAMMAR_17):
        verdict = classify(f"SELECT {name}(1)", "postgres", available_functions=grammar)
        assert verdict.read_only, (name, verdict.reason)
    casts = CatalogCalls(types={"json": frozenset({"public.mood_json"})})
    for sql in ("SELECT JSON_ARRAYAGG(m) FROM t", "SELECT JSON_OBJECTAGG('k': m) FROM t"):
        verdict = classify(sql, "postgres", available_functions=grammar, catalog_calls=casts)
        assert verdict.reason.startswith("the type json calls public.mood_json()"), sql
