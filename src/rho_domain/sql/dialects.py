"""What each SQL dialect reads like and what it may run in read-only mode.

A ``Dialect`` bundles the lexer readings of the dialect (every one must pass), the statement
kinds allowed to start a read-only statement, and the functions and package prefixes that
have side effects even inside a read-only transaction (security-notes §3 and §4.3).
"""

from __future__ import annotations

import attrs

from rho_domain.sql.lexer import LexRules

DIALECTS = ("sqlite", "postgres", "mysql", "oracle", "vertica")


@attrs.frozen(kw_only=True)
class Dialect:
    name: str
    readings: tuple[LexRules, ...]
    read_kinds: frozenset[str]  # first keyword of an allowed statement
    denied_functions: frozenset[str] = frozenset()
    denied_prefixes: tuple[str, ...] = ()  # function names starting with these
    denied_packages: tuple[str, ...] = ()  # "pkg." qualifiers starting with these (Oracle)
    refused_words: frozenset[str] = frozenset()  # dialect keywords refused anywhere
    explain_options: frozenset[str] = frozenset()
    pragmas: frozenset[str] = frozenset()  # SQLite introspection pragmas


# Keywords that never belong in a read statement, wherever they appear (data-modifying
# CTEs, SELECT INTO, INTO OUTFILE, locking). Words followed by "(" are function calls and
# are judged by the function denylist instead (MySQL INSERT()/REPLACE() string functions).
REFUSED_WORDS = frozenset(
    {
        "INTO",
        "INSERT",
        "UPDATE",
        "DELETE",
        "MERGE",
        "UPSERT",
        "REPLACE",
        "TRUNCATE",
        "DROP",
        "CREATE",
        "ALTER",
        "GRANT",
        "REVOKE",
        "OUTFILE",
        "DUMPFILE",
        "LOCK",
        "ATTACH",
        "DETACH",
    }
)

SQLITE_PRAGMAS = frozenset(
    {"table_info", "table_xinfo", "index_list", "index_info", "index_xinfo", "foreign_key_list"}
)
SQLITE_DENIED_FUNCTIONS = frozenset(
    {"load_extension", "fts3_tokenizer", "readfile", "writefile", "edit", "zipfile"}
)

_PG_PREFIXES = (
    "pg_advisory",
    "pg_try_advisory",
    "pg_sleep",
    "pg_read_",
    "pg_ls_",
    "pg_stat_file",
    "pg_file_",
    "pg_logdir",
    "lo_",
    "dblink",
    "query_to_xml",
    "cursor_to_xml",
    "pg_terminate_backend",
    "pg_cancel_backend",
    "pg_reload_conf",
    "pg_rotate_logfile",
    "pg_switch_",
    "pg_create_",
    "pg_drop_",
    "pg_replication_",
    "pg_logical_",
    "pg_stat_reset",
    "pg_promote",
    "pg_backup_",
    "pg_start_backup",
    "pg_stop_backup",
    "pg_wal_replay_",
    "pg_log_backend",
    "pg_import_",
    "pg_notify",
    "binary_upgrade_",
    "txid_current",
    "pg_current_xact_id",
    "pg_export_snapshot",
)
_PG_FUNCTIONS = frozenset({"set_config", "nextval", "setval", "lastval", "pg_notify"})

_MYSQL_FUNCTIONS = frozenset(
    {
        "load_file",
        "sleep",
        "benchmark",
        "get_lock",
        "release_lock",
        "release_all_locks",
        "master_pos_wait",
        "source_pos_wait",
        "master_gtid_wait",
        "sys_exec",
        "sys_eval",
        "nextval",
        "setval",
        "lastval",
    }
)

_ORACLE_FUNCTIONS = frozenset({"httpuritype", "sleep"})
_ORACLE_PACKAGES = ("dbms_", "utl_", "ctxsys", "owa_", "kupp$", "wpg_")

_VERTICA_PREFIXES = (
    "export_",
    "purge",
    "drop_",
    "analyze_",
    "close_",
    "interrupt_",
    "cancel_",
    "set_",
    "make_",
    "do_tm_",
    "start_",
    "refresh",
    "clear_",
    "reset_",
    "shutdown",
    "copy_",
    "move_",
    "swap_",
    "alter_",
    "retire_",
    "restore_",
    "create_",
    "enable_",
    "disable_",
    "install_",
    "uninstall_",
    "rebalance",
    "mark_",
    "release_",
    "sync_",
    "flush_",
    "hurry_",
    "partition_",
    "add_",
    "remove_",
    "load_",
    "save_",
    "run_",
    "update_",
    "notify",
    "kill",
)
_VERTICA_FUNCTIONS = frozenset({"sleep", "nextval", "setval"})

_PG_EXPLAIN = frozenset(
    {
        "ANALYZE",
        "ANALYSE",
        "VERBOSE",
        "COSTS",
        "BUFFERS",
        "TIMING",
        "SUMMARY",
        "SETTINGS",
        "WAL",
        "GENERIC_PLAN",
        "SERIALIZE",
        "MEMORY",
        "FORMAT",
        "TEXT",
        "JSON",
        "XML",
        "YAML",
        "TRUE",
        "FALSE",
        "ON",
        "OFF",
        "NONE",
    }
)

_BASE = LexRules(dialect="base")

SQLITE = Dialect(
    name="sqlite",
    readings=(attrs.evolve(_BASE, dialect="sqlite", backtick_idents=True, bracket_idents=True),),
    read_kinds=frozenset({"SELECT", "WITH", "VALUES", "EXPLAIN", "PRAGMA"}),
    denied_functions=SQLITE_DENIED_FUNCTIONS,
    explain_options=frozenset({"QUERY", "PLAN"}),
    pragmas=SQLITE_PRAGMAS,
)

_PG_RULES = attrs.evolve(
    _BASE, dialect="postgres", nested_comments=True, e_strings=True, dollar_quotes=True
)
POSTGRES = Dialect(
    name="postgres",
    # standard_conforming_strings on (the default) and off: both readings must pass.
    readings=(_PG_RULES, attrs.evolve(_PG_RULES, backslash_strings=True)),
    read_kinds=frozenset({"SELECT", "WITH", "VALUES", "TABLE", "EXPLAIN", "SHOW"}),
    denied_functions=_PG_FUNCTIONS,
    denied_prefixes=_PG_PREFIXES,
    explain_options=_PG_EXPLAIN,
)

_MYSQL_RULES = attrs.evolve(
    _BASE,
    dialect="mysql",
    dash_needs_space=True,
    hash_comments=True,
    backslash_strings=True,
    double_quote_strings=True,
    backtick_idents=True,
    executable_comments=True,
)
MYSQL = Dialect(
    name="mysql",
    # The server may run with NO_BACKSLASH_ESCAPES or ANSI_QUOTES: every reading must pass.
    readings=(
        _MYSQL_RULES,
        attrs.evolve(_MYSQL_RULES, backslash_strings=False),
        attrs.evolve(_MYSQL_RULES, double_quote_strings=False),
    ),
    read_kinds=frozenset(
        {"SELECT", "WITH", "VALUES", "TABLE", "EXPLAIN", "SHOW", "DESCRIBE", "DESC"}
    ),
    denied_functions=_MYSQL_FUNCTIONS,
    refused_words=frozenset({"HANDLER", "PROCEDURE"}),
    explain_options=frozenset(
        {"FORMAT", "JSON", "TREE", "TRADITIONAL", "EXTENDED", "PARTITIONS", "ANALYZE", "="}
    ),
)

ORACLE = Dialect(
    name="oracle",
    readings=(attrs.evolve(_BASE, dialect="oracle", q_quotes=True),),
    # EXPLAIN PLAN writes PLAN_TABLE, so it is not a read statement here.
    read_kinds=frozenset({"SELECT", "WITH"}),
    denied_functions=_ORACLE_FUNCTIONS,
    denied_packages=_ORACLE_PACKAGES,
    refused_words=frozenset({"BEGIN", "DECLARE", "FUNCTION", "PROCEDURE", "EXECUTE"}),
)

_VERTICA_RULES = attrs.evolve(_BASE, dialect="vertica", e_strings=True, dollar_quotes=True)
VERTICA = Dialect(
    name="vertica",
    readings=(
        _VERTICA_RULES,
        attrs.evolve(_VERTICA_RULES, nested_comments=True),
        attrs.evolve(_VERTICA_RULES, backslash_strings=True),
    ),
    read_kinds=frozenset({"SELECT", "WITH", "EXPLAIN", "SHOW"}),
    denied_functions=_VERTICA_FUNCTIONS,
    denied_prefixes=_VERTICA_PREFIXES,
    refused_words=frozenset({"EXPORT", "CONNECT"}),
    explain_options=frozenset({"LOCAL", "VERBOSE", "JSON", "ANNOTATED", "GRAPHVIZ"}),
)

_BY_NAME = {d.name: d for d in (SQLITE, POSTGRES, MYSQL, ORACLE, VERTICA)}


def dialect(name: str) -> Dialect:
    """The dialect called ``name``; ``KeyError`` for an unknown one."""
    return _BY_NAME[name]
