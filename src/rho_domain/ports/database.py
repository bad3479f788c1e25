"""Database: one configured database alias, read-only unless the profile allows mutations."""

from __future__ import annotations

from abc import abstractmethod
from typing import Any, Protocol

import attrs

from rho_domain.value_methods import value_eq, value_hash, value_repr


@attrs.frozen
class CutValue:
    """A cell too large to keep whole: its beginning (``head``, text or bytes) and its full
    size in bytes (None when the adapter cut it without learning the size)."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    head: str | bytes
    size: int | None = None


@attrs.frozen(kw_only=True)
class QueryResult:
    """At most ``max_rows`` rows. ``more_rows`` is True when more were available (not fetched
    all: adapters fetch max_rows + 1). ``rowcount`` is set for statements without a result set.

    Results are bounded in bytes too: a cell over the adapter's cell limit arrives as a
    ``CutValue``, and ``byte_limit`` is set (to the limit, in bytes) when the adapter stopped
    fetching because the rows reached its byte budget (``more_rows`` is then True)."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    more_rows: bool = False
    rowcount: int | None = None
    byte_limit: int | None = None


@attrs.frozen(kw_only=True)
class TableInfo:
    """A table: its schema (None where the engine has none), name and kind (table, view...)."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    schema: str | None
    name: str
    kind: str = "table"


class Database(Protocol):
    """A connection (or pool) to one database alias."""

    @property
    @abstractmethod
    def dialect(self) -> str:
        """One of: sqlite, postgres, mysql, oracle, vertica."""

    @abstractmethod
    async def query(self, sql: str, *, max_rows: int, timeout: float) -> QueryResult:
        """Run one statement. Read-only adapters run it inside the engine's read-only
        transaction and roll back. The rows are bounded in number (``max_rows``) and in bytes
        (see ``QueryResult``), while they are fetched: never more is read into memory.
        Raises ``StatementRefused`` or ``DatabaseError``."""

    @abstractmethod
    async def list_tables(
        self, *, pattern: str = "%", schema: str | None = None
    ) -> tuple[TableInfo, ...]:
        """Tables and views whose name matches the LIKE ``pattern``."""

    @abstractmethod
    async def describe(self, table: str, *, schema: str | None = None) -> str:
        """Columns, types, keys and indexes of a table, as text for the model."""

    @abstractmethod
    async def aclose(self) -> None:
        """Close connections. Idempotent."""
