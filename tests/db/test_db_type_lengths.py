"""A type's length or precision is no call, wherever a type stands; a call beside it still is.

Before, the check read ``word (`` as a call wherever the type was not one word right after
``::`` or ``AS``: ``'1'::interval second(3)``, ``CAST(x AS interval minute to second(3))``,
``national character(3)``, ``pg_catalog.bit(3)``, a column ``a float(10)`` of a definition
list (``json_to_record(...) AS t(...)``), XMLTABLE's ``PASSING (doc)``, XMLEXISTS's
``PASSING BY VALUE (doc)``, MySQL's ``CONVERT(x, decimal(5,2))``, the SQL/JSON functions'
``RETURNING NUMBER(5,2)`` and Oracle's ``INTERVAL DAY(3) TO SECOND(2)`` were each refused as
calling ``second()``, ``character()``, ``bit()``, ``float()``, ``passing()``, ``value()``,
``decimal()``, ``NUMBER()``, ``DAY()``. (``pg_catalog.numeric(5,2)`` passed only because
``numeric`` is an allowed function's name.)
"""

from __future__ import annotations

import pytest
from db_support import Server, adapter, own_pg_database

from rho_domain.errors import StatementRefused
from rho_domain.sql import classify

READ = [
    ("postgres", "SELECT '1'::interval second(3), CAST('1' AS interval minute to second(3))"),
    ("postgres", "SELECT NULL::interval day to second(2), NULL::national character(3)"),
    ("postgres", "SELECT NULL::pg_catalog.bit(3), CAST(NULL AS pg_catalog.varbit(3))"),
    ("postgres", "SELECT NULL::pg_catalog.timetz(3), ARRAY[NULL]::pg_catalog.bit(3)[]"),
    ("postgres", "SELECT * FROM json_to_record('{}') AS t(a float(10), b interval second(3))"),
    ("postgres", "SELECT * FROM json_to_record('{}') AS (a pg_catalog.bit(3), b bit varying(2))"),
    ("postgres", "SELECT * FROM XMLTABLE('/r' PASSING (d) COLUMNS a pg_catalog.bit(3) PATH 'a')"),
    ("postgres", "SELECT JSON_VALUE(d, '$' RETURNING bit(3)) FROM t"),
    ("postgres", "SELECT xmlexists('/a' PASSING BY VALUE (d)), xmlexists('/a' PASSING BY REF (d))"),
    ("mysql", "SELECT CONVERT(1, decimal(5,2)), CONVERT(now(), datetime(3))"),
    ("mysql", "SELECT JSON_VALUE('1', '$' RETURNING decimal(5,2))"),
    ("oracle", "SELECT CAST(x AS INTERVAL DAY(3) TO SECOND(2)) FROM t"),
    ("oracle", "SELECT JSON_VALUE(d, '$' RETURNING NUMBER(5,2)) FROM t"),
    (
        "oracle",
        "SELECT JSON_QUERY(d, '$' RETURNING VARCHAR2(30)), "
        "JSON_SERIALIZE(d RETURNING VARCHAR2(9)) FROM t",
    ),
]

# (dialect, statement, the function named in the refusal)
REFUSED = [
    ("postgres", "SELECT 1::public.bit(3)", "public.bit()"),  # a user's type: its typmod_in
    ("postgres", "SELECT * FROM json_to_record('{}') AS t(a public.bit(3))", "public.bit()"),
    ("postgres", "WITH a(x) AS (SELECT year(1)) SELECT * FROM a", "year()"),  # a CTE's query
    ("postgres", "WITH a(x) AS (SELECT 1 FROM u, LATERAL day(1)) SELECT 1", "day()"),
    ("postgres", "SELECT count(*) FILTER (WHERE year(1) > 0) FROM u", "year()"),
    ("postgres", "SELECT 1::interval, second(3)", "second()"),
    ("postgres", "SELECT '1'::interval second(f(3))", "f()"),
    ("postgres", "SELECT passing(1)", "passing()"),
    ("postgres", "SELECT 1 FROM t ORDER BY value(1)", "value()"),
    ("postgres", "SELECT JSON_VALUE(d, '$' RETURNING f(3)) FROM t", "f()"),
    ("mysql", "SELECT CONVERT(1, f(3))", "f()"),
    ("mysql", "SELECT * FROM t FOR SYSTEM_TIME AS OF (f(1))", "f()"),
]


def test_a_type_length_is_no_call_wherever_a_type_stands() -> None:
    refused = [
        (d, sql, classify(sql, d).reason) for d, sql in READ if not classify(sql, d).read_only
    ]
    assert refused == []


def test_a_call_beside_a_type_is_still_judged() -> None:
    for d, sql, name in REFUSED:
        reason = classify(sql, d).reason
        assert f"the function {name} is not on the {d} list" in reason, (sql, reason)


async def test_postgres_reads_types_with_a_length_in_every_place(postgres_server: Server) -> None:
    """The server's own reading: each such type is a type, and the statement reads."""
    db = adapter(postgres_server)
    try:
        result = await db.query(
            "SELECT '1.5'::interval second(3)::text, CAST('101' AS pg_catalog.bit(3))::text, "
            "t.a::text, x.b::text FROM json_to_record('{\"a\": 1.25}') "
            "AS t(a pg_catalog.numeric(5,1), c national character(2)), "
            "XMLTABLE('/r' PASSING ('<r><b>10</b></r>'::xml) "
            "COLUMNS b pg_catalog.bit(2) PATH 'b') AS x",
            max_rows=2,
            timeout=10,
        )
    finally:
        await db.aclose()
    assert [list(r) for r in result.rows] == [["00:00:01.5", "101", "1.3", "10"]]


# A base type in public whose length runs a PL/pgSQL typmod_in (the admin's, as CREATE TYPE
# needs): a name PostgreSQL's grammar does not build in is looked up on search_path, so
# '1'::number(3) runs public.number's typmod_in as surely as public.number(3) would.
_TYPMOD_SETUP = [
    "CREATE FUNCTION typmod_ran(cstring[]) RETURNS int LANGUAGE plpgsql "
    "AS $$BEGIN RAISE EXCEPTION 'typmod_in ran for %', current_user; END$$",
    *(
        sql
        for name in ("number", "hour", "double")
        for sql in (
            f"CREATE TYPE {name}",
            f"CREATE FUNCTION {name}_in(cstring) RETURNS {name} LANGUAGE internal "
            "IMMUTABLE STRICT AS 'int4in'",
            f"CREATE FUNCTION {name}_out({name}) RETURNS cstring LANGUAGE internal "
            "IMMUTABLE STRICT AS 'int4out'",
            f"CREATE TYPE {name} (INPUT = {name}_in, OUTPUT = {name}_out, "
            "TYPMOD_IN = typmod_ran, LIKE = int4)",
        )
    ),
]
# (statement, the name refused) -- each ran typmod_ran through the adapter before
LOOKED_UP = [
    ("SELECT '1'::number(3)", "number()"),  # a TYPE_WORDS word PostgreSQL does not build in
    ("SELECT CAST('1' AS number(3))", "number()"),
    ("SELECT '1'::hour(3)", "hour()"),  # an interval field's word as a type's first word
    ("SELECT '1'::double(3)", "double()"),  # a keyword only before PRECISION
    ("SELECT * FROM json_to_record('{\"a\": 1}') AS t(a number(3))", "number()"),
    (
        "SELECT * FROM XMLTABLE('/r' PASSING ('<r/>'::xml) COLUMNS a hour(3) PATH 'a') AS x",
        "hour()",
    ),
]


async def test_postgres_types_found_on_search_path_keep_their_length_judged(
    postgres_server: Server,
) -> None:
    """Only the types PostgreSQL's grammar names itself (numeric, bit, interval ...) take a
    length as no call; any other unqualified name is looked up on search_path, where the
    length runs whatever typmod_in the type found has."""
    with own_pg_database(postgres_server, "rho_typmod", _TYPMOD_SETUP) as server:
        unchecked, checked = adapter(server, check=False), adapter(server)
        try:
            for sql, name in LOOKED_UP:
                with pytest.raises(Exception, match="typmod_in ran for postgres"):
                    await unchecked.query(sql, max_rows=1, timeout=10)  # the attack reaches
                with pytest.raises(StatementRefused) as info:
                    await checked.query(sql, max_rows=1, timeout=10)
                assert info.value.by == "check", sql
                assert f"the function {name} is not on the postgres list" in str(info.value)
            read = await checked.query("SELECT '1'::varbit(3)::text", max_rows=1, timeout=10)
            assert read.rows == (("1",),)  # pg_catalog's varbit(): on the list, so it reads
        finally:
            await unchecked.aclose()
            await checked.aclose()
