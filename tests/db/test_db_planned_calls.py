"""What the PostgreSQL planner computes for a read of a table is judged where the table is named.

Before, with the statement check on, ``SELECT * FROM t`` ran a user function no text named:
the planner folds every call with constant arguments (an IMMUTABLE user function, whatever
it does) in the expressions of the table's indexes and partial indexes' predicates, of its
partition key and of its extended statistics when it loads them, and in its CHECKs where it is
scanned as a member of an append (a child under its parent, a UNION ALL branch). A function
an administrator marked IMMUTABLE ended another session there (``pg_terminate_backend``), which no
read-only transaction stops. Now those expressions are read from the catalog
(``pg_catalog_queries.PLANNED``) and judged as a view's query is, where the table (or a
parent of it) is named.
"""

from __future__ import annotations

import pytest
from db_support import Server, adapter, own_pg_database

from rho_adapters.db.pg_planned import Function, Type, planned_calls
from rho_domain.errors import StatementRefused

_RAN = (
    "CREATE FUNCTION probe_ran(int) RETURNS int IMMUTABLE LANGUAGE plpgsql AS $$BEGIN "
    "IF (SELECT armed FROM public.arm) THEN RAISE EXCEPTION 'probe_ran for %', current_user; "
    "END IF; RETURN $1; END$$"
)
_KILLS = (
    "CREATE FUNCTION kill_ran(int) RETURNS int IMMUTABLE LANGUAGE plpgsql AS $$BEGIN "
    "IF (SELECT armed FROM public.arm) THEN PERFORM pg_terminate_backend(pid) "
    "FROM pg_stat_activity WHERE application_name = 'rho_victim'; END IF; RETURN $1; END$$"
)
_SETUP = [
    "CREATE TABLE arm (armed bool)",
    "INSERT INTO arm VALUES (false)",
    _RAN,
    _KILLS,
    "CREATE TABLE t_ix (x int)",
    "CREATE INDEX ON t_ix ((x + probe_ran(1)))",
    "CREATE TABLE t_pred (x int)",
    "CREATE INDEX ON t_pred (x) WHERE x > probe_ran(1)",
    "CREATE TABLE t_part (x int) PARTITION BY RANGE ((x + probe_ran(1)))",
    "CREATE TABLE t_part1 PARTITION OF t_part FOR VALUES FROM (0) TO (10)",
    "CREATE TABLE t_st (x int, y int)",
    "CREATE STATISTICS t_st_x ON (x + probe_ran(1)), y FROM t_st",
    "CREATE TABLE t_parent (x int)",
    "CREATE TABLE t_child (x int CHECK (x > probe_ran(1))) INHERITS (t_parent)",
    "CREATE TABLE t_pp (x int) PARTITION BY RANGE (x)",
    "CREATE TABLE t_pp1 PARTITION OF t_pp (CHECK (x > probe_ran(1))) FOR VALUES FROM (0) TO (9)",
    "CREATE TABLE t_kill (x int)",
    "CREATE INDEX ON t_kill ((x + kill_ran(1)))",
    "CREATE TABLE t_chk (x int CHECK (x > probe_ran(1)))",
    # qualified: 17+ runs CREATE INDEX's expressions with search_path = pg_catalog, pg_temp
    "CREATE FUNCTION sql_ran(int) RETURNS int IMMUTABLE LANGUAGE sql "
    "AS 'SELECT $1 + public.probe_ran(1)'",
    "CREATE TABLE t_sql (x int)",  # inlined over a column, its body folded: probe_ran(1) ran
    "CREATE INDEX ON t_sql (sql_ran(x))",
    "CREATE FUNCTION dflt(a int, b int DEFAULT probe_ran(1)) RETURNS int IMMUTABLE "
    "LANGUAGE plpgsql AS 'BEGIN RETURN a; END'",
    "CREATE TABLE t_dflt (x int)",  # the planner adds the default, then folds probe_ran(1)
    "CREATE INDEX ON t_dflt (dflt(x))",
    "CREATE TABLE t_null (x int)",  # x + NULL folds to NULL (strict), so probe_ran(NULL) ran
    "CREATE INDEX ON t_null ((probe_ran(x + NULL)))",
    # constant to the planner through known nodes (probesql22e): judged, as they ran
    "CREATE TABLE t_saop (x int)",
    "CREATE INDEX ON t_saop (x) WHERE x = ANY(ARRAY[probe_ran(1)])",
    "CREATE TABLE t_nullif (x int)",  # NULLIF(1, 1) folds to NULL; probe_ran is not strict
    "CREATE INDEX ON t_nullif ((probe_ran(NULLIF(1, 1))))",
    "CREATE TABLE t_and (x int)",  # false AND x > 0 folds to false
    "CREATE INDEX ON t_and ((probe_ran((false AND x > 0)::int)))",
    "CREATE FUNCTION probe_op(int, int) RETURNS int IMMUTABLE LANGUAGE sql AS 'SELECT $1'",
    "CREATE OPERATOR ### (LEFTARG = int, RIGHTARG = int, FUNCTION = probe_op)",
    "CREATE TABLE t_op (x int)",  # two constants through a user operator
    "CREATE INDEX ON t_op ((x + probe_ran(1 ### 2)))",
    # read: a user function over a column runs at writes only (f_unaccent(name))
    "CREATE TABLE t_col (x int, y int CHECK (probe_ran(y) > 0)) PARTITION BY RANGE (probe_ran(x))",
    "CREATE TABLE t_col1 PARTITION OF t_col FOR VALUES FROM (0) TO (10)",
    "CREATE INDEX ON t_col (probe_ran(x)) WHERE probe_ran(x) > 0",
    # read: built-ins fold harmlessly
    "CREATE TABLE t_pos (x int CHECK (x > 0))",
    "CREATE TABLE t_lower (s text)",
    "CREATE INDEX ON t_lower (lower(s)) WHERE s <> ''",
    "CREATE FUNCTION quiet(int) RETURNS int IMMUTABLE LANGUAGE plpgsql AS 'BEGIN RETURN $1; END'",
    # I/O conversions (jsonb::text, text::enum) over a column fold nothing: read (probesql23)
    "CREATE TYPE mood AS ENUM ('sad', 'ok')",
    "CREATE TABLE t_io (data jsonb, s text CHECK (probe_ran(length(s)) > 0 AND s::mood <> 'ok'))",
    "CREATE INDEX ON t_io (probe_ran(length(data::text)))",
    # a constant's conversion through built-in I/O functions, STABLE ones (enum_in, date_in,
    # array_in) too, runs only what reads: read (probesql23b)
    "CREATE TABLE t_io_builtin (m mood CHECK (m <> ('ok'::text)::mood), "
    "d date CHECK (d > ('2020-01-01'::text)::date), a mood[] CHECK (a <> '{sad}'::text::mood[]))",
    # a constant's conversion runs its type's output function: an administrator's, judged
    "CREATE TYPE io_int",
    "CREATE FUNCTION io_in(cstring) RETURNS io_int IMMUTABLE STRICT LANGUAGE internal AS 'int4in'",
    "CREATE FUNCTION io_out(io_int) RETURNS cstring IMMUTABLE STRICT LANGUAGE internal "
    "AS 'int4out'",
    "CREATE TYPE io_int (INPUT = io_in, OUTPUT = io_out, LIKE = int4)",
    "CREATE TABLE t_io_user (x int CHECK (x::text <> ('1'::io_int)::text))",
    # a conversion to a type holding a domain runs the domain's CHECKs: judged as its text
    "CREATE DOMAIN d_probed AS int CHECK (probe_ran(VALUE) > 0)",
    "CREATE TYPE probed_pair AS (a d_probed)",
    "CREATE TABLE t_io_dom (x int CHECK (x > (('(1)'::text)::probed_pair).a))",
    "CREATE TABLE t_late (x int)",
    "CREATE TABLE t_late_st (x int, y int)",
    "UPDATE arm SET armed = true",
]
# (statement, the table named in the refusal) -- each ran probe_ran before, check on or off
RAN = [
    ("SELECT * FROM t_ix", "t_ix"),
    ("SELECT * FROM t_pred", "t_pred"),
    ("SELECT * FROM t_part", "t_part"),
    ("SELECT * FROM t_st", "t_st"),
    ("SELECT * FROM t_parent WHERE x = 1", "t_parent"),
    ("SELECT * FROM t_pp WHERE x = 1", "t_pp"),
    ("SELECT * FROM (SELECT x FROM t_chk UNION ALL SELECT 2) s WHERE x = 1", "t_chk"),
    ("SELECT * FROM t_sql", "t_sql"),
    ("SELECT * FROM t_null", "t_null"),
    ("SELECT * FROM t_dflt", "t_dflt"),
    ("SELECT * FROM t_saop", "t_saop"),
    ("SELECT * FROM t_nullif", "t_nullif"),
    ("SELECT * FROM t_and", "t_and"),
    ("SELECT * FROM t_op", "t_op"),
]
READ = [
    "SELECT * FROM (SELECT x FROM t_pos UNION ALL SELECT x FROM t_pos) s WHERE x = 1",
    "SELECT * FROM t_lower WHERE lower(s) = 'a'",
    "SELECT * FROM t_late",
    "SELECT * FROM t_part1",  # a partition read alone plans no key of its parent's
    "SELECT * FROM t_col WHERE x = 1 AND y = 2",
    "SELECT * FROM t_io",
    "SELECT * FROM t_io_builtin",
]
# (statement, what the refusal says): fail closed where a conversion runs what is not vetted
CONVERTS = [
    ("SELECT * FROM t_io_user", "runs SELECT public.io_in(), public.io_out()"),
    ("SELECT * FROM t_io_dom", "the type probed_pair runs CHECK ((public.probe_ran(VALUE) > 0))"),
]


async def test_what_the_planner_computes_for_a_read_is_judged(postgres_server: Server) -> None:
    import psycopg  # here, not at collection (tests/test_collection_costs.py)

    with own_pg_database(postgres_server, "rho_planned", _SETUP) as server:
        unchecked, checked = adapter(server, check=False), adapter(server)
        c = server.config
        admin = psycopg.connect(
            host=c.host, port=c.port, user=c.user, dbname=c.database, autocommit=True
        )
        victim = psycopg.connect(
            host=c.host, port=c.port, user=c.user, dbname=c.database, application_name="rho_victim"
        )
        try:
            for sql, _ in RAN:  # the attack reaches: no call written, the function ran
                with pytest.raises(Exception, match="probe_ran for postgres"):
                    await unchecked.query(sql, max_rows=1, timeout=10)
            await unchecked.query("SELECT * FROM t_kill", max_rows=1, timeout=10)
            with pytest.raises(psycopg.OperationalError):  # another session, ended
                victim.execute("SELECT 1")
            refused = [*RAN, ("SELECT * FROM t_kill", "t_kill")]
            for sql, table in refused:
                with pytest.raises(StatementRefused) as info:
                    await checked.query(sql, max_rows=1, timeout=10)
                assert info.value.by == "check", sql
                said = f"what the planner computes for a read of {table} runs SELECT"
                assert said in str(info.value), (sql, str(info.value))
                assert "is not on the postgres list" in str(info.value)
            for sql, said in CONVERTS:
                with pytest.raises(StatementRefused) as info:
                    await checked.query(sql, max_rows=1, timeout=10)
                assert said in str(info.value), (sql, str(info.value))
            for sql in READ:  # ran nothing with the check off, and reads with it on
                await unchecked.query(sql, max_rows=1, timeout=10)
                await checked.query(sql, max_rows=1, timeout=10)
            # made while the connection is open: judged at the next statement
            for table, made in (
                ("t_late", "CREATE INDEX ON t_late ((x + quiet(2)))"),
                ("t_late_st", "CREATE STATISTICS t_late_x ON (x + quiet(2)), y FROM t_late_st"),
            ):
                admin.execute(made)
                with pytest.raises(StatementRefused, match=f"computes for a read of {table}"):
                    await checked.query(f"SELECT x FROM {table}", max_rows=1, timeout=10)
        finally:
            await unchecked.aclose()
            await checked.aclose()
            admin.close()
            victim.close()


def test_a_tree_the_reader_does_not_know_is_judged_whole() -> None:
    """Fail closed: a node the reader does not know, a function it cannot name, an unset
    operator function, a tree too deep or malformed gives None (every call of the text is
    judged); a known tree gives exactly the calls that fold."""
    ran = Function("public.probe_ran", user=True, sql=False, immutable=True)
    functions = {16413: ran, 177: Function("pg_catalog.int4pl", False, False, True)}
    const = "{CONST :constisnull false :constvalue 4 [ 1 0 0 0 0 0 0 0 ]}"
    call = "{FUNCEXPR :funcid 16413 :args ({VAR :varno 1})}"
    ran_1 = f"{{FUNCEXPR :funcid 16413 :args ({const})}}"
    folded = f"{{OPEXPR :opno 551 :opfuncid 177 :args ({call} {ran_1})}}"
    assert planned_calls(folded, functions) == frozenset({"public.probe_ran"})
    assert planned_calls(f"({call})", functions) == frozenset()
    is_null = "{FUNCEXPR :funcid 16413 :args ({NULLTEST :arg {VAR :varno 1}})}"
    assert planned_calls(is_null, functions) == frozenset({"public.probe_ran"})
    deep = "{FUNCEXPR :funcid 177 :args (" * 60 + const + ")}" * 60
    # an I/O conversion: of a column, nothing runs; of a constant, the types' functions
    types = {25: Type((46, 47), domain=False), 3802: Type((3806, 3804), domain=False)}
    functions |= {
        46: Function("pg_catalog.textin", False, False, True),
        47: Function("pg_catalog.textout", False, False, True),
        3806: Function("pg_catalog.jsonb_in", False, False, True),
        3804: Function("pg_catalog.jsonb_out", False, False, True),
        16500: Function("public.io_out", True, False, True),
    }
    jsonb_const = const.replace("CONST", "CONST :consttype 3802")
    of_column = "{COERCEVIAIO :arg {VAR :varno 1 :vartype 3802} :resulttype 25}"
    of_const = f"{{COERCEVIAIO :arg {jsonb_const} :resulttype 25}}"
    over_column = f"{{FUNCEXPR :funcid 16413 :args ({of_column})}}"
    assert planned_calls(over_column, functions, types) == frozenset()
    assert planned_calls(of_const, functions, types) == frozenset()
    user_io = {**types, 3802: Type((3806, 16500), domain=False)}
    assert planned_calls(of_const, functions, user_io) == frozenset({"public.io_out"})
    for unread in ({**types, 25: Type((46, 47), domain=True)}, {25: types[25]}, {}):
        assert planned_calls(of_const, functions, unread) is None
    for tree in (
        f"{{COERCETODOMAIN :arg {call}}}",
        f"{{FUNCEXPR :funcid 99999 :args ({const})}}",
        f"{{OPEXPR :opno 551 :opfuncid 0 :args ({const})}}",
        deep,
        folded[:-1],
        folded + "}",
    ):
        assert planned_calls(tree, functions) is None, tree[:60]
