"""``EXPLAIN (ANALYZE, SERIALIZE 'binary')`` ran an administrator's PL/pgSQL send function.

PostgreSQL 17 added ``EXPLAIN``'s ``SERIALIZE`` option: ``SERIALIZE BINARY`` converts every
row as a binary result would, calling each column type's send function, which may be
PL/pgSQL (``ALTER TYPE t SET (SEND = f)``). The check refused the word ``BINARY`` but let
any string through as an option's value, and the server reads ``'binary'`` (or
``$$binary$$``, ``E'binary'``) as the word: on PostgreSQL 18.6, with the check on, the read
ran ``probe_ran``. Now only ``FORMAT``'s value may be a string.

The attack needs PostgreSQL 17+; the suite's server is the machine's (15 here). Put a newer
server's ``bin`` first on ``PATH`` to run it (docs/testing.md, "Newer PostgreSQL servers").
"""

from __future__ import annotations

import pytest
from db_support import Server, adapter, own_pg_database

from rho_domain.errors import StatementRefused

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


async def test_explain_serialize_never_runs_a_send_function(postgres_server: Server) -> None:
    admin = postgres_server.admin()
    version = admin.info.server_version
    admin.close()
    if version < 170000:
        pytest.skip("EXPLAIN's SERIALIZE needs PostgreSQL 17+ (docs/testing.md)")
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
