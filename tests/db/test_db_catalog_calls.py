"""PostgreSQL calls functions no call in the text names: user operators, casts, domains.

The check refused ``public.leak(x)`` (a user function can write or read files) but let
``'x' ### path`` run it through a user operator, ``path::text::rho_wrap`` through a user
cast, and ``path::rho_dom`` through a domain's CHECK, each reading a server file from inside
the read-only transaction (the role's EXECUTE, granted to PUBLIC by default, was the only
other wall). ``OPERATOR(public.###)`` was refused; the plain spelling was not. Now the
adapter reads from the server's catalog which operator and type names run a function outside
the allowlist, and the check refuses a statement naming one, as it refuses the call.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from db_support import Server, adapter, checksum

from rho_adapters.db import ADAPTERS
from rho_domain.errors import DatabaseError, StatementRefused
from rho_domain.ports.database import Database
from rho_domain.sql import CatalogCalls, classify

# Created by an administrator, not by the agent: the agent's role can only read.
SETUP = [
    "CREATE FUNCTION public.rho_leak(a text, b text) RETURNS text LANGUAGE sql "
    "AS $$ SELECT pg_catalog.pg_read_file(b) $$",
    "CREATE FUNCTION public.rho_leak1(b text) RETURNS text LANGUAGE sql "
    "AS $$ SELECT pg_catalog.pg_read_file(b) $$",
    "CREATE OPERATOR public.### (LEFTARG = text, RIGHTARG = text, FUNCTION = public.rho_leak)",
    "CREATE OPERATOR public.@-@ (RIGHTARG = text, FUNCTION = public.rho_leak1)",
    # a user operator over a built-in off the allowlist: no user function at all
    "CREATE OPERATOR public.%%% (RIGHTARG = text, FUNCTION = pg_catalog.pg_read_file)",
    "CREATE TYPE public.rho_wrap AS (v text)",
    "CREATE FUNCTION public.rho_to_wrap(b text) RETURNS public.rho_wrap LANGUAGE sql "
    "AS $$ SELECT ROW(pg_catalog.pg_read_file(b))::public.rho_wrap $$",
    "CREATE CAST (text AS public.rho_wrap) WITH FUNCTION public.rho_to_wrap(text)",
    # a cast to a domain is the cast to its base type: no CHECK, no cast of its own
    "CREATE DOMAIN public.rho_wrapd AS public.rho_wrap",
    "CREATE DOMAIN public.rho_wrapdd AS public.rho_wrapd",
    # (the CHECKs say what they read in their error, so the test can see they ran)
    "CREATE FUNCTION public.rho_check(b text) RETURNS boolean LANGUAGE plpgsql "
    "AS $$ BEGIN RAISE EXCEPTION 'read: %', pg_catalog.pg_read_file(b); END $$",
    "CREATE DOMAIN public.rho_dom AS text CHECK (public.rho_check(VALUE))",
    "CREATE DOMAIN public.rho_dom2 AS text CHECK (pg_catalog.pg_read_file(VALUE)::int > 0)",
    # a domain over it, and a composite type with a field of it, run its CHECK too
    "CREATE DOMAIN public.rho_dom3 AS public.rho_dom2 CHECK (pg_catalog.length(VALUE) > 0)",
    "CREATE TYPE public.rho_pair AS (a int, b public.rho_dom2)",
    # ... and one with an array of it, inside another composite
    "CREATE TYPE public.rho_inner AS (b public.rho_dom2[])",
    "CREATE TYPE public.rho_outer AS (i public.rho_inner)",
    # harmless user code the check must still let through
    "CREATE DOMAIN public.rho_short AS text CHECK (pg_catalog.length(VALUE) < 100)",
    "CREATE FUNCTION public.rho_cat(a text, b text) RETURNS text LANGUAGE sql "
    "AS $$ SELECT a || b $$",
    "CREATE OPERATOR public.<+> (LEFTARG = text, RIGHTARG = text, FUNCTION = public.rho_cat)",
    # a type whose cast to text reads the file its value names (the cast: TAG_CAST)
    "CREATE TYPE public.rho_tag AS (v varchar)",  # no text field: see TAG_CAST
    "CREATE FUNCTION public.rho_tag_text(t public.rho_tag) RETURNS text LANGUAGE sql "
    "AS $$ SELECT pg_catalog.pg_read_file((t).v) $$",
    "CREATE TABLE public.rho_notes (id smallint, t public.rho_tag)",  # no int4: see below
    "CREATE FUNCTION public.rho_tag_bool(t public.rho_tag) RETURNS boolean LANGUAGE plpgsql "
    "AS $$ BEGIN RAISE EXCEPTION 'read: %', pg_catalog.pg_read_file((t).v); END $$",
    # explicit casts to built-in types the text may name by another spelling
    "CREATE FUNCTION public.rho_tag_int(t public.rho_tag) RETURNS integer LANGUAGE plpgsql "
    "AS $$ BEGIN RAISE EXCEPTION 'read: %', pg_catalog.pg_read_file((t).v); END $$",
    "CREATE CAST (public.rho_tag AS integer) WITH FUNCTION public.rho_tag_int(public.rho_tag)",
    "CREATE FUNCTION public.rho_tag_ints(t public.rho_tag) RETURNS bigint[] LANGUAGE plpgsql "
    "AS $$ BEGIN RAISE EXCEPTION 'read: %', pg_catalog.pg_read_file((t).v); END $$",
    "CREATE CAST (public.rho_tag AS bigint[]) WITH FUNCTION public.rho_tag_ints(public.rho_tag)",
    "CREATE FUNCTION public.rho_tag_ts(t public.rho_tag) RETURNS timestamptz LANGUAGE plpgsql "
    "AS $$ BEGIN RAISE EXCEPTION 'read: %', pg_catalog.pg_read_file((t).v); END $$",
    "CREATE CAST (public.rho_tag AS timestamptz) WITH FUNCTION public.rho_tag_ts(public.rho_tag)",
    # a composite type with a field of a cast's target: ROW(t)::holder casts the field (so
    # every table with an integer column is refused while this cast is there: rho_notes
    # has none)
    "CREATE TYPE public.rho_holder AS (n integer)",
]
# Made only for the test that needs it: a user cast to text has every statement naming text,
# or a type or table holding a text field, refused (the cast may run wherever text is named,
# and ROW(...)::t casts each field), so the other tests' ::text would be.
TAG_CAST = "CREATE CAST (public.rho_tag AS text) WITH FUNCTION public.rho_tag_text(public.rho_tag)"
DROP_TAG_CAST = "DROP CAST IF EXISTS (public.rho_tag AS text)"
BOOL_CAST = (
    "CREATE CAST (public.rho_tag AS boolean) WITH FUNCTION public.rho_tag_bool(public.rho_tag) "
    "AS ASSIGNMENT"
)
DROP_BOOL_CAST = "DROP CAST IF EXISTS (public.rho_tag AS boolean)"
TEARDOWN = [
    DROP_TAG_CAST,
    DROP_BOOL_CAST,
    "DROP TABLE IF EXISTS public.rho_notes",
    "DROP TYPE IF EXISTS public.rho_tag CASCADE",
    "DROP OPERATOR IF EXISTS public.### (text, text)",
    "DROP OPERATOR IF EXISTS public.@-@ (NONE, text)",
    "DROP OPERATOR IF EXISTS public.%%% (NONE, text)",
    "DROP OPERATOR IF EXISTS public.<+> (text, text)",
    "DROP DOMAIN IF EXISTS public.rho_wrapdd, public.rho_wrapd",
    "DROP TYPE IF EXISTS public.rho_wrap CASCADE",
    "DROP TYPE IF EXISTS public.rho_outer, public.rho_inner, public.rho_pair",
    "DROP DOMAIN IF EXISTS public.rho_dom3, public.rho_dom, public.rho_dom2, public.rho_short",
    "DROP FUNCTION IF EXISTS public.rho_leak, public.rho_leak1, public.rho_check, public.rho_cat",
]

# (statement, the operator or type the refusal names)
ATTACKS = [
    ("SELECT 'x' ### '{secret}'", "###"),
    ("SELECT 'x'###'{secret}' AS a", "###"),
    ("SELECT @-@ '{secret}'", "@-@"),
    ("SELECT %%% '{secret}'", "%%%"),
    ("SELECT length(p), @-@ p FROM (VALUES ('{secret}')) v(p) WHERE length(p) > 0", "@-@"),
    ("SELECT ('{secret}'::text)::rho_wrap", "rho_wrap"),
    ("SELECT CAST('{secret}'::text AS \"rho_wrap\")", "rho_wrap"),
    ("SELECT CAST('{secret}'::text AS public.RHO_WRAP)", "rho_wrap"),
    ("SELECT ('{secret}'::text)::rho_wrapd", "rho_wrapd"),
    ("SELECT CAST('{secret}'::text AS rho_wrapdd)", "rho_wrapdd"),
    ("SELECT '{secret}'::rho_dom", "rho_dom"),
    ("SELECT CAST('{secret}' AS public.U&\"rho\\005fdom\")", "rho_dom"),
    ("SELECT '{secret}'::rho_dom2", "rho_dom2"),
    ("SELECT '{secret}'::rho_dom3", "rho_dom3"),
    ("SELECT ROW(1, '{secret}')::rho_pair", "rho_pair"),
    (
        "SELECT jsonb_populate_record(NULL::rho_outer, "
        "jsonb_build_object('i', jsonb_build_object('b', jsonb_build_array('{secret}'))))",
        "rho_outer",
    ),
]


@pytest.fixture(scope="module")
def user_code(request: pytest.FixtureRequest) -> Iterator[Server]:
    server: Server = request.getfixturevalue("postgres_server")
    with server.admin() as conn:
        conn.autocommit = True
        for sql in TEARDOWN + SETUP:
            conn.execute(sql)
    yield server
    with server.admin() as conn:
        conn.autocommit = True
        for sql in TEARDOWN:
            conn.execute(sql)


@pytest.fixture(scope="module")
def secret(user_code: Server) -> Iterator[Path]:
    """A file the server process can read: what a read-only agent must not get."""
    path = user_code.workdir / "catalog-calls-secret.txt"
    path.write_text("hunter2 swordfish\n")
    path.chmod(0o644)
    yield path
    path.unlink()


@pytest.fixture(scope="module")
def notes(user_code: Server, secret: Path) -> Server:
    """Rows whose tag names the secret: a cast of the tag to text would read it."""
    with user_code.admin() as conn:
        conn.autocommit = True
        conn.execute("DELETE FROM public.rho_notes")
        conn.execute(
            "INSERT INTO public.rho_notes VALUES (1, ROW(%s)), (2, NULL), (3, ROW(NULL))",
            (str(secret),),
        )
    return user_code


@pytest.fixture(scope="module")
def pg(user_code: Server) -> Iterator[Database]:
    db = adapter(user_code)
    yield db
    asyncio.run(db.aclose())


@pytest.mark.parametrize(("sql", "name"), ATTACKS)
@pytest.mark.asyncio(loop_scope="module")
async def test_user_code_run_by_an_operator_cast_or_domain_is_refused_by_the_check(
    user_code: Server, pg: Database, secret: Path, sql: str, name: str
) -> None:
    before = checksum(user_code)
    with pytest.raises(StatementRefused) as info:
        await pg.query(sql.format(secret=secret), max_rows=10, timeout=5)
    assert info.value.by == "check", info.value
    assert name in str(info.value)
    assert "options.allowed_functions" in str(info.value)
    assert checksum(user_code) == before


@pytest.mark.parametrize(("sql", "name"), ATTACKS)
@pytest.mark.asyncio(loop_scope="module")
async def test_without_the_check_each_attack_reads_the_server_file(
    user_code: Server, secret: Path, sql: str, name: str
) -> None:
    """The target is real: the read-only transaction alone lets the user code run."""
    db = adapter(user_code, check=False)
    try:
        shown = repr((await db.query(sql.format(secret=secret), max_rows=10, timeout=5)).rows)
    except DatabaseError as exc:  # the domains' CHECKs fail, saying what they read
        shown = str(exc)
    finally:
        await db.aclose()
    assert "hunter2" in shown, shown


@pytest.mark.asyncio(loop_scope="module")
async def test_built_in_operators_and_harmless_domains_still_run(user_code: Server) -> None:
    db = adapter(user_code)
    try:
        result = await db.query(
            "SELECT 1 + 2 * 3, 'a' || 'b', '{\"k\": 1}'::jsonb -> 'k', 'short'::rho_short, "
            "-1 < 2, 'abc' ~~ 'a%'",
            max_rows=1,
            timeout=5,
        )
    finally:
        await db.aclose()
    assert result.rows == ((7, "ab", "1", "short", True, True),)


@pytest.mark.asyncio(loop_scope="module")
async def test_an_operator_whose_function_is_allowed_runs(user_code: Server) -> None:
    cls = ADAPTERS["postgres"]
    config = user_code.config
    config = type(config)(
        engine=config.engine,
        host=config.host,
        port=config.port,
        user=config.user,
        database=config.database,
        options={"allowed_functions": ["public.rho_cat"]},
    )
    db = cls("t", config)
    try:
        result = await db.query("SELECT 'a' <+> 'b'", max_rows=1, timeout=5)
        with pytest.raises(StatementRefused, match="###"):
            await db.query("SELECT 'a' ### 'b'", max_rows=1, timeout=5)
    finally:
        await db.aclose()
    assert result.rows == (("ab",),)


def test_the_check_reads_operator_runs_as_the_server_may() -> None:
    calls = CatalogCalls(
        operators={"@-@": frozenset({"public.f"}), "+": frozenset({"public.add"})},
        types={"money2": frozenset({"public.g"})},
    )
    refused = [
        "SELECT @-@ x FROM t",
        "SELECT @ - @ x FROM t",  # over-read: blanks are not kept, so refused too
        "SELECT a + b FROM t",  # a user '+' (on its own type): every '+' is a call of it
        "SELECT x::MONEY2 FROM t",
        'SELECT x::"money2" FROM t',
    ]
    for sql in refused:
        verdict = classify(sql, "postgres", catalog_calls=calls)
        assert not verdict.read_only, sql
    fine = ["SELECT a - b, @ x FROM t", "SELECT '@-@', \"money\" FROM t"]
    for sql in fine:
        assert classify(sql, "postgres", catalog_calls=calls).read_only, sql
    vetted = classify(
        "SELECT @-@ x", "postgres", catalog_calls=calls, allowed_functions=frozenset({"public.f"})
    )
    assert vetted.read_only


@pytest.fixture
def tag_cast(notes: Server, request: pytest.FixtureRequest) -> Iterator[Server]:
    """The cast of rho_tag to text, explicit (``request.param``: "IMPLICIT" or "")."""
    with notes.admin() as conn:
        conn.autocommit = True
        conn.execute(f"{TAG_CAST} {request.param}")
    yield notes
    with notes.admin() as conn:
        conn.autocommit = True
        conn.execute(DROP_TAG_CAST)


@pytest.mark.parametrize("tag_cast", [""], indirect=True)
@pytest.mark.asyncio(loop_scope="module")
async def test_the_adapters_own_cut_never_casts_a_column_through_a_user_cast(
    tag_cast: Server, secret: Path
) -> None:
    """The adapter selects every column of an unbounded type cut on the server; it wrote
    ``q.c2::text``, which ran the type's user cast for ``SELECT * FROM rho_notes``, a
    statement naming no type: the file's contents came back. Now a column becomes text by
    its type's output function (``format('%s', ...)``), as the wire would carry it."""
    db = adapter(tag_cast)
    try:
        result = await db.query("SELECT * FROM rho_notes ORDER BY id", max_rows=10, timeout=5)
        with pytest.raises(StatementRefused, match="rho_tag_text"):
            await db.query("SELECT t::text FROM rho_notes", max_rows=10, timeout=5)
    finally:
        await db.aclose()
    assert result.rows == ((1, f"({secret})"), (2, None), (3, "()"))


@pytest.mark.parametrize("tag_cast", ["AS IMPLICIT"], indirect=True)
@pytest.mark.asyncio(loop_scope="module")
async def test_an_implicit_user_cast_refuses_every_statement_until_allowed(
    tag_cast: Server, secret: Path
) -> None:
    """An implicit cast runs wherever a value of its type meets a function of the other:
    ``upper(t)`` read the file, no type named. Every statement is refused on such a server
    until an administrator allows the cast's function."""
    db = adapter(tag_cast, check=False)
    try:
        shown = await db.query("SELECT upper(t) FROM rho_notes", max_rows=10, timeout=5)
    finally:
        await db.aclose()
    assert "HUNTER2" in repr(shown.rows)  # the target is real
    db = adapter(tag_cast)
    try:
        for sql in ("SELECT upper(t) FROM rho_notes", "SELECT 1"):
            with pytest.raises(StatementRefused) as info:
                await db.query(sql, max_rows=10, timeout=5)
            assert info.value.by == "check", info.value
            assert "an implicit cast calls public.rho_tag_text()" in str(info.value)
    finally:
        await db.aclose()


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT t::integer FROM rho_notes",
        "SELECT CAST(t AS INT) FROM rho_notes",
        "SELECT t::int4 FROM rho_notes",
        "SELECT t::bigint[] FROM rho_notes",
        "SELECT CAST(t AS int8 ARRAY) FROM rho_notes",
        "SELECT t::timestamp with time zone FROM rho_notes",
        "SELECT t::timestamptz FROM rho_notes",
        "SELECT ROW(t)::rho_holder FROM rho_notes",
        "SELECT ARRAY[ROW(t)]::rho_holder[] FROM rho_notes",
    ],
)
@pytest.mark.asyncio(loop_scope="module")
async def test_a_cast_to_a_built_in_type_is_seen_under_each_of_its_spellings(
    notes: Server, sql: str
) -> None:
    """The grammar's names of a type are not its catalog name: integer and int are int4,
    bigint[] is _int8, timestamp with time zone is timestamptz. An explicit user cast to one
    ran under every spelling but the catalog's (each read the file)."""
    unchecked = adapter(notes, check=False)
    try:
        with pytest.raises(DatabaseError, match="hunter2"):
            await unchecked.query(sql, max_rows=10, timeout=5)
    finally:
        await unchecked.aclose()
    db = adapter(notes)
    try:
        with pytest.raises(StatementRefused) as info:
            await db.query(sql, max_rows=10, timeout=5)
    finally:
        await db.aclose()
    assert info.value.by == "check", info.value
    assert "public.rho_tag_" in str(info.value)


@pytest.fixture
def bool_cast(notes: Server) -> Iterator[Server]:
    """rho_tag's cast to boolean, for assignment: WHERE t coerces t so."""
    with notes.admin() as conn:
        conn.autocommit = True
        conn.execute(BOOL_CAST)
    yield notes
    with notes.admin() as conn:
        conn.autocommit = True
        conn.execute(DROP_BOOL_CAST)


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT 1 FROM rho_notes WHERE t",
        "SELECT CASE WHEN t THEN 1 END FROM rho_notes",
        "SELECT 1 FROM rho_notes WHERE t IS TRUE",
    ],
)
@pytest.mark.asyncio(loop_scope="module")
async def test_an_assignment_cast_is_one_no_text_names_either(bool_cast: Server, sql: str) -> None:
    """WHERE, CASE WHEN and IS TRUE coerce to boolean for assignment, so a user's assignment
    cast runs with neither type named: each read the file. It counts as an implicit one."""
    unchecked = adapter(bool_cast, check=False)
    try:
        with pytest.raises(DatabaseError, match="hunter2"):
            await unchecked.query(sql, max_rows=10, timeout=5)
    finally:
        await unchecked.aclose()
    db = adapter(bool_cast)
    try:
        with pytest.raises(StatementRefused) as info:
            await db.query(sql, max_rows=10, timeout=5)
    finally:
        await db.aclose()
    assert info.value.by == "check", info.value
    assert "an implicit cast calls public.rho_tag_bool()" in str(info.value)


@pytest.fixture
def extensions(user_code: Server) -> Iterator[Server]:
    """hstore's operators (the extension's own) and a user's operator over dblink_exec."""
    setup = [
        "CREATE EXTENSION IF NOT EXISTS hstore",
        "CREATE EXTENSION IF NOT EXISTS dblink",
        "CREATE OPERATOR public.!~! (LEFTARG = text, RIGHTARG = text, "
        "FUNCTION = public.dblink_exec)",
    ]
    teardown = [
        "DROP OPERATOR IF EXISTS public.!~! (text, text)",
        "DROP EXTENSION IF EXISTS dblink",
        "DROP EXTENSION IF EXISTS hstore",
    ]
    with user_code.admin() as conn:
        conn.autocommit = True
        for sql in teardown + setup:
            conn.execute(sql)
    yield user_code
    with user_code.admin() as conn:
        conn.autocommit = True
        for sql in teardown:
            conn.execute(sql)


@pytest.mark.asyncio(loop_scope="module")
async def test_an_extensions_operators_run_and_a_users_operator_over_its_functions_does_not(
    extensions: Server,
) -> None:
    """An extension's operators are its installer's, as its functions are: hstore's ``->``
    runs. An operator a user made over an extension's function is judged by that function:
    ``!~!`` over dblink_exec (which would write through a connection of its own) is not."""
    db = adapter(extensions)
    try:
        result = await db.query("SELECT 'a=>1'::hstore -> 'a'", max_rows=1, timeout=5)
        with pytest.raises(StatementRefused) as info:
            await db.query("SELECT 'dbname=rho' !~! 'DELETE FROM users'", max_rows=1, timeout=5)
    finally:
        await db.aclose()
    assert result.rows == (("1",),)
    assert info.value.by == "check", info.value
    assert "public.dblink_exec()" in str(info.value)


# A user type compared by its own operators: one for every comparison SQL's words call by
# name. Made only for the tests that need them: a user's "=" has every "=" refused.
BOX_SETUP = [
    "CREATE TYPE public.rho_box AS (v text)",
    "CREATE FUNCTION public.rho_box_cmp(a public.rho_box, b public.rho_box) RETURNS boolean "
    "LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'read: %', pg_catalog.pg_read_file((a).v); "
    "END $$",
    *[
        f"CREATE OPERATOR public.{op} (LEFTARG = public.rho_box, RIGHTARG = public.rho_box, "
        "FUNCTION = public.rho_box_cmp)"
        for op in ("=", "<>", "<", ">", "<=", ">=", "~~", "!~~", "~~*", "!~~*", "~", "!~")
    ],
    "CREATE TABLE public.rho_boxes (id int, b public.rho_box)",
]
BOX_TEARDOWN = [
    "DROP TABLE IF EXISTS public.rho_boxes",
    "DROP TYPE IF EXISTS public.rho_box CASCADE",
    "DROP FUNCTION IF EXISTS public.rho_box_cmp",
]
BOX_ATTACKS = [
    ("SELECT b != b FROM rho_boxes", "<>"),
    ("SELECT 1 FROM rho_boxes WHERE b IN (b)", "="),
    ("SELECT 1 FROM rho_boxes WHERE b NOT IN (b)", "<>"),
    ("SELECT b IS DISTINCT FROM b FROM rho_boxes", "="),
    ("SELECT NULLIF(b, b) FROM rho_boxes", "="),
    ("SELECT CASE b WHEN b THEN 1 END FROM rho_boxes", "="),
    ("SELECT b BETWEEN b AND b FROM rho_boxes", ">="),
    ("SELECT 1 FROM rho_boxes x JOIN rho_boxes y USING (b)", "="),
    ("SELECT 1 FROM rho_boxes x NATURAL JOIN rho_boxes y", "="),
    ("SELECT b LIKE b FROM rho_boxes", "~~"),
    ("SELECT b NOT LIKE b FROM rho_boxes", "!~~"),
    ("SELECT b ILIKE b FROM rho_boxes", "~~*"),
]


@pytest.fixture
def boxes(user_code: Server, secret: Path) -> Iterator[Server]:
    """A row whose box names the secret: the box's comparisons read it."""
    with user_code.admin() as conn:
        conn.autocommit = True
        for sql in BOX_TEARDOWN + BOX_SETUP:
            conn.execute(sql)
        conn.execute("INSERT INTO public.rho_boxes VALUES (1, ROW(%s))", (str(secret),))
    yield user_code
    with user_code.admin() as conn:
        conn.autocommit = True
        for sql in BOX_TEARDOWN:
            conn.execute(sql)


@pytest.mark.parametrize(("sql", "name"), BOX_ATTACKS)
@pytest.mark.asyncio(loop_scope="module")
async def test_operators_sql_words_call_by_name_are_held_to_the_allowlist(
    boxes: Server, sql: str, name: str
) -> None:
    """``!=`` is ``<>`` to the server, ``IN`` and ``CASE x WHEN`` compare with ``=``,
    ``BETWEEN`` with ``>=`` and ``<=``, ``LIKE`` is ``~~``: a user's operator of that name
    for the compared type runs with no operator character written (each read the file)."""
    unchecked = adapter(boxes, check=False)
    try:
        with pytest.raises(DatabaseError, match="hunter2"):
            await unchecked.query(sql, max_rows=10, timeout=5)
    finally:
        await unchecked.aclose()
    db = adapter(boxes)
    try:
        with pytest.raises(StatementRefused) as info:
            await db.query(sql, max_rows=10, timeout=5)
    finally:
        await db.aclose()
    assert info.value.by == "check", info.value
    # the first operator found that it may call is named (name: the one the server calls;
    # "~~*" holds "~~", so ILIKE is refused naming ~~)
    assert "the operator " in str(info.value), name
    assert "calls public.rho_box_cmp()" in str(info.value)
