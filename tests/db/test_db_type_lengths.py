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

from db_support import Server, adapter

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
