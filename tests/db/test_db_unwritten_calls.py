"""PostgreSQL calls user functions a statement neither writes nor names by type or operator.

redsql15 held user operators, casts and domain CHECKs to the allowlist; two ways past it
remained, each reading a server file from inside the read-only transaction:

- an operator class: ``ORDER BY t``, ``GROUP BY t``, ``UNION``, a window's ``PARTITION BY t``,
  ``greatest(t, t)`` call the btree comparison function of ``t``'s type (its default
  operator class's ``FUNCTION 1``), no operator or type in the text;
- a user function by an allowlisted name: ``lower(relname)`` calls ``public.lower(name)``,
  an exact match the server prefers to the built-in ``lower(text)`` (pg_catalog first in the
  search path decides only between equal signatures), ``max(relname)`` a user aggregate
  ``public.max(name)``, and field notation ``c.f`` calls a user's ``f(pg_class)``;
- a cast to json: ``to_json(m)``, ``json_agg(m)``, ``row_to_json(x)`` call a user's explicit
  cast of ``m``'s type to json (json.c looks one up for a type made after initdb);
- a function made or renamed while the adapter's connection is open.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from db_support import Server, adapter, checksum

from rho_adapters.db import ADAPTERS
from rho_domain.errors import DatabaseError, StatementRefused
from rho_domain.sql import CatalogCalls, classify

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

# {secret} is put in when the fixture creates them: lower(relname) names no path
SHADOWS = [
    "CREATE FUNCTION public.lower(n name) RETURNS text LANGUAGE plpgsql AS $$ "
    + READ.format(path="'{secret}'")
    + " $$",
    "CREATE FUNCTION public.rho_peek(c pg_catalog.pg_class) RETURNS text LANGUAGE plpgsql AS $$ "
    + READ.format(path="'{secret}'")
    + " $$",
    "CREATE FUNCTION public.rho_max_step(s name, n name) RETURNS name LANGUAGE plpgsql AS $$ "
    + READ.format(path="'{secret}'")
    + " $$",
    "CREATE AGGREGATE public.max(name) (SFUNC = public.rho_max_step, STYPE = name)",
]
DROP_SHADOWS = [
    "DROP AGGREGATE IF EXISTS public.max(name)",
    "DROP FUNCTION IF EXISTS public.lower(name), public.rho_peek(pg_catalog.pg_class), "
    "public.rho_max_step(name, name)",
]
# (statement, the name the refusal gives)
SHADOWED = [
    ("SELECT lower(relname) FROM pg_class LIMIT 1", "lower"),
    ('SELECT "lower" (relname) FROM pg_class LIMIT 1', "lower"),
    ("SELECT max(relname) FROM pg_class", "max"),
    ("SELECT c.rho_peek FROM pg_class c LIMIT 1", "rho_peek"),
    ("SELECT (c).RHO_PEEK FROM pg_class c LIMIT 1", "rho_peek"),
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


@pytest.fixture
def shadows(postgres_server: Server, secret: Path) -> Iterator[Server]:
    _run(postgres_server, DROP_SHADOWS + [s.replace("{secret}", str(secret)) for s in SHADOWS])
    yield postgres_server
    _run(postgres_server, DROP_SHADOWS)


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


@pytest.mark.parametrize(("sql", "name"), SHADOWED)
@pytest.mark.asyncio
async def test_a_user_function_by_an_allowlisted_name_is_held_to_the_allowlist(
    shadows: Server, sql: str, name: str
) -> None:
    assert "hunter2" in await _shown(shadows, sql)
    reason = await _refusal(shadows, sql)
    assert f"{name} calls public." in reason, reason
    assert "options.allowed_functions" in reason


@pytest.mark.asyncio
async def test_other_calls_run_beside_a_user_function_and_an_allowed_one_runs(
    shadows: Server,
) -> None:
    """Only the names a user function bears are held: upper(relname) runs; and an
    administrator who vets public.lower lets lower(relname) reach it."""
    db = adapter(shadows)
    try:
        result = await db.query(
            "SELECT upper(relname), c.relname FROM pg_class c WHERE relname = 'pg_class'",
            max_rows=1,
            timeout=5,
        )
    finally:
        await db.aclose()
    assert result.rows == (("PG_CLASS", "pg_class"),)
    config = shadows.config
    config = type(config)(
        engine=config.engine,
        host=config.host,
        port=config.port,
        user=config.user,
        database=config.database,
        options={"allowed_functions": ["public.lower"]},
    )
    vetted = ADAPTERS["postgres"]("t", config)
    try:
        with pytest.raises(DatabaseError, match="hunter2"):  # it ran: the vetting is real
            await vetted.query("SELECT lower(relname) FROM pg_class LIMIT 1", max_rows=1, timeout=5)
    finally:
        await vetted.aclose()


def test_the_check_reads_a_user_functions_name_where_it_is_called_or_a_field() -> None:
    calls = CatalogCalls(
        functions={"lower": frozenset({"public.lower"}), "f": frozenset({"public.f"})},
        fields={"f": frozenset({"public.f"})},  # lower takes two arguments: no field
    )
    for sql in ("SELECT LOWER(x) FROM t", "SELECT t.f FROM t", 'SELECT (t)."f" FROM t'):
        assert not classify(sql, "postgres", catalog_calls=calls).read_only, sql
    fine = ("SELECT f, lower, t.lower FROM t", "SELECT f.x FROM t f", "SELECT upper('f(x)')")
    for sql in fine:
        assert classify(sql, "postgres", catalog_calls=calls).read_only, sql


@pytest.mark.parametrize("made", ["created", "renamed"])
@pytest.mark.asyncio
async def test_a_function_made_while_the_connection_is_open_is_judged(
    postgres_server: Server, secret: Path, made: str
) -> None:
    """The adapter keeps its connection, and read the catalog when it opened it: a function
    made afterwards (by an administrator, or any role that may create in a schema) was not
    seen for the session's life. Now the catalog is read again when it changed."""
    body = READ.format(path=f"'{secret}'")
    name = "lower" if made == "created" else "rho_later"
    create = f"CREATE FUNCTION public.{name}(n name) RETURNS text LANGUAGE plpgsql AS $$ {body} $$"
    _run(postgres_server, ["DROP FUNCTION IF EXISTS public.lower(name), public.rho_later(name)"])
    if made == "renamed":
        _run(postgres_server, [create])
    db = adapter(postgres_server)
    try:
        await db.query("SELECT lower(relname) FROM pg_class LIMIT 1", max_rows=1, timeout=5)
        if made == "created":
            _run(postgres_server, [create])
        else:
            _run(postgres_server, ["ALTER FUNCTION public.rho_later(name) RENAME TO lower"])
        with pytest.raises(StatementRefused, match=r"lower calls public\.lower\(\)"):
            await db.query("SELECT lower(relname) FROM pg_class LIMIT 1", max_rows=1, timeout=5)
    finally:
        await db.aclose()
        _run(
            postgres_server, ["DROP FUNCTION IF EXISTS public.lower(name), public.rho_later(name)"]
        )


JSON_CAST = [  # json.c looks up a cast to json for a user type that is not composite
    "CREATE TYPE public.rho_mood AS ENUM ('calm')",
    "CREATE FUNCTION public.rho_mood_json(m public.rho_mood) RETURNS json LANGUAGE plpgsql "
    "AS $$ " + READ.format(path="'{secret}'") + " $$",
    "CREATE CAST (public.rho_mood AS json) WITH FUNCTION public.rho_mood_json(public.rho_mood)",
    "CREATE TABLE public.rho_moods (id smallint, m public.rho_mood)",
    "INSERT INTO public.rho_moods VALUES (1, 'calm')",
]
DROP_JSON_CAST = [
    "DROP TABLE IF EXISTS public.rho_moods",
    "DROP TYPE IF EXISTS public.rho_mood CASCADE",
]
JSON_BUILDERS = [
    "SELECT to_json(m) FROM rho_moods",
    "SELECT to_jsonb(m) FROM rho_moods",
    "SELECT json_agg(m) FROM rho_moods",
    "SELECT row_to_json(x) FROM rho_moods x",
    "SELECT JSON_BUILD_OBJECT('a', m) FROM rho_moods",
    "SELECT jsonb_agg(x) FROM rho_moods x",
    "SELECT array_to_json(array_agg(m)) FROM rho_moods",
    "SELECT json_object_agg(id, m) FROM rho_moods",
]


@pytest.fixture
def json_cast(postgres_server: Server, secret: Path) -> Iterator[Server]:
    _run(postgres_server, DROP_JSON_CAST + [s.replace("{secret}", str(secret)) for s in JSON_CAST])
    yield postgres_server
    _run(postgres_server, DROP_JSON_CAST)


@pytest.mark.parametrize("sql", JSON_BUILDERS)
@pytest.mark.asyncio
async def test_a_json_builder_calls_a_user_cast_to_json_named_by_no_type(
    json_cast: Server, sql: str
) -> None:
    """to_json(m) runs the cast (rho_mood AS json), an explicit one, with neither type
    written: the check reads a word naming JSON as naming json and jsonb."""
    assert "hunter2" in await _shown(json_cast, sql)
    reason = await _refusal(json_cast, sql)
    assert "the type json calls public.rho_mood_json()" in reason, reason


@pytest.mark.asyncio
async def test_a_field_made_a_domain_while_the_connection_is_open_is_judged(
    postgres_server: Server, secret: Path
) -> None:
    """ALTER TYPE ... ALTER ATTRIBUTE ... TYPE writes pg_attribute only: ROW(path)::rho_box
    ran the domain's CHECK (reading the file) once the field was made one mid-session."""
    drop = ["DROP TYPE IF EXISTS public.rho_box", "DROP DOMAIN IF EXISTS public.rho_read"]
    _run(
        postgres_server,
        [
            *drop,
            "CREATE DOMAIN public.rho_read AS text CHECK (pg_catalog.pg_read_file(VALUE)::int > 0)",
            "CREATE TYPE public.rho_box AS (v text)",
        ],
    )
    sql = f"SELECT ROW('{secret}')::rho_box"
    db = adapter(postgres_server)
    try:
        await db.query(sql, max_rows=1, timeout=5)  # a text field: nothing runs
        _run(postgres_server, ["ALTER TYPE public.rho_box ALTER ATTRIBUTE v TYPE public.rho_read"])
        assert "hunter2" in await _shown(postgres_server, sql)  # the target is real
        with pytest.raises(StatementRefused, match="the type rho_box runs CHECK"):
            await db.query(sql, max_rows=1, timeout=5)
    finally:
        await db.aclose()
        _run(postgres_server, drop)


NEGATED = [
    "CREATE FUNCTION public.rho_same(a text, b text) RETURNS boolean LANGUAGE plpgsql "
    "AS $$ BEGIN RETURN a = b; END $$",  # plpgsql: not inlined, so NOT (a === b) negates
    "CREATE FUNCTION public.rho_differ(a text, b text) RETURNS boolean LANGUAGE plpgsql "
    "AS $$ " + READ.format(path="b") + " $$",
    "CREATE OPERATOR public.=== (LEFTARG = text, RIGHTARG = text, FUNCTION = public.rho_same, "
    "NEGATOR = !==, COMMUTATOR = ===)",
    "CREATE OPERATOR public.!== (LEFTARG = text, RIGHTARG = text, FUNCTION = public.rho_differ, "
    "NEGATOR = ===)",
]
DROP_NEGATED = [
    "DROP OPERATOR IF EXISTS public.=== (text, text)",
    "DROP OPERATOR IF EXISTS public.!== (text, text)",
    "DROP FUNCTION IF EXISTS public.rho_same, public.rho_differ",
]


@pytest.mark.asyncio
async def test_an_operators_negator_is_judged_with_it(
    postgres_server: Server, secret: Path
) -> None:
    """An administrator vets ===, whose function compares; the planner runs NOT (a === b)
    as a !== b, its negator, whose function reads the file: the check judged === alone."""
    _run(postgres_server, DROP_NEGATED + NEGATED)
    config = postgres_server.config
    config = type(config)(
        engine=config.engine,
        host=config.host,
        port=config.port,
        user=config.user,
        database=config.database,
        options={"allowed_functions": ["public.rho_same"]},
    )
    sql = f"SELECT NOT ('x' === '{secret}')"
    db = ADAPTERS["postgres"]("t", config)
    try:
        assert "hunter2" in await _shown(postgres_server, sql)  # the negator runs
        with pytest.raises(StatementRefused, match=r"the operator === calls public\.rho_differ"):
            await db.query(sql, max_rows=1, timeout=5)
    finally:
        await db.aclose()
        _run(postgres_server, DROP_NEGATED)
