"""Pure pieces: lexer readings, classifier verdicts, rendering, tool schema and policy,
databases.yaml parsing and loading, open_databases, missing drivers."""

from __future__ import annotations

import re
import socket
import sys
from pathlib import Path
from typing import Any

import pytest
from db_attacks import ALLOWED, ATTACKS

from rho_adapters.db import open_databases, parse_databases
from rho_adapters.db.errors import StatementTimeout
from rho_adapters.db.mysql import MysqlDatabase
from rho_adapters.extras import install_command
from rho_domain.config import DatabaseConfig
from rho_domain.errors import ConfigError, DatabaseError, MissingExtra, StatementRefused
from rho_domain.permissions import DatabaseMode, readonly_profile
from rho_domain.ports.database import QueryResult
from rho_domain.sql import Kind, Verdict, call_syntax, check_read_only, classify, dialect, tokenize
from rho_domain.sql.tokens import Token
from rho_domain.tools.database import database_tools, render
from rho_entry.config.databases_config import load_databases, load_databases_file


def words(sql: str, name: str, reading: int = 0) -> list[str]:
    rules = dialect(name).readings[reading]
    return [t.text for t in tokenize(sql, rules) if t.kind is Kind.WORD]


def test_lexer_hides_literals_comments_and_quoted_identifiers() -> None:
    assert words("SELECT 'DROP' /* DELETE */ -- UPDATE\n, \"INSERT\" FROM t", "postgres") == [
        "SELECT",
        "FROM",
        "T",
    ]
    assert words("SELECT $a$ DROP $a$, $$x$$ FROM t", "postgres") == ["SELECT", "FROM", "T"]
    assert words("SELECT /* a /* b */ DROP */ 1", "postgres") == ["SELECT"]
    assert words("SELECT q'{it's DROP}' FROM dual", "oracle") == ["SELECT", "FROM", "DUAL"]
    assert words("SELECT [DROP], `DELETE` FROM t", "sqlite") == ["SELECT", "FROM", "T"]


def test_mysql_dash_dash_needs_whitespace_and_hash_is_a_comment() -> None:
    assert words("SELECT 1--1 DROP", "mysql") == ["SELECT", "DROP"]
    assert words("SELECT 1-- DROP", "mysql") == ["SELECT"]
    assert words("SELECT 1 # DROP\n, 2", "mysql") == ["SELECT"]
    assert words("SELECT 1 # DROP", "postgres") == ["SELECT", "DROP"]


def test_every_reading_must_pass() -> None:
    # With backslash escapes this is one string; with NO_BACKSLASH_ESCAPES a DELETE follows.
    sql = "SELECT 'a\\' ; DELETE FROM users; -- '"
    assert len(dialect("mysql").readings) == 6
    assert not classify(sql, "mysql").read_only
    # MariaDB's sql_mode=MSSQL: [a'] is a name, and the call after it is no string's.
    bracketed = "SELECT 1 AS [a'], LOAD_FILE('/etc/hostname') -- ']"
    assert "load_file" in classify(bracketed, "mysql").reason
    # PostgreSQL: standard_conforming_strings off turns '\'' into an escape.
    assert not classify("SELECT '\\'; DELETE FROM users; --'", "postgres").read_only


@pytest.mark.parametrize(
    ("sql", "name", "reason"),
    [
        ("SELECT 1 /*!50000 INTO OUTFILE '/x' */", "mysql", "executable comment"),
        ("SELECT 'x", "postgres", "unterminated"),
        ("SELECT 1; SELECT 2", "sqlite", "more than one statement"),
        ("", "sqlite", "empty statement"),
        ("WITH d AS (DELETE FROM t RETURNING 1) SELECT 1", "postgres", "DELETE"),
        ("SELECT pg_sleep(1)", "postgres", "pg_sleep"),
        ("SELECT * FROM t FOR SHARE", "postgres", "locking"),
        ("PRAGMA journal_mode = WAL", "sqlite", "journal_mode"),
        ("SET x = 1", "mysql", "SET statements are not read-only"),
        ("SELECT dbms_lock.sleep(1) FROM dual", "oracle", "package dbms_lock"),
        # parses its text, external entities and all (CVE-2014-6577: out-of-band requests)
        ("SELECT xmltype('<!DOCTYPE a SYSTEM \"http://x/\"><a/>') FROM dual", "oracle", "XMLTYPE"),
    ],
)
def test_refusals_name_the_reason(sql: str, name: str, reason: str) -> None:
    with pytest.raises(StatementRefused, match=reason) as info:
        check_read_only(sql, name)
    assert "Only single read-only statements" in str(info.value)


def test_keywords_in_strings_and_function_names_are_fine() -> None:
    for name in ("sqlite", "postgres", "mysql", "oracle", "vertica"):
        verdict = classify("SELECT 'drop table x; delete from y' AS a FROM t", name)
        assert verdict.read_only, name
        assert verdict.returns_rows
    assert classify("SELECT replace(a, 'x', 'y') FROM t", "postgres").read_only
    assert classify("SELECT o.start_time FROM orders o", "vertica").read_only
    assert classify("SHOW search_path", "postgres").kind == "SHOW"
    assert not classify("SHOW search_path", "postgres").returns_rows


def test_render_caps_rows_cuts_cells_and_says_what_was_left_out() -> None:
    result = QueryResult(
        columns=("id", "note"),
        rows=((1, "x" * 500), (2, None), (3, "a\nb"), (4, b"\x00\x01")),
        more_rows=False,
    )
    text = render(result, 2)
    lines = text.splitlines()
    assert lines[0].split(" | ")[0].strip() == "id"
    assert lines[2].endswith("…")
    assert len(lines[2]) < 250
    assert "NULL" in lines[3]
    assert lines[-1].startswith("... 2 more rows not shown")
    assert "1,000+ more" in render(
        QueryResult(columns=("a",), rows=((1,),) * 1100, more_rows=True), 100
    )
    assert render(QueryResult(columns=("a",), rows=()), 5) == "a\n(no rows)"
    assert "3 rows affected" in render(QueryResult(columns=(), rows=(), rowcount=3), 5)


def test_one_tool_per_engine_with_aliases_and_policy() -> None:
    configs = {
        "prod": DatabaseConfig(engine="postgres", database="app"),
        "stats": DatabaseConfig(engine="postgres", database="stats"),
        "local": DatabaseConfig(engine="sqlite", path="x.db"),
    }
    tools = database_tools(configs, readonly_profile())
    assert [t.name for t in tools] == ["postgres", "sqlite"]
    pg, lite = tools
    assert pg.parameters["properties"]["database"]["enum"] == ["prod", "stats"]
    assert pg.parameters["required"] == ["database", "operation"]
    assert lite.parameters["required"] == ["operation"]
    assert "read-only" in pg.description
    assert not pg.policy_for({"operation": "query", "sql": "SELECT 1"}).dangerous
    assert pg.policy_for({"operation": "query", "sql": "DELETE FROM t"}).dangerous
    assert not pg.policy_for({"operation": "list_tables"}).dangerous


def test_parse_databases_validates_and_never_stores_passwords(tmp_path: Path) -> None:
    data = {
        "databases": {
            "prod": {
                "type": "PostgreSQL",
                "host": "h",
                "port": 5432,
                "database": "app",
                "user": "ro",
                "password_env": "PROD_PW",
                "options": {"connect_timeout": 3},
            },
            "local": {"engine": "sqlite", "path": "app.db"},
        }
    }
    configs = parse_databases(data, source="databases.yaml")
    assert configs["prod"].engine == "postgres"
    assert configs["prod"].password_env == "PROD_PW"
    assert configs["local"].path == "app.db"
    bad = [
        (
            {"databases": {"a": {"engine": "sqlite", "path": "x", "password": "s3cret"}}},
            "databases.a.password",
        ),
        ({"databases": {"a": {"engine": "mongo"}}}, "databases.a.engine"),
        (
            {"databases": {"a": {"engine": "postgres", "database": "x", "port": "5432"}}},
            "databases.a.port: expected an integer",
        ),
        (
            {"databases": {"a": {"engine": "postgres", "database": "x", "hots": "h"}}},
            "databases.a.hots: unknown key",
        ),
        ({"databases": {"a": {"engine": "sqlite"}}}, "databases.a.path"),
        ({"dbs": {}}, "unknown top-level key 'dbs'"),
    ]
    for value, message in bad:
        with pytest.raises(ConfigError, match=message) as info:
            parse_databases(value, source="databases.yaml")
        assert str(info.value).startswith("databases.yaml: ")
        assert "s3cret" not in str(info.value)


def test_a_misspelt_databases_yaml_key_or_engine_says_what_was_meant(tmp_path: Path) -> None:
    """Before, ``engnie:``, ``pasword:`` or ``postgress`` got the list of what is allowed and
    left the reader to find the slip; the file, the alias and the key are named as before."""
    file = tmp_path / "databases.yaml"
    cases = [
        ("databses:\n  p: {engine: sqlite, path: a.db}\n", "unknown top-level key 'databses'"),
        ("databases:\n  prod: {engnie: postgres}\n", "databases.prod.engnie: unknown key"),
        ("databases:\n  prod: {engine: postgres, pasword: x}\n", "databases.prod.pasword: "),
        ("databases:\n  prod: {engine: postgress}\n", "databases.prod.engine: 'postgress' "),
    ]
    meant = ["'databases'", "'engine'", "'password_env'", "'postgres'"]
    for (text, where), word in zip(cases, meant, strict=True):
        file.write_text(text)
        with pytest.raises(ConfigError) as info:
            load_databases_file(file, {})
        assert str(info.value).startswith(f"{file}: {where}"), info.value
        assert f"did you mean {word}?" in str(info.value)
    file.write_text("databases:\n  prod: {engine: mongodb}\n")  # nothing near: no guess
    with pytest.raises(ConfigError) as info:
        load_databases_file(file, {})
    assert "did you mean" not in str(info.value)


def test_load_databases_from_env_variable_or_config_dir(tmp_path: Path) -> None:
    file = tmp_path / "dbs.yaml"
    file.write_text("databases:\n  local:\n    engine: sqlite\n    path: app.db\n")
    assert set(load_databases({"RHO_AGENT_DB_CONFIG": str(file)})) == {"local"}
    assert load_databases({"RHO_AGENT_HOME": str(tmp_path)}) == {}  # no databases.yaml there
    (tmp_path / "databases.yaml").write_text("databases:\n  x:\n    engine: sqlite\n    path: y\n")
    assert set(load_databases({"RHO_AGENT_HOME": str(tmp_path)})) == {"x"}
    with pytest.raises(ConfigError, match="not found"):
        load_databases({"RHO_AGENT_DB_CONFIG": str(tmp_path / "missing.yaml")})
    (tmp_path / "bad.yaml").write_text("databases: [1, 2\n")
    with pytest.raises(ConfigError, match=r"bad\.yaml: not valid YAML"):
        load_databases({}, explicit=tmp_path / "bad.yaml")


def test_open_databases_resolves_passwords_from_the_environment_only() -> None:
    configs = {"m": DatabaseConfig(engine="mysql", database="app", password_env="M_PW")}
    dbs = open_databases(configs, mode=DatabaseMode.READONLY, environ={"M_PW": "pw"})
    assert isinstance(dbs["m"], MysqlDatabase)
    assert dbs["m"].dialect == "mysql"
    assert "pw" not in repr(configs)
    with pytest.raises(ConfigError, match=r"databases\.x\.engine: 'db2' is not one of sqlite"):
        open_databases({"x": DatabaseConfig(engine="db2")}, mode=DatabaseMode.READONLY, environ={})


async def test_an_unset_password_variable_fails_only_its_database_when_it_connects(
    tmp_path: Path,
) -> None:
    import sqlite3

    sqlite3.connect(tmp_path / "l.db").close()
    configs = {
        "m": DatabaseConfig(
            engine="mysql", host="127.0.0.1", port=1, database="app", password_env="M_PW"
        ),
        "local": DatabaseConfig(engine="sqlite", path=str(tmp_path / "l.db")),
    }
    dbs = open_databases(configs, mode=DatabaseMode.READONLY, environ={})  # start-up is fine
    try:
        with pytest.raises(ConfigError, match="password_env names 'M_PW', which is not set"):
            await dbs["m"].query("SELECT 1", max_rows=1, timeout=5)
        result = await dbs["local"].query("SELECT 1", max_rows=1, timeout=5)
        assert result.rows == ((1,),)
    finally:
        for db in dbs.values():
            await db.aclose()


async def test_missing_driver_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pymysql", None)  # makes `import pymysql` fail
    db = MysqlDatabase("m", DatabaseConfig(engine="mysql", database="app"))
    with pytest.raises(MissingExtra, match=re.escape(install_command("mysql"))):
        await db.query("SELECT 1", max_rows=1, timeout=1)


_PAIR = "invalid Unicode surrogate pair in a U& identifier"
_VALUE = "invalid Unicode escape value in a U& identifier"
_ESCAPE = "invalid Unicode escape in a U& identifier"
# (body, decoded text or the exact refusal): the edges of every range PostgreSQL checks
# (its scan.l: surrogates D800-DBFF then DC00-DFFF, code point 0, above 10FFFF).
UNICODE_ESCAPES = [
    ("\\0001", "\x01"),
    ("\\D7FF", "\ud7ff"),
    ("\\E000", "\ue000"),
    ("\\+10FFFF", "\U0010ffff"),
    ("\\D800\\DC00", "\U00010000"),
    ("\\DBFF\\DFFF", "\U0010ffff"),
    ("\\DBFF\\DC00", "\U0010fc00"),
    ("\\D800\\DFFF", "\U000103ff"),
    ("a\\\\b", "a\\b"),
    ("\\DC00", _VALUE),
    ("\\DFFF", _VALUE),
    ("\\0000", _VALUE),
    ("\\+110000", _VALUE),
    ("\\D800", _PAIR),
    ("\\DBFF", _PAIR),
    ("\\D800x", _PAIR),
    ("\\D800\\\\", _PAIR),
    ("\\D800\\DBFF", _PAIR),
    ("\\DBFF\\E000", _PAIR),
    ("\\D800\\0041", _PAIR),
    ("\\12", _ESCAPE),
    ("\\12G4", _ESCAPE),
    ("\\+12345", _ESCAPE),
    ("\\", _ESCAPE),
]


@pytest.mark.parametrize(("body", "expected"), UNICODE_ESCAPES)
def test_unicode_escape_edges(body: str, expected: str) -> None:
    from rho_domain.sql.unicode_names import decode_unicode_escapes

    if expected in (_PAIR, _VALUE, _ESCAPE):
        with pytest.raises(StatementRefused) as info:
            decode_unicode_escapes(body)
        assert str(info.value) == expected
    else:
        assert decode_unicode_escapes(body) == expected


def test_unicode_escapes_decode_as_postgresql_does() -> None:
    from rho_domain.sql.unicode_names import decode_unicode_escapes

    assert decode_unicode_escapes("d\\0061t\\+000061") == "data"
    assert decode_unicode_escapes("\\D83D\\DE00") == "\U0001f600"
    assert decode_unicode_escapes("a!!b!0063", "!") == "a!bc"
    for bad in ("\\D83D", "\\DE00", "\\D83Dx", "\\00zz", "\\+00", "\\0000", "\\x"):
        with pytest.raises(StatementRefused):
            decode_unicode_escapes(bad)
    quoted = [
        t.text
        for t in tokenize(
            "SELECT U&\"\\0070g\" /* c */ UESCAPE '\\', U&\"!0071\" UESCAPE '!'",
            dialect("postgres").readings[0],
        )
        if t.kind is Kind.QUOTED
    ]
    assert quoted == ["pg", "q"]


def test_only_ascii_blanks_separate_tokens_and_unknown_characters_are_refused() -> None:
    assert not classify("SELECT lower\u00a0('x')", "postgres").read_only  # one name: "lower\xa0"
    assert not classify("SELECT 1 \\g", "postgres").read_only
    assert not classify("SELECT 1\x00", "sqlite").read_only
    assert classify("SELECT 'é', \"naïve\" FROM t", "postgres").read_only


def test_bind_parameters_follow_the_dialect() -> None:
    # PostgreSQL has no :name parameters, so a function hidden behind ":" is still seen.
    assert not classify("SELECT a[1:pg_sleep(1)] FROM t", "postgres").read_only
    assert classify("SELECT x::numeric(10, 2), $1 FROM t", "postgres").read_only
    assert classify("SELECT :name, :1 FROM dual", "oracle").read_only
    assert not classify("SELECT :x(load_extension('y'))", "sqlite").read_only


def test_mysql_reading_follows_the_server_sql_mode() -> None:
    sql = "SELECT 'O\\'Brien'"
    assert not classify(sql, "mysql").read_only  # unknown mode: every reading must pass
    assert classify(sql, "mysql", settings=frozenset()).read_only
    nbe = frozenset({"sql_mode:NO_BACKSLASH_ESCAPES"})
    assert not classify(sql, "mysql", settings=nbe).read_only
    ansi = frozenset({"sql_mode:ANSI_QUOTES"})
    assert classify('SELECT "name" FROM users', "mysql", settings=ansi).read_only
    assert not classify('SELECT "sleep"(0)', "mysql", settings=ansi).read_only
    off = frozenset({"standard_conforming_strings=off"})
    # standard_conforming_strings on: '\\' is a whole string and a DELETE follows.
    assert not classify(
        "SELECT '\\'; DELETE FROM t; --'", "postgres", settings=frozenset()
    ).read_only
    assert classify("SELECT '\\'; DELETE FROM t; --'", "postgres", settings=off).read_only


_ONLY = (
    "(only foreign_key_list, index_info, index_list, index_xinfo, table_info, table_list, "
    "table_xinfo)"
)
PRAGMAS = [
    # (statement, reason; "" = read-only)
    ("PRAGMA table_info(users)", ""),
    ("PRAGMA main.table_xinfo(users)", ""),
    ("PRAGMA main . index_list(users)", ""),
    ('PRAGMA "table_info"(users)', ""),
    ("PRAGMA TABLE_INFO('users')", ""),
    ("PRAGMA index_info = users_pk", ""),
    ("PRAGMA foreign_key_list", ""),
    ("PRAGMA table_info(1)", ""),
    ("PRAGMA 'main'.table_info(users)", ""),  # SQLite takes a quoted schema name
    ("PRAGMA query_only = 0", f"PRAGMA query_only is not allowed {_ONLY}"),
    ("PRAGMA main.query_only", f"PRAGMA query_only is not allowed {_ONLY}"),
    ("PRAGMA x.y", f"PRAGMA y is not allowed {_ONLY}"),
    ("PRAGMA 'main'.query_only table_info", f"PRAGMA query_only is not allowed {_ONLY}"),
    ("PRAGMA main.foo.table_info(x)", f"PRAGMA foo is not allowed {_ONLY}"),
    ("PRAGMA", f"PRAGMA ? is not allowed {_ONLY}"),
    ("PRAGMA 5", f"PRAGMA ? is not allowed {_ONLY}"),
    ("PRAGMA table_info(users) = 1 + 1", "PRAGMA takes at most one table or index name"),
    ("PRAGMA table_info(users, x)", "PRAGMA takes at most one table or index name"),
    ("PRAGMA table_info users", "PRAGMA takes at most one table or index name"),
    ("PRAGMA table_info(users", "PRAGMA takes at most one table or index name"),
    ("PRAGMA table_info(users))", "PRAGMA takes at most one table or index name"),
    ("PRAGMA table_info[users]", "PRAGMA takes at most one table or index name"),
    ("PRAGMA table_info = (users)", "PRAGMA takes at most one table or index name"),
]


@pytest.mark.parametrize(("sql", "reason"), PRAGMAS)
def test_sqlite_pragma_rule_by_its_reason(sql: str, reason: str) -> None:
    """The classifier's own PRAGMA rule, with no engine behind it (mutation testing found it
    reached only through SQLite, whose read-only connection refuses the same statements)."""
    verdict = classify(sql, "sqlite")
    assert (verdict.read_only, verdict.reason) == (not reason, reason)


_ONE_OP = "OPERATOR(...) must name one operator"
_EXPLAIN = "EXPLAIN is only allowed for a read query, not for "
_STRING_OPTION = "an EXPLAIN option's value is a word (SERIALIZE TEXT), not a string"
_NOT_LISTED = "the function {}() is not on the postgres list of read-only functions"
# (dialect, statement, the start of the reason; "" = read-only). The classifier's own rules
# for EXPLAIN, MySQL's EXPLAIN/DESCRIBE of a table, PostgreSQL's OPERATOR(...) and the words
# that take a parenthesis only after an operand: mutation testing found them reached only by
# the server-backed tests, where the engine's read-only transaction hides a wrong answer.
CLASSIFIER_RULES = [
    ("postgres", "EXPLAIN SELECT 1", ""),
    ("postgres", "EXPLAIN (ANALYZE, COSTS OFF) SELECT * FROM t", ""),
    ("postgres", "EXPLAIN (FORMAT 'json') SELECT 1", ""),
    ("postgres", "EXPLAIN (FORMAT = 'json') SELECT 1", ""),
    # a string is the word it spells: 'binary' ran the columns' send functions (17+)
    ("postgres", "EXPLAIN (ANALYZE, SERIALIZE 'binary') SELECT 1", _STRING_OPTION),
    ("postgres", "EXPLAIN (ANALYZE, SERIALIZE $$binary$$) SELECT 1", _STRING_OPTION),
    ("postgres", "EXPLAIN (FORMAT 'json' 'binary') SELECT 1", _STRING_OPTION),
    ("postgres", "EXPLAIN (BUFFERS 1) SELECT 1", ""),
    ("postgres", "EXPLAIN (COSTS=OFF) SELECT 1", ""),
    ("postgres", "EXPLAIN VERBOSE WITH x AS (SELECT 1) SELECT * FROM x", ""),
    ("postgres", "EXPLAIN ANALYZE DELETE FROM t", _EXPLAIN + "DELETE"),
    ("postgres", "EXPLAIN", _EXPLAIN + "nothing"),
    ("postgres", "EXPLAIN t", _EXPLAIN + "T"),
    ("mysql", "EXPLAIN t", ""),
    ("mysql", "EXPLAIN db.t", ""),
    ("mysql", "EXPLAIN `t`", ""),
    ("mysql", "EXPLAIN db.t c", ""),
    ("mysql", "EXPLAIN FORMAT=JSON SELECT 1", ""),
    ("mysql", "EXPLAIN t.c.d", _EXPLAIN + "T"),
    ("mysql", "EXPLAIN 5", _EXPLAIN + "nothing"),
    ("mysql", "EXPLAIN . t", _EXPLAIN + "."),
    ("mysql", "EXPLAIN t.'c'", _EXPLAIN + "T"),
    ("mysql", "EXPLAIN DELETE FROM t", _EXPLAIN + "DELETE"),
    ("mysql", "DESCRIBE t", ""),
    ("mysql", "DESCRIBE db.t c", ""),
    ("mysql", "DESCRIBE t.c.d.e", "DESCRIBE takes a table name"),
    ("mysql", "DESCRIBE t(c)", "DESCRIBE takes a table name"),
    # tbl_name [col_name | wild]: one column name or quoted wildcard, nothing more
    ("mysql", "DESCRIBE t c", ""),
    ("mysql", "DESC `db`.`t` `c`", ""),
    ("mysql", "DESCRIBE t 'na%'", ""),
    ("mysql", "DESCRIBE t c d", "DESCRIBE takes a table name"),
    ("mysql", "DESCRIBE db.t c d", "DESCRIBE takes a table name"),
    ("mysql", "DESCRIBE db . t", ""),  # MySQL allows spaces around the dot
    ("mysql", "DESCRIBE t c.d", "DESCRIBE takes a table name"),
    ("mysql", "DESCRIBE 't'", "DESCRIBE takes a table name"),
    ("mysql", "EXPLAIN t c d", _EXPLAIN + "T"),
    ("mysql", "EXPLAIN a b c d", _EXPLAIN + "A"),
    ("postgres", "SELECT 1 OPERATOR(pg_catalog.+) 2", ""),
    ("postgres", "SELECT (1) OPERATOR(pg_catalog.+) 2", ""),
    ("postgres", "SELECT a OPERATOR(pg_catalog.+) f(1) FROM t", _NOT_LISTED.format("f")),
    ("postgres", "SELECT (1) OPERATOR(pg_catalog.+) like('x')", _NOT_LISTED.format("like")),
    ("postgres", "SELECT (a) OPERATOR(pg_catalog.+) (b) FROM t", ""),
    ("postgres", "SELECT (a) OPERATOR(pg_catalog.+) (f(b)) FROM t", _NOT_LISTED.format("f")),
    # "(" after punctuation groups, and what it holds is checked; nothing is called through
    # ")(", "](", ".(" or ":("
    ("postgres", "SELECT * FROM t WHERE a = (SELECT max(a) FROM t)", ""),
    ("postgres", "SELECT * FROM t WHERE a = (SELECT f(a) FROM t)", _NOT_LISTED.format("f")),
    ("postgres", "SELECT a, (b + 1) FROM t", ""),
    ("postgres", "SELECT a, (pg_sleep(1)) FROM t", _NOT_LISTED.format("pg_sleep")),
    ("postgres", "SELECT ((f(1)))", _NOT_LISTED.format("f")),
    ("postgres", "SELECT a FROM t GROUP BY GROUPING SETS ((a, b), (a), ())", ""),
    ("mysql", "SELECT 1 + (2) * (3)", ""),
    ("sqlite", "SELECT a FROM t WHERE (a, b) IN ((1, 2), (3, 4))", ""),
    # BY after ORDER/GROUP/PARTITION/CONNECT/SIBLINGS and WHEN inside CASE are syntax;
    # elsewhere a word that is not reserved is a call
    ("oracle", "SELECT a FROM t ORDER BY (a * -1)", ""),
    ("oracle", "SELECT a FROM t ORDER SIBLINGS BY (a)", ""),
    ("oracle", "SELECT a FROM t START WITH a = 1 CONNECT BY (PRIOR a = b)", ""),
    ("oracle", "SELECT CASE WHEN (a > 1) THEN 1 WHEN (b) THEN 2 END FROM t", ""),
    ("oracle", "SELECT CASE a WHEN (1) THEN 2 END FROM t", ""),
    ("oracle", "SELECT a FROM t WHERE by(1)", "the function BY() is not on the oracle list"),
    ("oracle", "SELECT a FROM t ORDER BY by(1)", "the function BY() is not on the oracle list"),
    ("oracle", "SELECT when(1) FROM t", "the function WHEN() is not on the oracle list"),
    ("oracle", "SELECT CASE WHEN when(1) THEN 1 END FROM t", "the function WHEN() is not"),
    ("oracle", "SELECT CASE WHEN a THEN 1 END, when(2) FROM t", "the function WHEN() is not"),
    ("oracle", "SELECT CASE WHEN a THEN 1 END x WHEN (2) FROM t", "the function WHEN() is not"),
    ("oracle", "SELECT CASE WHEN a THEN CASE WHEN b THEN 1 END WHEN (c) THEN 2 END FROM t", ""),
    ("oracle", "SELECT CASE WHEN a THEN 1 END, CASE WHEN (b) THEN 2 END FROM t", ""),
    # a type's length after "::" (char, bit and time are not functions)
    ("postgres", "SELECT a::char(3), b::bit(2), c::time(3) FROM t", ""),
    ("postgres", "SELECT a FROM t WHERE char(3)", _NOT_LISTED.format("char")),
    # a name is folded as the engine folds it: ASCII letters only (U+017F, the long s, stays:
    # "\u017fum" is not sum, though Python's upper() makes it SUM), and PostgreSQL keeps the
    # first 63 bytes
    ("postgres", "SELECT \u017fum(1)", _NOT_LISTED.format("\u017fum")),
    ("mysql", "SELECT \u017fum(1)", "the function \u017fum() is not on the mysql list"),
    ("oracle", "SELECT \u017fum(1) FROM dual", "the function \u017fUM() is not on the oracle"),
    ("postgres", f"SELECT {'a' * 70}()", _NOT_LISTED.format("a" * 63)),
    ("postgres", f"SELECT {'é' * 40}()", _NOT_LISTED.format("é" * 31)),  # 2 bytes each
    # MySQL's sys schema functions: trusted by no name (an administrator may replace one,
    # under the definer mariadb.sys too)
    ("mysql", "SELECT sys.format_bytes(1024)", "the function sys.format_bytes() is not on"),
    ("mysql", "SELECT sys.ps_thread_id(NULL)", "the function sys.ps_thread_id() is not on"),
    ("mysql", "SELECT sys.format_bytes2(1)", "the function sys.format_bytes2() is not on"),
    ("postgres", "(SELECT 1) (2) OPERATOR", ")( is not a function call"),
    # each refusal in its own words (other rules would refuse some of these too)
    ("postgres", "SELECT 1 FOR UPDATE", "locking clauses (FOR UPDATE/SHARE) are not allowed"),
    ("mysql", "SELECT NEXT VALUE FOR s", "NEXT VALUE FOR advances a sequence"),
    ("mysql", "SELECT next value FOR s", "NEXT VALUE FOR advances a sequence"),
    ("mysql", "SELECT @a := 1", "assigning a user variable (:=) is not allowed: no state may"),
    ("mysql", "SELECT @a:=1", "assigning a user variable (:=) is not allowed: no state may"),
    ("mysql", "SELECT a FROM t WHERE b >= 1", ""),
    ("mysql", "DESC t c d", "DESC takes a table name"),
    # SHOW's first two words are names (SHOW CREATE PROCEDURE), the rest is checked
    ("mysql", "SHOW CREATE PROCEDURE p", ""),
    ("mysql", "SHOW CREATE TABLE INTO", "INTO is not allowed in a read-only statement"),
    ("mysql", "SHOW TABLES FROM db LIKE 'x' INTO OUTFILE '/tmp/x'", "INTO is not allowed"),
    # write keywords are words, not names: quoted or qualified they are names
    ("postgres", 'SELECT "DELETE" FROM t', ""),
    ("postgres", "SELECT t.delete FROM t", ""),
    ("oracle", "SELECT dbms_x FROM t", ""),  # a package is refused where it qualifies a name
    ("oracle", "SELECT dbms_x.f(1) FROM t", "the package dbms_x has side effects"),
    ("postgres", "SELECT a value FROM t", ""),
    ("postgres", "SELECT next FROM t", ""),
    ("mysql", "SELECT * FROM t WHERE a > ANY (SELECT", "a ( is never closed"),
    # statements with no kind to judge
    ("postgres", "((SELECT 1))", ""),
    ("postgres", "((", "the statement does not start with a keyword"),
    ("postgres", "(1)", "the statement does not start with a keyword"),
    # a subquery after a word that is not reserved in the dialect (MySQL's ANY and SOME)
    ("mysql", "SELECT * FROM t WHERE a > ANY (SELECT a FROM t)", ""),
    ("mysql", "SELECT * FROM t WHERE a > SOME (WITH c AS (SELECT 1) SELECT * FROM c)", ""),
    ("mysql", "SELECT * FROM t WHERE a > ANY (1)", "the function any() is not on the mysql list"),
    ("postgres", "SELECT (a)(b) FROM t", ")( is not a function call"),
    ("postgres", "SELECT (x OPERATOR(pg_catalog.+) y) (1)", ")( is not a function call"),
    ("postgres", "SELECT ((a) OPERATOR(pg_catalog.+) (b)) (1)", ")( is not a function call"),
    # parentheses must pair up, whatever else the statement holds
    ("postgres", "WITH 1) a(x) AS (SELECT 1) SELECT 1", "a ) closes no ("),
    ("postgres", "SELECT 1) pg_sleep(1", "a ) closes no ("),
    ("mysql", "SELECT (1", "a ( is never closed"),
    ("sqlite", "SELECT ((1)", "a ( is never closed"),
    ("sqlite", "SELECT (1))", "a ) closes no ("),
    ("postgres", "SELECT ')' || (')')", ""),
    ("postgres", "SELECT (a) + (b)(c) FROM t", ")( is not a function call"),
    ("postgres", "SELECT a[1](2) FROM t", "]( is not a function call"),
    ("postgres", "SELECT t.(a) FROM t", ".( is not a function call"),
    ("postgres", "SELECT a::(int) FROM t", ":( is not a function call"),
    ("postgres", "SELECT * FROM t WHERE a LIKE ('x')", ""),
    ("postgres", "SELECT * FROM t WHERE 'a' LIKE ('x')", ""),
    ("postgres", "SELECT * FROM t WHERE $1 LIKE ('x')", ""),
    ("postgres", "SELECT * FROM t WHERE 1 BETWEEN (0) AND (2)", ""),
    ("postgres", "SELECT * FROM t WHERE (a) LIKE ('x')", ""),
    ("postgres", "SELECT * FROM t WHERE a[1] LIKE ('x')", ""),
    ("postgres", "SELECT count(*) OVER (PARTITION BY a) FROM t", ""),
    ("postgres", "SELECT x FROM t, LATERAL (SELECT 1) s", ""),
    ("postgres", "SELECT over(1)", _NOT_LISTED.format("over")),
    ("postgres", "SELECT 1 WHERE like('x')", _NOT_LISTED.format("like")),
    ("postgres", "SELECT * FROM t WHERE NOT like('x')", _NOT_LISTED.format("like")),
    ("postgres", "SELECT f(a) LIKE ('x') FROM t", _NOT_LISTED.format("f")),
    # words that take a parenthesis as syntax only in their place; elsewhere they are calls
    ("postgres", "SELECT a, count(*) FROM t GROUP BY ROLLUP (a)", ""),
    ("postgres", "SELECT a FROM t GROUP BY CUBE (a, b)", ""),
    ("postgres", "SELECT a FROM t ORDER BY cube (a)", _NOT_LISTED.format("cube")),
    ("postgres", "SELECT rollup (a) FROM t", _NOT_LISTED.format("rollup")),
    ("postgres", "SELECT a FROM t GROUP BY f (a)", _NOT_LISTED.format("f")),
    ("postgres", "SELECT a FROM t GROUP BY GROUPING SETS (a, b)", ""),
    ("postgres", "SELECT sets (1)", _NOT_LISTED.format("sets")),
    ("postgres", "WITH x AS NOT MATERIALIZED (VALUES (1)) SELECT * FROM x", ""),
    ("postgres", "WITH x AS MATERIALIZED (TABLE t) SELECT * FROM x", ""),
    ("postgres", "SELECT materialized (1)", _NOT_LISTED.format("materialized")),
    ("postgres", "SELECT '1'::numeric(10, 2)", ""),
    # a table function's column types (MariaDB writes JSON_TABLE's as int(11)); no call
    # stands there, and anywhere else in it one is still judged
    (
        "mysql",
        "SELECT jt.x FROM JSON_TABLE('[1]', '$[*]' COLUMNS (x int(11) PATH '$', "
        "`y` decimal(10,2) PATH '$', n FOR ORDINALITY, NESTED PATH '$.a' COLUMNS "
        "(z varchar(3) PATH '$', e enum('a') PATH '$'))) jt",
        "",
    ),
    (
        "mysql",
        "SELECT 1 FROM JSON_TABLE('[1]', '$' COLUMNS (x int PATH '$' DEFAULT f(1) ON EMPTY)) j",
        "the function f() is not on the mysql list",
    ),
    ("mysql", "SELECT columns(a, b f(1)) FROM t", "the function columns() is not on the mysql"),
    # XMLTABLE's COLUMNS list has no parentheses of its own: it runs to the call's end
    (
        "postgres",
        "SELECT * FROM XMLTABLE('/r' PASSING d COLUMNS a char(2) PATH 'a', b decimal(5,2), "
        "n FOR ORDINALITY, c bit(3) DEFAULT '1') x",
        "",
    ),
    (
        "postgres",
        "SELECT * FROM XMLTABLE('/r' PASSING d COLUMNS a text PATH f(1), b char(1)) x",
        _NOT_LISTED.format("f"),
    ),
    ("postgres", "SELECT * FROM XMLTABLE('/r' PASSING d COLUMNS a int), b f(1)",
     _NOT_LISTED.format("f")),
    ("postgres", "SELECT * FROM (SELECT 1 FROM columns, LATERAL f(1)) s", _NOT_LISTED.format("f")),
    (
        "oracle",
        "SELECT x.a FROM d, XMLTABLE('/r' PASSING d.doc COLUMNS a VARCHAR2(10) PATH 'a', "
        "b NUMBER(5,2) PATH 'b') x",
        "",
    ),
    ("mysql", "SELECT x FROM t WHERE a IN (b, c f(1))", "the function f() is not on the mysql"),
    ("postgres", "SELECT '1'::character varying(3)", ""),
    ("postgres", "SELECT CAST('1' AS varchar(3))", ""),
    ("postgres", "SELECT varying(3)", _NOT_LISTED.format("varying")),
    ("postgres", "SELECT x FROM t AS a (x)", ""),
    ("postgres", "SELECT 1 = ANY (SELECT 1)", ""),
    ("postgres", "SELECT 1 WHERE EXISTS (WITH a AS (SELECT 1) SELECT 1 FROM a)", ""),
    # a CTE's column list is not a call; everything else after WITH still is
    ("postgres", "WITH a(x) AS (SELECT 1) SELECT x FROM a", ""),
    ("postgres", "WITH a(x, y) AS (SELECT 1, 2) SELECT * FROM a", ""),
    ("postgres", "WITH a(x) AS (SELECT (1)) SELECT x FROM a", ""),
    ("postgres", "WITH RECURSIVE a(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM a WHERE n < 3) "
                 "SELECT * FROM a", ""),
    ("postgres", "WITH a(x) AS (SELECT 1), b(y) AS NOT MATERIALIZED (SELECT 2), "
                 "c(z) AS MATERIALIZED (SELECT 3) SELECT * FROM a, b, c", ""),
    ("postgres", "WITH a AS (SELECT 1), b(y) AS (SELECT 2) SELECT * FROM b", ""),
    ("postgres", "SELECT * FROM t WHERE x IN (WITH a(x) AS (SELECT 1) SELECT x FROM a)", ""),
    ("postgres", "WITH a(x) AS (SELECT 1) SELECT b(1) FROM a", _NOT_LISTED.format("b")),
    ("postgres", "WITH a(x) AS (SELECT 1), b(y) AS (SELECT 2) SELECT c(1)",
     _NOT_LISTED.format("c")),
    ("postgres", "WITH a(x) AS (SELECT 1) , b AS (SELECT 2) SELECT d(1)", _NOT_LISTED.format("d")),
    ("postgres", "WITH a(x) AS (SELECT 1) SELECT * FROM a(1)", _NOT_LISTED.format("a")),
    ("postgres", "WITH a(x) AS (SELECT (1)), b(y) AS (SELECT 2) SELECT * FROM b", ""),
    ("postgres", "WITH a AS MATERIALIZED (SELECT 1), b(y) AS (SELECT 2) SELECT * FROM b", ""),
    # a CTE list is walked only where each body is a parenthesis
    ("postgres", "WITH a(x) AS $$x$$ (SELECT 1), b(y) AS (SELECT 2) SELECT 1",
     _NOT_LISTED.format("b")),
    ("postgres", "EXPLAIN TABLE t", ""),
    ("postgres", "EXPLAIN SHOW x", _EXPLAIN + "SHOW"),
    # a schema-qualified name is judged whole, whatever precedes it
    ("postgres", "SELECT pg_catalog.now()", ""),
    ("postgres", "SELECT (s.now())", _NOT_LISTED.format("s.now")),
    ("postgres", "SELECT 1, s.now()", _NOT_LISTED.format("s.now")),
    ("postgres", "SELECT a.b.now()", _NOT_LISTED.format("a.b.now")),
    # OPERATOR(...) names exactly one built-in operator
    ("postgres", "SELECT 1 OPERATOR(+) 2", ""),
    ("postgres", 'SELECT 1 OPERATOR("pg_catalog".+) 2', ""),
    ("postgres", "SELECT 1 OPERATOR(pg_catalog) 2", _ONE_OP),
    ("postgres", "SELECT 1 OPERATOR(pg_catalog.) 2", _ONE_OP),
    ("postgres", "SELECT 1 OPERATOR() 2", _ONE_OP),
    ("postgres", "SELECT 1 OPERATOR(a.b.+) 2", _ONE_OP),
    ("postgres", "SELECT 1 OPERATOR(pg_catalog.pg_catalog.+) 2", _ONE_OP),
    ("postgres", "SELECT 1 OPERATOR(pg_catalog.+ 2", _ONE_OP),
    ("postgres", "SELECT 1 OPERATOR(public.+) 2",
     "OPERATOR(public.…) names a user operator, which may run a user function"),
]  # fmt: skip


def test_classify_never_raises_on_a_cut_off_cte() -> None:
    """Every prefix of a statement with each CTE form gets a verdict (no IndexError)."""
    full = (
        "WITH RECURSIVE a(x) AS NOT MATERIALIZED (SELECT (1)), b(y) AS (SELECT 2) "
        "SELECT * FROM a, b"
    )
    for end in range(len(full) + 1):
        assert isinstance(classify(full[:end], "postgres").read_only, bool)
        # with a call before it, the CTE walk runs on the cut-off tail too
        assert isinstance(classify("SELECT now() " + full[:end], "postgres").read_only, bool)


def test_check_read_only_passes_the_settings_and_names_the_kinds() -> None:
    sql = "SELECT 'O\\'Brien'"
    assert check_read_only(sql, "mysql", settings=frozenset()).read_only
    with pytest.raises(StatementRefused):
        check_read_only(sql, "mysql")  # unknown sql_mode: every reading must accept it
    with pytest.raises(StatementRefused) as info:
        check_read_only("DELETE FROM t", "sqlite")
    assert str(info.value) == (
        "DELETE statements are not read-only. Only single read-only statements run here "
        "(EXPLAIN, PRAGMA, SELECT, VALUES, WITH); quote identifiers that look like keywords."
    )


@pytest.mark.parametrize(
    ("sql", "verdict"),
    [
        ("", Verdict(kind="", read_only=False, reason="empty statement")),
        (" ; ", Verdict(kind="", read_only=False, reason="empty statement")),
        (
            "SELECT 1; SELECT 2",
            Verdict(
                kind="", read_only=False, reason="more than one statement (exactly one is allowed)"
            ),
        ),
        (
            "(1)",
            Verdict(kind="", read_only=False, reason="the statement does not start with a keyword"),
        ),
        (
            "DELETE FROM t",
            Verdict(kind="DELETE", read_only=False, reason="DELETE statements are not read-only"),
        ),
        ("(SELECT 1)", Verdict(kind="SELECT", read_only=True, reason="")),
        (
            "SELECT 'a",
            Verdict(kind="", read_only=False, reason="unterminated ' quote (at character 8)"),
        ),
    ],
)
def test_the_whole_verdict(sql: str, verdict: Verdict) -> None:
    assert classify(sql, "postgres") == verdict


def test_a_reading_that_fails_keeps_the_kind_an_earlier_reading_found() -> None:
    """MySQL is read with and without backslash escapes; 'a\\'b' is one string only with them."""
    assert classify("SELECT 'a\\'b'", "mysql") == Verdict(
        kind="SELECT", read_only=False, reason="unterminated ' quote (at character 13)"
    )


def test_allowed_functions_fold_as_the_dialect_folds_names() -> None:
    """MySQL function names are case-insensitive, so a vetted ``MyFunc`` allows ``MYFUNC()``,
    and its database names are not; PostgreSQL keeps the catalog's spelling: ``"MyFunc"()``
    is allowed, ``myfunc()`` is not."""
    mine = frozenset({"MyFunc"})
    assert classify("SELECT MYFUNC(1)", "mysql", allowed_functions=mine).read_only
    assert classify('SELECT "MyFunc"(1)', "postgres", allowed_functions=mine).read_only
    assert not classify("SELECT myfunc(1)", "postgres", allowed_functions=mine).read_only
    # a database's name is told apart by case (lower_case_table_names=0): RHO is not rho
    vetted = frozenset({"rho.Safe"})
    assert classify("SELECT rho.SAFE(1)", "mysql", allowed_functions=vetted).read_only
    refused = classify("SELECT RHO.safe(1)", "mysql", allowed_functions=vetted)
    assert refused.reason.startswith("the function RHO.safe() is not on the mysql list")


def test_an_allowed_function_cannot_be_named_like_a_write_keyword() -> None:
    """An administrator's allowed_functions never lets ``DELETE(...)`` through: the word is
    refused before the name is looked up (only REPLACE and INSERT are also string functions)."""
    allowed = frozenset({"delete", "replace"})
    verdict = classify("SELECT delete(1)", "postgres", allowed_functions=allowed)
    assert verdict.reason == "DELETE is not allowed in a read-only statement"
    assert classify(
        "SELECT replace('a', 'b', 'c')", "postgres", allowed_functions=allowed
    ).read_only


def test_the_statement_shape_is_found_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """CTE names and CASE nesting are found once per statement and reading, not once per
    call (that made a statement with thousands of calls take seconds)."""
    calls: list[int] = []
    real = call_syntax._cte_names

    def counted(stmt: Any) -> frozenset[int]:
        calls.append(len(stmt))
        names: frozenset[int] = real(stmt)
        return names

    monkeypatch.setattr(call_syntax, "_cte_names", counted)
    sql = "SELECT CASE WHEN (a) THEN lower(b) END, " + ", ".join(["upper(a)"] * 50) + " FROM t"
    assert classify(sql, "oracle").read_only
    assert len(calls) == 1


def test_an_unlisted_function_is_refused_with_the_whole_explanation() -> None:
    assert classify("SELECT f(1)", "postgres").reason == (
        "the function f() is not on the postgres list of read-only functions (a user function "
        "can write; an administrator can allow a vetted one with the alias's "
        "options.allowed_functions)"
    )


@pytest.mark.parametrize(("dialect_name", "sql", "reason"), CLASSIFIER_RULES)
def test_classifier_rule_by_its_reason(dialect_name: str, sql: str, reason: str) -> None:
    verdict = classify(sql, dialect_name)
    assert verdict.read_only is (not reason), verdict.reason
    assert verdict.reason.startswith(reason)
    if not reason:
        assert verdict.reason == ""


# Quoting the lexer must read exactly like the server: Oracle q'...' quotes, PostgreSQL
# dollar quotes and U&"..." identifiers with UESCAPE (comments allowed before it). A lexer
# that ends a quote too early or too late would judge words that are really inside a string,
# or miss ones that are not.
_READ_FILE = _NOT_LISTED.format("pg_read_file")
_MANY = "more than one statement (exactly one is allowed)"
_EXECUTABLE = "MySQL executable comments (/*! ... */) are refused (at character 8)"
LEXING_RULES = [
    # what follows a comment is still read: a second statement after the first line break
    ("mysql", "SELECT 1 # c\n; DELETE FROM t\n", _MANY),
    ("postgres", "SELECT 1 -- c\n; DELETE FROM t\n", _MANY),
    ("mysql", "SELECT 1 --", ""),
    ("postgres", "SELECT /* /**/ */ 1", ""),
    ("sqlite", "SELECT [a]; DELETE FROM [t]", _MANY),
    ("sqlite", "SELECT [] FROM t; DELETE FROM [u]", _MANY),
    ("postgres", "SELECT $a$x$a$ || $b$;$b$", ""),
    ("postgres", "EXPLAIN (FORMAT $$json$$) SELECT 1", ""),
    ("postgres", "EXPLAIN (FORMAT U&'json') SELECT 1", ""),
    # UESCAPE: right after the string, after comments and line breaks, any non-hex character
    ("postgres", "SELECT U&'x' UESCAPE'!'", ""),
    ("postgres", "SELECT U&'aXbX0063' UESCAPE 'X'", ""),
    ("postgres", "SELECT U&'x' UESCAPE 'A'", "invalid UESCAPE character 'A' (at character 13)"),
    ("postgres", "SELECT 1,\n U&\"pg_r!0065ad_file\" -- c\n UESCAPE '!' ('/x')", _READ_FILE),
    ("postgres", "SELECT U&\"pg_r!0065ad_file\" -- c\nUESCAPE '!' ('/x')", _READ_FILE),
    ("postgres", "SELECT 1,\n U&\"pg_r!0065ad_file\" /* c */ UESCAPE '!' ('/x')", _READ_FILE),
    # comments: nested in PostgreSQL, MySQL's executable ones refused (/*m! is a comment:
    # checked on MariaDB), each refusal with its position
    ("postgres", "SELECT 1 /* x", "unterminated /* comment (at character 10)"),
    ("postgres", "SELECT /* a /* b */ c */ 1", ""),
    ("postgres", "SELECT /* a /* b */ 1", "unterminated /* comment (at character 8)"),
    ("postgres", "SELECT /* /* /* */ */ */ 1", ""),
    ("postgres", "SELECT 1 /* a *//* b */ + 2", ""),
    ("postgres", "SELECT 1 -- x\n; DELETE FROM t", _MANY),
    ("postgres", "SELECT 1 -- x; DELETE FROM t", ""),
    ("mysql", "SELECT /*! 1 */", _EXECUTABLE),
    ("mysql", "SELECT /*M! 1 */", _EXECUTABLE),
    ("mysql", "SELECT /*m! 1 */", ""),
    ("mysql", "SELECT 1 #x\n, 2", ""),
    # quoted identifiers and strings: doubled quotes, SQLite's [brackets], dollar quotes
    ("postgres", 'SELECT "a""b" FROM t', ""),
    ("postgres", 'SELECT "a"""; DELETE FROM t', _MANY),
    ("postgres", "SELECT 'a'''; DELETE FROM t", _MANY),
    ("postgres", "SELECT 'a''; DELETE FROM t'", ""),
    ("sqlite", "SELECT [a b] FROM t", ""),
    ("sqlite", "SELECT [a FROM t", "unterminated [ identifier (at character 8)"),
    ("sqlite", "SELECT [a]; DELETE FROM t", _MANY),
    ("sqlite", "SELECT ']', [;] FROM t", ""),
    ("postgres", "SELECT $$x", "unterminated dollar quote $$ (at character 8)"),
    ("postgres", "SELECT $a$x$b$", "unterminated dollar quote $a$ (at character 8)"),
    ("oracle", "SELECT q'[a'b]' FROM dual", ""),
    ("oracle", "SELECT q'[ '; DELETE FROM t; --]' FROM dual", ""),
    ("oracle", "SELECT q'{a'}' || q'<b'>' || q'(c')' || q'!d'!' FROM dual", ""),
    ("oracle", "SELECT Q'[x]' FROM dual", ""),
    ("oracle", "SELECT nq'[a'b]' FROM dual", ""),
    ("oracle", "SELECT q'[a]]' FROM dual", ""),
    ("oracle", "SELECT q'[abc FROM dual", "unterminated q'' quote (at character 9)"),
    ("oracle", "SELECT q' x ' FROM dual", "unterminated q'' quote (at character 9)"),
    ("oracle", "SELECT q'", "unterminated q'' quote (at character 9)"),
    ("oracle", "SELECT q'[x]'; DELETE FROM t", "more than one statement (exactly one is allowed)"),
    # a quote ends at its *first* closer, wherever other quotes are
    ("oracle", "SELECT q'[a]' FROM dual; DELETE FROM t; SELECT q'[b]' FROM dual", _MANY),
    ("oracle", "SELECT ']', q'[; DELETE FROM t; ]' FROM dual", ""),
    ("oracle", "SELECT q'[]' FROM dual", ""),
    ("postgres", "SELECT $t$a$t$; DELETE FROM x; SELECT $t$b$t$", _MANY),
    ("postgres", "SELECT $t$$t$", ""),
    ("postgres", "SELECT $$$$", ""),
    ("postgres", "SELECT $a1$x$a1$", ""),
    ("postgres", "SELECT $a b$; DELETE FROM t; $a b$", _MANY),  # a tag is one word
    ("postgres", "SELECT U&'\\' ; DELETE FROM t", _MANY),  # no backslash escapes in U&'...'
    ("postgres", "SELECT U&'x' UESCAPEX", ""),  # UESCAPEX is an alias, not UESCAPE
    ("postgres", "SELECT 1,\n U&\"x\" -- c\n UESCAPE '!' FROM t", ""),
    ("postgres", "SELECT U&\"pg_r!0065ad_file\" -- c\n UESCAPE '!' ('/x') -- d\n", _READ_FILE),
    ("postgres", "SELECT $$a'b$$", ""),
    ("postgres", "SELECT $t$ '; DELETE FROM x; $t$", ""),
    ("postgres", "SELECT $t$ a $u$ ; DELETE FROM x; $u$ $t$", ""),
    ("postgres", "SELECT $_a1$ ; DELETE FROM t; $_a1$", ""),
    ("postgres", "SELECT $1", ""),
    ("postgres", "SELECT a$b$ FROM t", ""),
    ("postgres", "SELECT $1$ DELETE $1$", "DELETE is not allowed in a read-only statement"),
    ("postgres", "SELECT $a$ x", "unterminated dollar quote $a$ (at character 8)"),
    ("postgres", "SELECT U&'d\\0061t\\+000061'", ""),
    ("postgres", 'SELECT U&"d\\0061ta" FROM t', ""),
    ("postgres", "SELECT U&\"d!0061ta\" UESCAPE '!' FROM t", ""),
    ("postgres", "SELECT U&\"x\" /* c */ UESCAPE '!' FROM t", ""),
    ("postgres", "SELECT U&\"x\" -- c\n UESCAPE '!' FROM t", ""),
    ("postgres", "SELECT U&\"x\"\t\r\n UESCAPE '!' FROM t", ""),
    ("postgres", "SELECT U&'x' uescape '!'", ""),
    ("postgres", "SELECT U&'x' UESCAPE 'a'", "invalid UESCAPE character 'a' (at character 13)"),
    ("postgres", "SELECT U&'x' UESCAPE '!!'", "UESCAPE must be followed by a one-character string"),
    ("postgres", "SELECT U&'x' UESCAPE", "UESCAPE must be followed by a one-character string"),
    ("postgres", "SELECT U&\"pg_r!0065ad_file\" UESCAPE '!' ('/x')", _READ_FILE),
    ("postgres", "SELECT U&\"pg_r\\0065ad_file\"('/x')", _READ_FILE),
    ("postgres", "SELECT U&\"a\" /* c */ FROM t", ""),  # a comment, then no UESCAPE
    ("postgres", "SELECT U&\"pg_r!0065ad_file\" UESCAPE '!'('/x')", _READ_FILE),
    ("postgres", "UESCAPE '!' SELECT U&\"d!0061\" --x", "UESCAPE statements are not"),
    ("oracle", "SELECT q'x'x' FROM dual", ""),  # the closer is searched after the opener
]  # fmt: skip


@pytest.mark.parametrize(("dialect_name", "sql", "reason"), LEXING_RULES)
def test_quotes_are_read_like_the_server(dialect_name: str, sql: str, reason: str) -> None:
    verdict = classify(sql, dialect_name)
    assert verdict.read_only is (not reason), verdict.reason
    assert verdict.reason.startswith(reason)
    if not reason:
        assert verdict.reason == ""


# Bind parameters per dialect: which characters start one, and that a lone "$", ":" or "@"
# (PostgreSQL's "::" cast included) stays punctuation.
PARAMS = [
    (
        "sqlite",
        "SELECT ?, ?1, :name, @x, $x, : , @",
        ["?", ",", "?1", ",", ":name", ",", "@x", ",", "$x", ",", ":", ",", "@"],
    ),
    ("postgres", "SELECT $1, $12, x::int", ["$1", ",", "$12", ",", "X", ":", ":", "INT"]),
    ("oracle", "SELECT :1, :name FROM dual", [":1", ",", ":name", "FROM", "DUAL"]),
    ("mysql", "SELECT ?, :x", ["?", ",", ":", "X"]),
]


@pytest.mark.parametrize(("engine", "sql", "texts"), PARAMS)
def test_bind_parameters_are_lexed_per_dialect(engine: str, sql: str, texts: list[str]) -> None:
    from rho_domain.sql.dialects import dialect
    from rho_domain.sql.tokens import Kind

    tokens = tokenize(sql, dialect(engine).readings[0])[1:]  # after SELECT
    assert [t.text for t in tokens] == texts
    params = [t.text for t in tokens if t.kind is Kind.PARAM]
    assert params == [t for t in texts if t[0] in "?:@$" and (len(t) > 1 or t == "?")]


def _corpus(table: dict[str, list[str]]) -> list[object]:
    return [
        pytest.param(engine, sql, id=f"{engine}-{i:03d}")
        for engine, statements in table.items()
        for i, sql in enumerate(statements)
    ]


# The MariaDB the server-backed tests start runs with the default sql_mode: backslash escapes
# on, no ANSI_QUOTES (the adapter reads the mode at connect time and passes it the same way).
_SERVER_SETTINGS = {"mysql": frozenset[str]()}


@pytest.mark.parametrize(("engine", "sql"), _corpus(ATTACKS))
def test_every_attack_of_the_corpus_is_refused_in_process(engine: str, sql: str) -> None:
    """The check alone, without a server: the corpus that test_db_adversarial runs against real
    engines, here in-process, so that mutation testing reaches the rules it exercises."""
    with pytest.raises(StatementRefused):
        check_read_only(sql.format(dir="/tmp/x"), engine, settings=_SERVER_SETTINGS.get(engine))


@pytest.mark.parametrize(("engine", "sql"), _corpus(ALLOWED))
def test_every_allowed_statement_of_the_corpus_passes_in_process(engine: str, sql: str) -> None:
    verdict = check_read_only(sql, engine, settings=_SERVER_SETTINGS.get(engine))
    assert verdict.read_only


# Numbers are one token, exponent signs included; a doubled quote inside a quoted identifier
# is one quote character of its name.
TOKEN_TEXTS = [
    (
        "postgres",
        "SELECT 1e+5, 1.5E-3, 2E+1, 3e-2, 0x1F, 1_000, .5",
        ["1e+5", ",", "1.5E-3", ",", "2E+1", ",", "3e-2", ",", "0x1F", ",", "1_000", ",", ".5"],
    ),
    ("postgres", 'SELECT "a""b", "c""", """d"', ['a"b', ",", 'c"', ",", '"d']),
    ("mysql", "SELECT `a``b`, 1E-2", ["a`b", ",", "1E-2"]),
    # an exponent sign belongs to the number only after e or E, and before a digit
    (
        "postgres",
        "SELECT 1X+5, 1e+,2, 1e-5",
        ["1X", "+", "5", ",", "1e", "+", ",", "2", ",", "1e-5"],
    ),
]

# Every string form is one STRING token whose text is "<string>": what a string holds never
# reaches the rules (a keyword inside a literal is never seen).
STRING_FORMS = [
    ("postgres", "'a b'"), ("postgres", "E'a\\' b'"), ("postgres", "$$a b$$"),
    ("postgres", "$t$a b$t$"), ("postgres", "U&'a b'"), ("postgres", "U&'a' UESCAPE '!'"),
    ("mysql", "'a\\' b'"), ("mysql", '"a b"'), ("oracle", "q'[a b]'"), ("oracle", "nq'!a b!'"),
    ("sqlite", "'a'' b'"),
]  # fmt: skip


_S, _W, _Q, _P = Kind.STRING, Kind.WORD, Kind.QUOTED, Kind.PUNCT

# (dialect, reading index, text after "SELECT ", tokens as (kind, text)). MySQL's readings
# (dialects.py): 0 "..." strings with backslash escapes, 1 "..." strings without escapes,
# 2 ANSI_QUOTES ("..." names) with escapes, 3 ANSI_QUOTES without.
WORD_TOKENS = [
    # a prefix glued to a quote is part of the literal, in any case
    *[("mysql", 0, f"{p}'a'", [(_S, "<string>")]) for p in ("N", "b", "X", "_utf8mb4")],
    *[("mysql", 0, f"{p}'a'", [(_S, "<string>")]) for p in ("_BINARY", "_latin1", "_Utf8")],
    *[("mysql", 0, f"{p}'a'", [(_S, "<string>")]) for p in ("n", "B", "x")],
    ("postgres", 0, "e'a\\'b'", [(_S, "<string>")]),  # E'' strings always honour backslashes
    ("postgres", 0, "u'a'", [(_S, "<string>")]),
    ("postgres", 0, "a'b'", [(_W, "A"), (_S, "<string>")]),  # not a prefix
    ("mysql", 1, "E'a\\'", [(_W, "E"), (_S, "<string>")]),  # no E'' strings in MySQL
    ("mysql", 0, "u&'x'", [(_W, "U"), (_P, "&"), (_S, "<string>")]),  # no U& in MySQL
    ("postgres", 0, "u 'x'", [(_W, "U"), (_S, "<string>")]),  # U& only when glued
    ("postgres", 0, "q'[x]'", [(_W, "Q"), (_S, "<string>")]),  # q'' is Oracle's
    ("oracle", 0, "a'x'", [(_W, "A"), (_S, "<string>")]),
    # quoted names: backslashes escape nothing in `...` nor in ANSI "..."
    ("mysql", 0, "`a\\` FROM t", [(_Q, "a\\"), (_W, "FROM"), (_W, "T")]),
    ("mysql", 2, '"a\\" FROM t', [(_Q, "a\\"), (_W, "FROM"), (_W, "T")]),
    # word characters: $ inside a name, anything above U+007F
    ("postgres", 0, "a$b", [(_W, "A$B")]),
    ("postgres", 0, "\x80a", [(_W, "\x80A")]),
]


@pytest.mark.parametrize(("engine", "reading", "text", "expected"), WORD_TOKENS)
def test_words_prefixes_and_quoted_names_tokenize_like_the_server(
    engine: str, reading: int, text: str, expected: list[tuple[Kind, str]]
) -> None:
    tokens = tokenize("SELECT " + text, dialect(engine).readings[reading])
    assert [(t.kind, t.text) for t in tokens[1:]] == expected


@pytest.mark.parametrize("char", ["\x01", "\x7f", "\\", "\x1b"])
def test_a_character_outside_any_literal_is_refused_by_name(char: str) -> None:
    assert classify(f"SELECT 1 {char}", "postgres").reason == (
        f"unexpected character {char!r} outside a literal (at character 10)"
    )


@pytest.mark.parametrize(("engine", "literal"), STRING_FORMS)
def test_a_string_is_one_token_that_hides_its_text(engine: str, literal: str) -> None:
    for rules in dialect(engine).readings:
        if ('"' in literal and not rules.double_quote_strings) or (
            engine == "mysql" and "\\" in literal and not rules.backslash_strings
        ):
            continue  # this reading (sql_mode) reads the text otherwise
        tokens = tokenize(f"SELECT {literal}", rules)
        assert tokens[1:] == (Token(Kind.STRING, "<string>"),), rules


@pytest.mark.parametrize(("engine", "sql", "texts"), TOKEN_TEXTS)
def test_numbers_and_quoted_names_are_single_tokens(
    engine: str, sql: str, texts: list[str]
) -> None:
    tokens = tokenize(sql, dialect(engine).readings[0])[1:]
    assert [t.text for t in tokens] == texts


def test_postgres_functions_that_run_a_type_named_in_a_string_are_refused() -> None:
    # PostgreSQL 16's pg_input_is_valid('x', 'public.dom') and pg_input_error_info run the
    # named type's input function and a domain's CHECK: a user's code, with the type named
    # only inside a string, where the catalog check (user casts, domains) cannot see it.
    for name in ("pg_input_is_valid", "pg_input_error_info"):
        verdict = classify(f"SELECT {name}('/etc/passwd', 'public.rho_dom')", "postgres")
        assert not verdict.read_only
        assert f"function {name}()" in verdict.reason


async def test_a_mysql_alias_on_a_port_that_never_greets_says_so_within_connect_timeout() -> None:
    # A mistyped port where something else listens that waits for the client to speak
    # first (PostgreSQL's 5432, an HTTP server): PyMySQL waited for the greeting without a
    # limit, so the call ran to the statement timeout and was reported as "the statement
    # timed out after 30 s", which sent the user to look at the SQL.
    pytest.importorskip("pymysql")
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()  # the kernel accepts; nobody ever speaks
        port = silent.getsockname()[1]
        config = DatabaseConfig(
            engine="mysql",
            host="127.0.0.1",
            port=port,
            database="app",
            options={"connect_timeout": 1, "statement_timeout": 4, "tls": "off"},
        )
        db = MysqlDatabase("maria", config)
        try:
            with pytest.raises(DatabaseError) as raised:
                await db.list_tables()
        finally:
            await db.aclose()
    said = str(raised.value)
    assert not isinstance(raised.value, StatementTimeout)
    assert f"maria: OperationalError: 127.0.0.1:{port} accepted the connection but sent no" in said
    assert said.endswith(
        "within 1 s (options.connect_timeout): something else may listen there; "
        "check databases.maria: host, port"
    )
