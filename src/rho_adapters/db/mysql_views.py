"""What a MariaDB/MySQL read runs or reads that its text does not show: views, virtual
columns, other servers' tables, read from information_schema before each statement.

Selecting from a view runs what its query calls, a stored function too (with its definer's
rights: ``SET GLOBAL``), and reads what its query reads, as its definer when it is
``SQL SECURITY DEFINER`` (the default). So the check judges a view's query where the view
is named (``CatalogCalls.views``), a table's virtual columns' expressions where the table
is (``UUID_SHORT()`` advances a server-wide counter), and refuses by name
(``CatalogCalls.refused_names``):

- a view whose query the login may not read (no ``SHOW VIEW``: information_schema shows its
  ``VIEW_DEFINITION`` empty), which the check cannot judge: a login granted ``SELECT``
  alone read ``mysql.user``'s hashes through an administrator's definer view, and ran its
  stored function's ``SET GLOBAL``;
- a definer's view whose query reads a relation this login cannot see (a view or table of
  a database it has no privilege on): the check judges a view by its query, and the views
  inside it by theirs, and one the login cannot see is one whose query it never reads (a
  view over ``rho_other.b``, itself over ``mysql.user`` or calling a stored function,
  passed where ``rho_other`` was not the login's). ``GRANT SHOW VIEW ON rho_other.*``
  shows the login that database's tables and views, none of their rows: a view over its
  tables then reads, and one over its views is judged by theirs (refused while their
  queries stay hidden, as above);
- a definer's view that reads information_schema (directly or through the views it reads):
  the server fills information_schema as the reader may see it, and inside such a view the
  reader is its definer (measured: root's view over ``ROUTINES``, ``VIEWS``, ``TRIGGERS``,
  ``EVENTS``, ``COLUMNS`` showed a login the bodies, queries and defaults of a database it
  has no privilege on); its static lists (``COLLATIONS``...) read;
- a ``FEDERATED``, ``CONNECT``, ``SPIDER`` or ``SPHINX`` table
  (``mysql_settings.remote_refusal``).
"""

# Queries below interpolate constant SQL fragments only (noqa: S608); values are bound.
from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from typing import Any

from rho_adapters.db.mysql_catalog import Catalog
from rho_adapters.db.mysql_settings import remote_refusal
from rho_adapters.db.mysql_view_texts import judged_text, relations_named
from rho_domain.sql import CatalogCalls, dialect
from rho_domain.sql.name_folding import lookup_names

# The SEQUENCE engine reads ASCII digits only: Python's \d took seq_\u0663_to_5 (an Arabic-Indic
# three), any view's name, for the engine's, and one over a stored function's SET GLOBAL ran.
_SEQUENCE_TABLE = re.compile(r"seq_[0-9]+_to_[0-9]+(?:_step_[0-9]+)?")
# information_schema's tables whose rows are the same for every reader (no database's).
_STATIC_CATALOG = frozenset(
    {
        "CHARACTER_SETS",
        "COLLATIONS",
        "COLLATION_CHARACTER_SET_APPLICABILITY",
        "ENGINES",
        "KEYWORDS",
        "SQL_FUNCTIONS",
    }
)


def read_views(
    catalog: Catalog,
    cursor: Any,
    *,
    mariadb: bool,
    refused: dict[str, str],
    own: Iterable[tuple[str, str, str, str]] = (),
    schema: str = "",
) -> CatalogCalls:
    """The views, virtual columns and refusals of ``catalog`` (read through ``cursor``,
    which reads more where a definer's view reads a database it did not ask about), with
    ``refused`` (the connection's other refusals) added to, and ``own`` (the server's own
    views, read apart: ``mysql_own_views``) judged as the others, named by ``sys.name``
    (``session`` alone is an application's table, unless ``schema``, the connection's
    default database, is ``sys``)."""
    found: dict[str, dict[str, set[str]]] = {"view": {}, "column": {}}
    definers: dict[str, set[tuple[str, str]]] = {}
    rows = [
        ("", n, judged_text(_query(q, k)) if mariadb else _query(q, k), k)
        for n, q, k in (*catalog.views, *((n, e, "column") for n, e in catalog.columns))
    ]
    rows += [("", n, "", engine) for n, engine in catalog.remote]
    for database, name, query, kind in (*rows, *own):
        keys = _view_keys(str(name))
        if database:
            keys = frozenset(f"{database}.{k}" for k in keys) | (
                keys if database == schema else frozenset()
            )
        for key in keys:
            if kind in ("view", "definer", "column"):
                text = query
                found["column" if kind == "column" else "view"].setdefault(key, set()).add(text)
                if kind == "definer":
                    definers.setdefault(key, set()).update(relations_named(text))
            elif kind == "hidden":
                refused[key] = hidden_view_refusal(str(name))
            else:
                refused[key] = remote_refusal(str(name), str(kind))
    for key, why in _unseen(catalog, cursor, definers).items():
        refused[key] = why
    for key, why in _catalog_readers(found["view"], definers).items():
        refused[key] = why
    views, computed = ({n: frozenset(q) for n, q in found[k].items()} for k in found)
    return CatalogCalls(views=views, computed=computed, refused_names=refused)


def _query(text: Any, kind: str) -> str:
    """A view's query, or a virtual column's expression as the query that computes it."""
    return f"SELECT {text}" if kind == "column" else str(text)


@functools.lru_cache(maxsize=4096)
def _view_keys(name: str) -> frozenset[str]:
    """The names the check looks the view ``name`` up by (``lookup_names``)."""
    return lookup_names(name, dialect("mysql"))


def _unseen(
    catalog: Catalog, cursor: Any, definers: dict[str, set[tuple[str, str]]]
) -> dict[str, str]:
    """The refusals of the definers' views (by name, with the relations each query reads)
    that read a relation this login cannot see (``_may_be_unseen``)."""
    named = {pair for pairs in definers.values() for pair in pairs if _may_be_unseen(pair)}
    if not named:
        return {}
    seen = catalog.seen(cursor, {database for database, _ in named})
    refusals = {}
    for key, pairs in definers.items():
        unseen = sorted(pair for pair in pairs - seen if _may_be_unseen(pair))
        if unseen:
            databases = ", ".join(sorted({f"{database}.*" for database, _ in unseen}))
            refusals[key] = unseen_refusal(key, _names(unseen), databases)
    return refusals


def _catalog_readers(
    views: dict[str, set[str]], definers: dict[str, set[tuple[str, str]]]
) -> dict[str, str]:
    """The refusals of the definers' views that read information_schema's tables as their
    definer, themselves or through the views they read (an invoker's view inside a
    definer's runs as that definer too)."""
    reads: dict[str, tuple[set[str], set[str]]] = {}  # the views a definer's reaches only
    refusals = {}
    for key in definers:
        tables, seen, todo = set(), {key}, [key]
        while todo:
            view = todo.pop()
            if view not in reads:
                reads[view] = _catalog_tables(views[view])
            tables |= reads[view][0]
            for inner in (reads[view][1] & views.keys()) - seen:
                seen.add(inner)
                todo.append(inner)
        if tables:
            refusals[key] = catalog_refusal(key, ", ".join(sorted(tables)))
    return refusals


def _catalog_tables(texts: Iterable[str]) -> tuple[set[str], set[str]]:
    """The information_schema tables the view queries ``texts`` name (but its static lists)
    and the names (as the check keys views) of the other relations they name."""
    tables: set[str] = set()
    others: set[str] = set()
    mysql = dialect("mysql")
    for text in texts:
        for database, name in relations_named(text):
            if database.lower() != "information_schema":
                others |= lookup_names(name, mysql)
            elif name.upper() not in _STATIC_CATALOG:
                tables.add(f"information_schema.{name.upper()}")
    return tables, others


def _may_be_unseen(pair: tuple[str, str]) -> bool:
    """Whether a relation a view names (spelled as written) may be one the login cannot
    see: not information_schema's, which every login sees (whatever its case), nor the
    SEQUENCE engine's ``seq_1_to_3``, which every login reads and information_schema does
    not list (by its exact spelling: under ``lower_case_table_names=0``, Linux's default,
    ``SEQ_1_TO_3`` is any view's name; one over ``hid.SEQ_1_TO_3`` read ``mysql.user``).
    The server's other schemas count as any database: an administrator's view in ``mysql``
    or ``sys`` is no installer's (one in ``mysql`` calling ``SET GLOBAL`` ran), and
    ``Sys`` is anyone's (one over ``Sys.version`` ran it too)."""
    database, name = pair
    return database.lower() != "information_schema" and not _SEQUENCE_TABLE.fullmatch(name)


def _names(pairs: Iterable[tuple[str, str]]) -> str:
    return ", ".join(f"{database}.{name}" for database, name in pairs)


def hidden_view_refusal(name: str) -> str:
    """Why the view ``name``, whose query this login may not read, is refused."""
    return (
        f"the view {name} hides its query from this login (no SHOW VIEW on it), so the "
        "check cannot judge what a read of it runs or reads: a definer's view reads as its "
        "definer (mysql.user's password hashes) and calls stored functions with the "
        "definer's rights (SET GLOBAL); GRANT SHOW VIEW on it to the agent's login (the "
        "server shows a view's query to a login that may also SELECT from it)"
    )


def unseen_refusal(name: str, relations: str, databases: str) -> str:
    """Why the definer's view ``name``, whose query reads ``relations`` (of ``databases``,
    which this login cannot see), is refused."""
    return (
        f"the view {name} reads {relations} as its definer, which this login cannot see, so "
        "the check cannot tell whether that is a table or a view that runs or reads more (a "
        f"view over mysql.user, a stored function's SET GLOBAL); GRANT SHOW VIEW ON "
        f"{databases} to the agent's login, which lets it see them and read none of their rows"
    )


def catalog_refusal(name: str, tables: str) -> str:
    """Why the definer's view ``name``, which reads information_schema's ``tables`` (itself
    or through the views it reads), is refused."""
    return (
        f"the view {name} reads {tables} as its definer: the server fills information_schema "
        "as its reader may see it, here the definer, so the view shows other databases' "
        "routine bodies, view queries, triggers and columns this login may not read; make "
        "it SQL SECURITY INVOKER, or read information_schema directly (it shows what this "
        "login may see)"
    )
