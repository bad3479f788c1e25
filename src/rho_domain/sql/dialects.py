"""What each SQL dialect reads like and what it may run in read-only mode: the five engines.

``SQLITE``, ``POSTGRES``, ``MYSQL``, ``ORACLE`` and ``VERTICA`` are ``Dialect`` values
(dialect_values.py says what a ``Dialect`` holds); ``dialect(name)`` finds one and raises
``KeyError`` for a name not in ``DIALECTS``. Each bundles the engine's lexer readings, the
statement kinds allowed to start a read-only statement, how it folds identifiers, the
functions a read statement may call (allowlists in ``functions.py``) and the names refused
even without a call (the README's "Databases" section).

Readings: where a server setting changes how text is read (MySQL ``NO_BACKSLASH_ESCAPES``,
``ANSI_QUOTES`` and MariaDB's ``MSSQL``, PostgreSQL ``standard_conforming_strings``),
``reading_for(settings)`` picks the one reading the connected server uses; with no settings
known, every reading must pass.
"""

from __future__ import annotations

import attrs

from rho_domain.sql import call_words
from rho_domain.sql import functions as fn
from rho_domain.sql.dialect_values import Dialect
from rho_domain.sql.postgres_functions import (
    POSTGRES_FILE_VIEWS,
    POSTGRES_FUNCTIONS,
    POSTGRES_SIDE_EFFECT_PREFIXES,
)
from rho_domain.sql.relations import (
    MYSQL_SECRET_RELATIONS,
    MYSQL_STATEMENT_RELATIONS,
    ORACLE_SECRET_RELATIONS,
    ORACLE_STATEMENT_RELATIONS,
    POSTGRES_OPTION_RELATIONS,
    POSTGRES_SECRET_RELATIONS,
    POSTGRES_SETTING_RELATIONS,
    VERTICA_INTERNAL_SCHEMAS,
    VERTICA_PATH_SCHEMAS,
    VERTICA_SECRET_RELATIONS,
    VERTICA_STATEMENT_RELATIONS,
)
from rho_domain.sql.tokens import LexRules

DIALECTS = ("sqlite", "postgres", "mysql", "oracle", "vertica")


SQLITE_PRAGMAS = frozenset(
    {
        "table_info",
        "table_xinfo",
        "table_list",
        "index_list",
        "index_info",
        "index_xinfo",
        "foreign_key_list",
    }
)
_ORACLE_PACKAGES = ("dbms_", "utl_", "ctxsys", "owa_", "kupp$", "wpg_", "httpuritype")

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
    readings=(
        attrs.evolve(
            _BASE, dialect="sqlite", backtick_idents=True, bracket_idents=True, params="?:@$"
        ),
    ),
    read_kinds=frozenset({"SELECT", "WITH", "VALUES", "EXPLAIN", "PRAGMA"}),
    explain_options=frozenset({"QUERY", "PLAN"}),
    pragmas=SQLITE_PRAGMAS,
    functions=fn.SQLITE_FUNCTIONS,
    # SQLite has no user functions (the adapter registers none): a keyword is never a call.
    reserved_parens=call_words.RESERVED_POSTGRES | call_words.RESERVED_MYSQL,
)

_PG_RULES = attrs.evolve(
    _BASE,
    dialect="postgres",
    nested_comments=True,
    e_strings=True,
    dollar_quotes=True,
    unicode_idents=True,
    params="$",
    line_ends="\n\r",  # scan.l: a -- comment is "--" and [^\n\r]*
)
POSTGRES = Dialect(
    name="postgres",
    # standard_conforming_strings on (the default) and off.
    readings=(_PG_RULES, attrs.evolve(_PG_RULES, backslash_strings=True)),
    reading_by_setting={frozenset(): 0, frozenset({"standard_conforming_strings=off"}): 1},
    read_kinds=frozenset({"SELECT", "WITH", "VALUES", "TABLE", "EXPLAIN", "SHOW"}),
    explain_options=_PG_EXPLAIN,
    folding="lower",
    functions=POSTGRES_FUNCTIONS,
    system_schemas=frozenset({"pg_catalog"}),
    reserved_parens=call_words.RESERVED_POSTGRES,
    side_effect_prefixes=POSTGRES_SIDE_EFFECT_PREFIXES,
    file_relations=POSTGRES_FILE_VIEWS,
    secret_relations=POSTGRES_SECRET_RELATIONS,
    option_relations=POSTGRES_OPTION_RELATIONS,
    setting_relations=POSTGRES_SETTING_RELATIONS,
    operator_syntax=True,
    max_identifier=63,
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
_NBE, _AQ = "sql_mode:NO_BACKSLASH_ESCAPES", "sql_mode:ANSI_QUOTES"
# MariaDB's sql_mode=MSSQL (which always brings ANSI_QUOTES) reads [a'b] as a name, where
# the other readings saw a string start at its quote: SELECT 1 AS [a'], LOAD_FILE(...)
# -- '] read /etc/hostname with the check on (MariaDB 10.11).
_MSSQL = "sql_mode:MSSQL"
_MSSQL_RULES = attrs.evolve(
    _MYSQL_RULES, double_quote_strings=False, bracket_idents=True, bracket_doubles=True
)
MYSQL = Dialect(
    name="mysql",
    # The server's sql_mode decides; the adapter asks it once per connection.
    readings=(
        _MYSQL_RULES,
        attrs.evolve(_MYSQL_RULES, backslash_strings=False),
        attrs.evolve(_MYSQL_RULES, double_quote_strings=False),
        attrs.evolve(_MYSQL_RULES, backslash_strings=False, double_quote_strings=False),
        _MSSQL_RULES,
        attrs.evolve(_MSSQL_RULES, backslash_strings=False),
    ),
    reading_by_setting={
        frozenset(): 0,
        frozenset({_NBE}): 1,
        frozenset({_AQ}): 2,
        frozenset({_NBE, _AQ}): 3,
        frozenset({_AQ, _MSSQL}): 4,
        frozenset({_NBE, _AQ, _MSSQL}): 5,
    },
    read_kinds=frozenset(
        {"SELECT", "WITH", "VALUES", "TABLE", "EXPLAIN", "SHOW", "DESCRIBE", "DESC"}
    ),
    refused_words=frozenset({"HANDLER", "PROCEDURE"}),
    # MariaDB in sql_mode=ORACLE reads seq.nextval as NEXTVAL(seq), no parentheses written.
    side_effect_prefixes=("nextval",),
    functions=fn.MYSQL_FUNCTIONS,
    schema_case=True,
    reserved_parens=call_words.RESERVED_MYSQL,
    secret_relations=MYSQL_SECRET_RELATIONS,
    statement_relations=MYSQL_STATEMENT_RELATIONS,
    assignments=True,
    explain_options=frozenset(
        {"FORMAT", "JSON", "TREE", "TRADITIONAL", "EXTENDED", "PARTITIONS", "ANALYZE", "="}
    ),
)

_ORACLE_RULES = attrs.evolve(_BASE, dialect="oracle", q_quotes=True, params=":")
ORACLE = Dialect(
    name="oracle",
    # Where a lone CR ends a -- comment is not known here: both readings must pass.
    readings=(_ORACLE_RULES, attrs.evolve(_ORACLE_RULES, line_ends="\n\r")),
    # EXPLAIN PLAN writes PLAN_TABLE, so it is not a read statement here.
    read_kinds=frozenset({"SELECT", "WITH"}),
    denied_packages=_ORACLE_PACKAGES,
    side_effect_prefixes=("nextval",),
    folding="upper",
    functions=fn.ORACLE_FUNCTIONS,
    reserved_parens=call_words.RESERVED_ORACLE,
    # seq.NEXTVAL is a pseudo-column that advances a sequence, written without parentheses.
    refused_words=frozenset({"BEGIN", "DECLARE", "FUNCTION", "PROCEDURE", "EXECUTE", "NEXTVAL"}),
    secret_relations=ORACLE_SECRET_RELATIONS,
    statement_relations=ORACLE_STATEMENT_RELATIONS,
    database_links=True,
)

_VERTICA_RULES = attrs.evolve(
    _BASE, dialect="vertica", e_strings=True, dollar_quotes=True, unicode_idents=True
)
VERTICA = Dialect(
    name="vertica",
    readings=(
        _VERTICA_RULES,
        attrs.evolve(_VERTICA_RULES, nested_comments=True),
        attrs.evolve(_VERTICA_RULES, backslash_strings=True),
        attrs.evolve(_VERTICA_RULES, line_ends="\n\r"),  # a lone CR ending -- (not known)
    ),
    read_kinds=frozenset({"SELECT", "WITH", "EXPLAIN", "SHOW"}),
    functions=fn.VERTICA_FUNCTIONS,
    reserved_parens=call_words.RESERVED_VERTICA,
    refused_words=frozenset({"EXPORT", "CONNECT"}),
    # seq.NEXTVAL advances a sequence, as NEXTVAL('seq') does, written without parentheses.
    side_effect_prefixes=("nextval",),
    secret_relations=VERTICA_SECRET_RELATIONS,
    statement_relations=VERTICA_STATEMENT_RELATIONS,
    path_schemas=VERTICA_PATH_SCHEMAS,
    internal_schemas=VERTICA_INTERNAL_SCHEMAS,
    explain_options=frozenset({"LOCAL", "VERBOSE", "JSON", "ANNOTATED", "GRAPHVIZ"}),
)

_BY_NAME = {d.name: d for d in (SQLITE, POSTGRES, MYSQL, ORACLE, VERTICA)}


def dialect(name: str) -> Dialect:
    """The dialect called ``name``; ``KeyError`` for an unknown one."""
    return _BY_NAME[name]
