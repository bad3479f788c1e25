"""Identifier spellings: every way a dialect lets one write a function name, per dialect.

``REFUSED[dialect]`` must be refused by the statement check (nothing reaches the server);
``ALLOWED[dialect]`` spells an allowlisted function the same ways and must run, which proves
the check decodes a spelling rather than refusing everything unusual. The corpus is
generated: every side-effect function of the dialect times every spelling and position.
"""

from __future__ import annotations

from collections.abc import Callable

Spelling = Callable[[str], str]  # function name -> how it is written before "("


def _u_first(name: str, escape: str = "\\") -> str:
    return f'U&"{escape}{ord(name[0]):04X}{name[1:]}"'


def _u_all(name: str) -> str:
    return 'U&"' + "".join(f"\\{ord(c):04X}" for c in name) + '"'


def _u_plus(name: str) -> str:
    return f'U&"{name[:-1]}\\+{ord(name[-1]):06X}"'


def _u_escape(char: str, between: str = " ") -> Spelling:
    return lambda n: f"{_u_first(n, char)}{between}UESCAPE '{char}'"


def _mixed(name: str) -> str:
    return "".join(c.upper() if i % 2 else c for i, c in enumerate(name))


PG_SPELLINGS: dict[str, Spelling] = {
    "plain": lambda n: n,
    "upper": str.upper,
    "mixed": _mixed,
    "quoted": lambda n: f'"{n}"',
    "qualified": lambda n: f"pg_catalog.{n}",
    "qualified-quoted": lambda n: f'"pg_catalog"."{n}"',
    "qualified-upper": lambda n: f"PG_CATALOG.{n.upper()}",
    "qualified-u&": lambda n: f'U&"\\0070g_catalog".{_u_first(n)}',
    "u&-first": _u_first,
    "u&-all": _u_all,
    "u&-plus": _u_plus,
    "uescape-bang": _u_escape("!"),
    "uescape-hash": _u_escape("#"),
    "uescape-tilde-comment": _u_escape("~", " /* c */ "),
    "uescape-newline": _u_escape("*", "\n"),
    "comments-between": lambda n: f"pg_catalog/**/./* x */{n}/**/",
    "nested-comment": lambda n: f"/* a /* b */ c */{n}",
    "line-comment": lambda n: f"pg_catalog -- c\n . {n} -- d\n",
    "whitespace": lambda n: f"pg_catalog\n.\t{n}\n",
}
PG_TARGETS = {
    "dblink_exec": "'host=127.0.0.1 dbname=rho', 'DELETE FROM users'",
    "dblink": "'dbname=rho', 'SELECT 1'",
    "pg_read_file": "'/etc/hostname'",
    "pg_ls_dir": "'.'",
    "pg_stat_file": "'.'",
    "pg_file_write": "'x', 'y', false",
    "lo_export": "1, '/tmp/rho-never'",
    "lo_import": "'/etc/hostname'",
    "pg_terminate_backend": "0",
    "pg_advisory_lock": "1",
    "pg_sleep": "0",
    "set_config": "'search_path', 'x', false",
    "nextval": "'order_seq'",
    "query_to_xml": "'SELECT 1', true, true, ''",
    "pg_reload_conf": "",
    "txid_current": "",
}
PG_POSITIONS: dict[str, Callable[[str], str]] = {
    "select": lambda call: f"SELECT {call}",
    "from": lambda call: f"SELECT * FROM {call} AS t",
    "slice": lambda call: f"SELECT (ARRAY[1, 2])[1:{call}::int]",
}
PG_EXTRA = [
    "WITH x AS (SELECT pg_sleep(0) AS v) SELECT * FROM x",
    "SELECT 1 WHERE EXISTS (SELECT U&\"\\0064blink_exec\"('x', 'y'))",
    "SELECT 1 OPERATOR(public.+) 1",
    'SELECT 1 OPERATOR("public".+) 1',
    'SELECT 1 OPERATOR(U&"\\0070ublic".+) 1',
    "SELECT ('/etc/hostname'::text).pg_read_file",
    "SELECT ('/etc/hostname'::text).U&\"pg_r\\0065ad_file\"",
    "SELECT ('order_seq'::regclass).nextval",
    "SELECT (u.name).lo_import FROM users u",
    'SELECT U&"\\D83D\\DE00"(1)',
    'SELECT U&"\\D83D"(1)',
    "SELECT public.evil()",
    'SELECT "Lower"(name) FROM users',
    "SELECT \u017fubstr('a', 1)",  # long s: ASCII-only folding keeps it a user name
    "SELECT * FROM ROWS FROM (pg_ls_dir('.'))",
    "SELECT * FROM json_to_record('{}') AS (a int), dblink('x', 'y') AS (b int)",
    "SELECT over(1)",
    "SELECT 1 OPERATOR(pg_catalog.+) dblink_exec('x', 'DELETE FROM users')",
    "SELECT 1 OPERATOR(+) over(1)",
    "SELECT 1 OPERATOR(pg_catalog.||) pg_read_file('/etc/hostname')",
    "SELECT 1 FROM users FETCH FIRST over(1) ROWS ONLY",
    "SELECT now() AT TIME ZONE filter('x')",
    "SELECT trim(BOTH over('x') FROM 'y')",
    "SELECT substring('x' FROM 1 FOR filter(1))",
    "SELECT ('users'::regclass).brin_summarize_new_values",
    "SELECT (0.5::float8).setseed",
    "SELECT ('users'::regclass).\"gin_clean_pending_list\"",
    "SELECT 1 FROM users u JOIN LATERAL pg_ls_dir('.') d ON true",
    'SELECT "pg_catalog".U&"!0070g_sleep" UESCAPE \'!\' (0)',
    "SELECT U&\"\\0070g_sleep\" UESCAPE '\\' (0)",
    "SELECT U&\"\\0070g_sleep\" UESCAPE '+' (0)",
    "SELECT U&\"\\0070g_sleep\" UESCAPE 'ab' (0)",
    'SELECT U&"\\zzzzg_sleep"(0)',
]
PG_ALLOWED = [
    "SELECT lower('X')",
    "SELECT LOWER('X')",
    "SELECT \"lower\"('X')",
    "SELECT pg_catalog.lower('X')",
    'SELECT "pg_catalog"."lower"(\'X\')',
    "SELECT U&\"\\006Cower\"('X')",
    "SELECT U&\"!006Cower\" UESCAPE '!' ('X')",
    "SELECT U&\"\\+00006Cower\"('X')",
    "SELECT pg_catalog/**/./**/lower/**/('X')",
    "SELECT 1 OPERATOR(pg_catalog.+) 1",
    "SELECT 1 OPERATOR(+) 1",
    "SELECT (name).upper FROM users",
    'SELECT U&"\\0069d" FROM users',
    "SELECT * FROM generate_series(1, 3) AS g(x)",
    "SELECT * FROM json_to_record('{\"a\": 1}') AS (a int)",
]

MYSQL_SPELLINGS: dict[str, Spelling] = {
    "plain": lambda n: n,
    "upper": str.upper,
    "mixed": _mixed,
    "backquoted": lambda n: f"`{n}`",
    "backquoted-upper": lambda n: f"`{n.upper()}`",
    "db-qualified": lambda n: f"rho.{n}",
    "db-qualified-quoted": lambda n: f"`rho`.`{n}`",
    "comment-between": lambda n: f"{n}/**/",
    "comment-inside-space": lambda n: f"{n} /* c */ ",
    "hash-comment": lambda n: f"{n} # c\n",
    "dash-comment": lambda n: f"{n} -- c\n",
    "newline": lambda n: f"\n{n}\n",
}
MYSQL_TARGETS = {
    "sleep": "0",
    "get_lock": "'a', 0",
    "release_lock": "'a'",
    "load_file": "'/etc/hostname'",
    "benchmark": "1, 1",
    "last_insert_id": "5",
    "master_pos_wait": "'x', 1, 0",
    "is_free_lock": "'a'",
    "sys_exec": "'id'",
    "nextval": "s",
}
MYSQL_POSITIONS: dict[str, Callable[[str], str]] = {
    "select": lambda call: f"SELECT {call}",
    "where": lambda call: f"SELECT 1 FROM users WHERE {call} IS NULL",
    "order": lambda call: f"SELECT id FROM users ORDER BY {call}",
}
MYSQL_EXTRA = [
    "SELECT * FROM (SELECT sleep(0) AS v) d",
    "SELECT @evil := 1",
    "SELECT @evil:=1",
    "SELECT @`evil` := 1",
    "SELECT @'evil' := 1",
    'SELECT @"evil" := 1',
    "SELECT @evil := id FROM users",
    "SELECT * FROM users WHERE (@x := id) > 0",
    "SELECT 1 INTO @x",
    "SET @x = 1",
    "SET @x := 1",
    "SELECT /*!sleep(0)*/ 1",
    "SELECT /*!50000 sleep(0)*/",
    "/*!50000 SELECT */ sleep(0)",
    "SELECT /*M!100000 sleep(0) */ 1",
    "SELECT 1sleep(0)",
    "SELECT sys.ps_setup_enable_thread(1)",
    "SELECT sys.format_bytes(1024)",
    "SELECT any(1)",
    "SELECT NEXT VALUE FOR s",
    "SELECT next value for rho.s",
]
MYSQL_ALLOWED = [
    "SELECT lower('X')",
    "SELECT LOWER('X')",
    "SELECT `lower`('X')",
    "SELECT lower/**/('X')",
    "SELECT @x",
    "SELECT @@version",
    "SELECT @x = 1",
    "SELECT name FROM users WHERE name = 'O\\'Brien'",
]

SQLITE_SPELLINGS: dict[str, Spelling] = {
    "plain": lambda n: n,
    "upper": str.upper,
    "mixed": _mixed,
    "double-quoted": lambda n: f'"{n}"',
    "bracketed": lambda n: f"[{n}]",
    "backquoted": lambda n: f"`{n}`",
    "schema-qualified": lambda n: f"main.{n}",
    "comment-between": lambda n: f"{n}/**/",
    "line-comment": lambda n: f"{n} -- c\n",
    "newline": lambda n: f"\n{n}\n",
}
SQLITE_TARGETS = {
    "load_extension": "'/tmp/rho-evil'",
    "readfile": "'/etc/hostname'",
    "writefile": "'/tmp/rho-never', 'x'",
    "fts3_tokenizer": "'simple'",
    "edit": "'x', 'true'",
    "zipfile": "'/tmp/rho-never.zip'",
}
SQLITE_POSITIONS: dict[str, Callable[[str], str]] = {
    "select": lambda call: f"SELECT {call}",
    "cte": lambda call: f"WITH x AS (SELECT {call} AS v) SELECT * FROM x",
    "where": lambda call: f"SELECT 1 FROM users WHERE {call} IS NULL",
}
SQLITE_EXTRA = [
    "SELECT $x(load_extension('y'))",
    "SELECT :x(load_extension('y'))",
]
SQLITE_ALLOWED = [
    "SELECT lower('X')",
    "SELECT LOWER('X')",
    "SELECT [lower]('X')",
    "SELECT `lower`('X')",
    "SELECT lower/**/('X')",
]

ORACLE_SPELLINGS: dict[str, Spelling] = {
    "plain": lambda n: n,
    "lower": str.lower,
    "quoted": lambda n: ".".join(f'"{p}"' for p in n.split(".")),
    "sys-qualified": lambda n: f"SYS.{n}",
    "sys-quoted": lambda n: 'SYS."' + n.replace(".", '"."') + '"',
    "spaces": lambda n: n.replace(".", " . "),
    "comments": lambda n: n.replace(".", "/**/./* x */"),
    "newlines": lambda n: n.replace(".", "\n.\n"),
}
ORACLE_TARGETS = {
    "DBMS_LOCK.SLEEP": "1",
    "DBMS_PIPE.RECEIVE_MESSAGE": "'x', 1",
    "UTL_HTTP.REQUEST": "'http://evil.example'",
    "UTL_INADDR.GET_HOST_ADDRESS": "'evil.example'",
    "DBMS_SCHEDULER.RUN_JOB": "'x'",
    "DBMS_XMLGEN.GETXML": "'DELETE FROM users'",
}
ORACLE_EXTRA = [
    "SELECT evil_fn(1) FROM dual",
    'SELECT "EVIL"() FROM dual',
    "SELECT scott.evil(1) FROM dual",
    'SELECT "upper"(x) FROM dual',
    "SELECT HTTPURITYPE('http://evil').getclob() FROM dual",
    "SELECT dbms_lock.sleep FROM dual",
    "SELECT x FROM TABLE(evil_pipe())",
    "SELECT order_seq.NEXTVAL FROM dual",
    "SELECT limit(1) FROM dual",
    "SELECT except(1) FROM dual",
    'SELECT "ORDER_SEQ"."NEXTVAL" FROM dual',
]
ORACLE_ALLOWED = [
    "SELECT UPPER(x) FROM dual",
    "SELECT upper(x) FROM dual",
    'SELECT "UPPER"(x) FROM dual',
    "SELECT NVL(a, b), SYS_CONTEXT('USERENV', 'DB_NAME') FROM dual",
    "SELECT a FROM t JOIN u USING (id) WHERE EXISTS (SELECT 1 FROM dual)",
]

VERTICA_SPELLINGS: dict[str, Spelling] = {
    "plain": lambda n: n,
    "upper": str.upper,
    "mixed": _mixed,
    "quoted": lambda n: f'"{n}"',
    "quoted-upper": lambda n: f'"{n.upper()}"',
    "u&-first": lambda n: _u_first(n.upper()),
    "u&-all": _u_all,
    "uescape": _u_escape("!"),
    "qualified": lambda n: f"v_catalog.{n}",
    "public": lambda n: f"public.{n}",
    "comments": lambda n: f"{n}/**/",
}
VERTICA_TARGETS = {
    "close_all_sessions": "",
    "close_session": "'x'",
    "export_objects": "'/tmp/x', ''",
    "purge_table": "'users'",
    "drop_partitions": "'users', 1, 2",
    "interrupt_statement": "'s', 1",
    "make_ahm_now": "",
    "do_tm_task": "'mergeout'",
    "set_config_parameter": "'x', 1",
    "sleep": "1",
}
VERTICA_ALLOWED = [
    "SELECT UPPER('x')",
    "SELECT \"upper\"('x')",
    "SELECT U&\"\\0075pper\"('x')",
    "SELECT lower('X'), now()",
    "SELECT x FROM t WHERE x BETWEEN (1) AND (2) AND EXISTS (SELECT 1)",
]


def _generate(
    targets: dict[str, str],
    spellings: dict[str, Spelling],
    positions: dict[str, Callable[[str], str]],
) -> list[tuple[str, str]]:
    cases = []
    for name, args in targets.items():
        for spelling, spell in spellings.items():
            for position, place in positions.items():
                sql = place(f"{spell(name)}({args})")
                cases.append((f"{name}-{spelling}-{position}", sql))
    return cases


def _extra(items: list[str]) -> list[tuple[str, str]]:
    return [(f"extra-{i:02d}", sql) for i, sql in enumerate(items)]


_ORACLE_AT = {"select": lambda call: f"SELECT {call} FROM dual"}
_VERTICA_AT = {"select": lambda call: f"SELECT {call}"}

REFUSED: dict[str, list[tuple[str, str]]] = {
    "postgres": _generate(PG_TARGETS, PG_SPELLINGS, PG_POSITIONS) + _extra(PG_EXTRA),
    "mysql": _generate(MYSQL_TARGETS, MYSQL_SPELLINGS, MYSQL_POSITIONS) + _extra(MYSQL_EXTRA),
    "sqlite": _generate(SQLITE_TARGETS, SQLITE_SPELLINGS, SQLITE_POSITIONS) + _extra(SQLITE_EXTRA),
    "oracle": _generate(ORACLE_TARGETS, ORACLE_SPELLINGS, _ORACLE_AT) + _extra(ORACLE_EXTRA),
    "vertica": _generate(VERTICA_TARGETS, VERTICA_SPELLINGS, _VERTICA_AT),
}
ALLOWED: dict[str, list[str]] = {
    "postgres": PG_ALLOWED,
    "mysql": MYSQL_ALLOWED,
    "sqlite": SQLITE_ALLOWED,
    "oracle": ORACLE_ALLOWED,
    "vertica": VERTICA_ALLOWED,
}
