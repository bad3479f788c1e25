"""MemorySpreadsheetReader: workbooks given as data, for testing ``read_excel`` without openpyxl.

A workbook is registered under the exact bytes that stand for its file (any bytes you write
into a ``MemoryExecutor``); other bytes are "not a readable .xlsx", as with the real reader.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rho_domain.errors import ToolError
from rho_domain.ports.spreadsheet import Cell, SheetInfo, SpreadsheetReader

Workbook = Mapping[str, Sequence[Sequence[Cell]]]


class MemorySpreadsheetReader(SpreadsheetReader):
    """A SpreadsheetReader over ``{file bytes: {sheet name: rows}}``.

    ``reads`` records each call as ``(method, sheet)`` (sheet is None for ``sheets``).
    """

    def __init__(self, workbooks: Mapping[bytes, Workbook] | None = None) -> None:
        self.workbooks = dict(workbooks or {})
        self.reads: list[tuple[str, str | None]] = []

    def _book(self, data: bytes) -> Workbook:
        book = self.workbooks.get(data)
        if book is None:
            raise ToolError("not a readable .xlsx workbook")
        return book

    async def sheets(self, data: bytes) -> tuple[SheetInfo, ...]:
        """The registered workbook's sheets, in order; ``ToolError`` for unknown bytes."""
        self.reads.append(("sheets", None))
        return tuple(
            SheetInfo(name=name, rows=len(rows), columns=max((len(r) for r in rows), default=0))
            for name, rows in self._book(data).items()
        )

    async def rows(
        self, data: bytes, sheet: str, *, start: int, count: int, max_columns: int
    ) -> tuple[tuple[Cell, ...], ...]:
        """Rows ``start`` (1-based) .. ``start+count-1``, cut to ``max_columns``."""
        self.reads.append(("rows", sheet))
        book = self._book(data)
        if sheet not in book:
            raise ToolError(f"no sheet {sheet!r}; sheets: {', '.join(book)}")
        selected = book[sheet][start - 1 : start - 1 + count]
        return tuple(tuple(row[:max_columns]) for row in selected)
