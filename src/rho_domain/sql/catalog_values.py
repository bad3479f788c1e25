"""What a server's catalog runs when a statement reads, as data: ``CatalogCalls``.

The adapter reads it from the server (``rho_adapters.db.pg_catalog_calls``, MariaDB's views
in ``mysql.py``); ``catalog_calls.hidden_call`` judges a statement against it. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from rho_domain.value_methods import value_eq, value_hash, value_repr


@attrs.frozen(kw_only=True)
class CatalogCalls:
    """What a server's catalog runs implicitly: operator names (as written: ``@-@``) and type
    names (as the catalog spells them), each with the functions it may call (``schema.name``;
    under "", those of implicit and assignment casts, met without naming a type). Only what
    a database user created is listed (not the server's, nor an extension's)."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    operators: Mapping[str, frozenset[str]] = attrs.field(factory=dict)
    types: Mapping[str, frozenset[str]] = attrs.field(factory=dict)
    # A domain's CHECKs (its base domains' too; for a composite type, its fields'), as
    # pg_get_constraintdef writes them: judged as expressions by the same rules.
    checks: Mapping[str, frozenset[str]] = attrs.field(factory=dict)
    # Functions a database user made, by name: a call of an allowlisted name may resolve to
    # one (public.lower(name) is an exact match for lower(relname), where the built-in
    # lower(text) needs a cast).
    functions: Mapping[str, frozenset[str]] = attrs.field(factory=dict)
    # Those of them one argument may call: field notation x.f is f(x) (x holding no f).
    fields: Mapping[str, frozenset[str]] = attrs.field(factory=dict)
    # The functions of user operator families: a sort, a grouping, DISTINCT, UNION or a
    # window looks them up by the values' type, which no text need name.
    comparisons: frozenset[str] = frozenset()
    # Views, by name, with their queries: selecting from one runs what its query calls (a
    # MariaDB stored function: SET GLOBAL ...; pg_read_file) or reads (pg_file_settings).
    # A name may be "schema.name", judged only where the name follows that schema.
    views: Mapping[str, frozenset[str]] = attrs.field(factory=dict)
    # Row-level security policies, by their table's name, as queries ("SELECT <USING
    # expression>"): a read of the table runs them for the login they apply to, or for a
    # view's owner when the table is read through the view.
    policies: Mapping[str, frozenset[str]] = attrs.field(factory=dict)
    # A table's virtual columns, by the table's name, as queries ("SELECT <expression>"): a
    # read computes them (a MariaDB column AS (UUID_SHORT()) advanced a server-wide counter).
    computed: Mapping[str, frozenset[str]] = attrs.field(factory=dict)
    # What the planner computes for a read of a table, by the name of every table whose read
    # plans it, as queries: PostgreSQL folds calls with constant arguments in the table's
    # index, partition key and statistics expressions and its (and its children's) CHECKs.
    planned: Mapping[str, frozenset[str]] = attrs.field(factory=dict)
    # Names refused wherever they stand, each with the whole reason: a table whose read runs
    # what the check never sees (a foreign table, or a table it inherits from or is a
    # partition of: "the foreign table t reads the server file 'PG_VERSION'"),
    # the views of every session's statement text for a login that sees them all.
    refused_names: Mapping[str, str] = attrs.field(factory=dict)
    # Functions made in the server's own schema after it was set up (a superuser's
    # pg_catalog.rho(oid, integer) behind an operator pg_catalog.>=): the adapter's own
    # catalog reads and its wrapping of the statement resolve names there, and may meet them
    # (one such >= hid every user function from the lists above), so every statement is
    # refused, naming them, while one is there.
    system_made: frozenset[str] = frozenset()
