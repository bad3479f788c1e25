"""The shape of a SQL dialect: the ``Dialect`` value and the refused words every dialect shares.

A ``Dialect`` says how one engine's text can be read (its lexer readings, and the server
settings that pick one: ``reading_for``), which statement kinds start a read-only statement,
how the engine folds identifiers (``Folding``), which functions a read statement may call and
which names and relations are refused even without a call. ``REFUSED_WORDS`` are the keywords
refused in every dialect's read statement. The five engines' values are dialects.py; the
checks that read them are token_rules.py, call_syntax.py, catalog_calls.py and
statement_kinds.py.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

import attrs

from rho_domain.sql import call_words
from rho_domain.sql.tokens import LexRules
from rho_domain.value_methods import value_eq, value_hash, value_repr

# How unquoted and quoted identifiers become catalog names: PostgreSQL lower-cases unquoted
# names and keeps quoted ones; Oracle upper-cases unquoted ones; MySQL function names,
# SQLite and Vertica identifiers are case-insensitive (compared in lower case).
Folding = Literal["lower", "upper", "insensitive"]


@attrs.frozen(kw_only=True)
class Dialect:
    """One engine's SQL: how its text can be read, and which statements and calls are reads."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    name: str
    readings: tuple[LexRules, ...]
    read_kinds: frozenset[str]  # first keyword of an allowed statement
    denied_packages: tuple[str, ...] = ()  # "pkg." qualifiers starting with these (Oracle)
    refused_words: frozenset[str] = frozenset()  # dialect keywords refused anywhere
    explain_options: frozenset[str] = frozenset()
    pragmas: frozenset[str] = frozenset()  # SQLite introspection pragmas
    folding: Folding = "insensitive"
    # A schema's name is told apart by case where a routine is looked up (MariaDB/MySQL under
    # lower_case_table_names=0, Linux's default: `Sys`.`format_bytes` is anyone's database's
    # function, not sys's), so a call is allowed by its schema as written.
    schema_case: bool = False
    functions: frozenset[str] = frozenset()  # callable without a qualifier (catalog case)
    system_schemas: frozenset[str] = frozenset()  # "pg_catalog.lower(x)" is "lower(x)"
    reserved_parens: frozenset[str] = call_words.RESERVED_PARENS
    side_effect_prefixes: tuple[str, ...] = ()  # refused even as x.name (field notation)
    # Built-in relations whose rows are read from a server file when selected (catalog case):
    # refused wherever named, as the function behind each is.
    file_relations: frozenset[str] = frozenset()
    # Built-in relations holding password hashes or stored credentials (catalog case): a
    # superuser login reads them. "name" is refused wherever named, "schema.name" after its
    # schema (alone too, for a schema of path_schemas). The lists: ``relations.py``.
    secret_relations: frozenset[str] = frozenset()
    # Matched as secret_relations are: relations showing other sessions' statement texts
    # (passwords in ALTER USER ... IDENTIFIED BY among them) or rows' values of any table, and
    # those listing the options of foreign-data wrappers, servers, tables, columns or user
    # mappings (a password among them).
    statement_relations: frozenset[str] = frozenset()
    option_relations: frozenset[str] = frozenset()
    # Matched the same way: the settings stored for other roles and databases (PostgreSQL's
    # rolconfig), where an application's setting may hold a password.
    setting_relations: frozenset[str] = frozenset()
    path_schemas: frozenset[str] = frozenset()  # system schemas on the search path
    # A server's internal schemas, refused whole: schema -> the prefixes of its relations'
    # names, which name them alone where the schema is on the search path (Vertica's
    # v_internal.dc_requests_issued is dc_requests_issued).
    internal_schemas: Mapping[str, tuple[str, ...]] = attrs.field(factory=dict)
    # Built-in functions outside the allowlist, refused as x.name too: PostgreSQL's field
    # notation calls name(x). Known only from the connected server's catalog (``classify``).
    field_calls_refused: frozenset[str] = frozenset()
    assignments: bool = False  # MySQL ":=" assigns a user variable: refused
    # Oracle's name@link reads another database, as the link's stored login: refused
    database_links: bool = False
    operator_syntax: bool = False  # PostgreSQL OPERATOR(schema.op)
    max_identifier: int = 0  # bytes kept of an identifier (PostgreSQL truncates to 63)
    # Server settings that choose the reading: setting name -> index into readings.
    reading_by_setting: Mapping[frozenset[str], int] = attrs.field(factory=dict)

    def reading_for(self, settings: frozenset[str] | None) -> tuple[LexRules, ...]:
        """The readings to check for a server with ``settings`` (every one when unknown)."""
        if settings is None or not self.reading_by_setting:
            return self.readings
        relevant = frozenset(s for k in self.reading_by_setting for s in k) & settings
        index = self.reading_by_setting.get(relevant)
        return self.readings if index is None else (self.readings[index],)


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
