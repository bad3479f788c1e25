"""PostgreSQL calls user functions a statement neither writes nor names by type or operator.

redsql15 held user operators, casts and domain CHECKs to the allowlist; two ways past it
remained, each reading a server file from inside the read-only transaction:

- an operator class: ``ORDER BY t``, ``GROUP BY t``, ``UNION``, a window's ``PARTITION BY t``,
  ``greatest(t, t)`` call the btree comparison function of ``t``'s type (its default
  operator class's ``FUNCTION 1``), no operator or type in the text.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from db_support import Server, adapter, checksum

from rho_domain.errors import DatabaseError, StatementRefused

READ = "BEGIN RAISE EXCEPTION 'read: %', pg_catalog.pg_read_file({path}); END"
ORDERED = [  # the type's comparison reads the file its values name
    "CREATE TYPE public.rho_key AS (v varchar)",
    "CREATE FUNCTION public.rho_key_cmp(a public.rho_key, b public.rho_key) RETURNS int "
    "LANGUAGE plpgsql AS $$ " + READ.format(path="(a).v") + " $$",
    "CREATE FUNCTION public.rho_key_lt(a public.rho_key, b public.rho_key) RETURNS boolean "
    "LANGUAGE sql AS $$ SELECT (a).v < (b).v $$",
    "CREATE FUNCTION public.rho_key_eq(a public.rho_key, b public.rho_key) RETURNS boolean "
    "LANGUAGE sql AS $$ SELECT (a).v = (b).v $$",
    "CREATE OPERATOR public.< (LEFTARG = public.rho_key, RIGHTARG = public.rho_key, "
    "FUNCTION = public.rho_key_lt)",
    "CREATE OPERATOR public.= (LEFTARG = public.rho_key, RIGHTARG = public.rho_key, "
    "FUNCTION = public.rho_key_eq)",
    "CREATE OPERATOR CLASS public.rho_key_ops DEFAULT FOR TYPE public.rho_key USING btree AS "
    "OPERATOR 1 public.<, OPERATOR 3 public.=, "
    "FUNCTION 1 public.rho_key_cmp(public.rho_key, public.rho_key)",
    "CREATE TABLE public.rho_keys (id smallint, k public.rho_key)",
]
DROP_ORDERED = [
    "DROP TABLE IF EXISTS public.rho_keys",
    "DROP TYPE IF EXISTS public.rho_key CASCADE",
]
SORTS = [
    "SELECT k FROM rho_keys ORDER BY k",
    "SELECT k FROM rho_keys ORDER BY 1",
    "SELECT k FROM rho_keys GROUP BY k",
    "SELECT k FROM rho_keys UNION SELECT k FROM rho_keys",
    "SELECT k FROM rho_keys INTERSECT SELECT k FROM rho_keys",
    "SELECT rank() OVER (PARTITION BY k) FROM rho_keys",
    "SELECT array_agg(k ORDER BY k) FROM rho_keys",
    "SELECT greatest(k, k) FROM rho_keys",
]


def _run(server: Server, sqls: list[str]) -> None:
    with server.admin() as conn:
        conn.autocommit = True
        for sql in sqls:
            conn.execute(sql)


@pytest.fixture(scope="module")
def secret(postgres_server: Server) -> Iterator[Path]:
    path = postgres_server.workdir / "unwritten-calls-secret.txt"
    path.write_text("hunter2 swordfish\n")
    path.chmod(0o644)
    yield path
    path.unlink()


@pytest.fixture
def ordered(postgres_server: Server, secret: Path) -> Iterator[Server]:
    """A type whose operator class compares by reading the file its values name."""
    _run(postgres_server, DROP_ORDERED + ORDERED)
    with postgres_server.admin() as conn:
        conn.autocommit = True
        conn.execute(
            "INSERT INTO public.rho_keys VALUES (1, ROW(%s)), (2, ROW(%s))", (str(secret),) * 2
        )
    yield postgres_server
    _run(postgres_server, DROP_ORDERED)


async def _shown(server: Server, sql: str) -> str:
    db = adapter(server, check=False)
    try:
        return repr((await db.query(sql, max_rows=10, timeout=5)).rows)
    except DatabaseError as exc:  # the functions fail, saying what they read
        return str(exc)
    finally:
        await db.aclose()


async def _refusal(server: Server, sql: str) -> str:
    before = checksum(server)
    db = adapter(server)
    try:
        with pytest.raises(StatementRefused) as info:
            await db.query(sql, max_rows=10, timeout=5)
    finally:
        await db.aclose()
    assert info.value.by == "check", info.value
    assert checksum(server) == before
    return str(info.value)


@pytest.mark.parametrize("sql", SORTS)
@pytest.mark.asyncio
async def test_a_user_operator_class_is_held_to_the_allowlist(ordered: Server, sql: str) -> None:
    """Each spelling reads the file with the check off; with it on, every statement on the
    database is refused while the class's comparison is off the list (as an implicit cast)."""
    assert "hunter2" in await _shown(ordered, sql)
    reason = await _refusal(ordered, sql)
    assert "a user operator class calls public.rho_key_cmp()" in reason, reason
    assert "options.allowed_functions" in reason
    assert "a user operator class" in await _refusal(ordered, "SELECT 1")
