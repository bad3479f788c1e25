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

    def __init__(
        self,
        workbooks: Mapping[bytes, Workbook] | None = None,
        *,
        hidden: Mapping[str, tuple[tuple[int, ...], tuple[int, ...]]] | None = None,
    ) -> None:
        self.workbooks = dict(workbooks or {})
        # sheet name -> (hidden rows, hidden columns), 1-based
        self.hidden = dict(hidden or {})
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
            SheetInfo(
                name=name,
                rows=_height(rows),
                columns=max((_width(r) for r in rows), default=0),
                hidden_rows=self.hidden.get(name, ((), ()))[0],
                hidden_columns=self.hidden.get(name, ((), ()))[1],
            )
            for name, rows in self._book(data).items()
        )

    async def rows(
        self,
        data: bytes,
        sheet: str,
        *,
        start: int,
        count: int,
        max_columns: int,
        first_column: int = 1,
    ) -> tuple[tuple[Cell, ...], ...]:
        """Rows ``start`` (1-based) .. ``start+count-1``, columns ``first_column`` ..
        ``first_column+max_columns-1``, cut after the last column used in any of them."""
        self.reads.append(("rows", sheet))
        book = self._book(data)
        if sheet not in book:
            raise ToolError(f"no sheet {sheet!r}; sheets: {', '.join(book)}")
        first = first_column - 1
        selected = [
            row[first : first + max_columns] for row in book[sheet][start - 1 : start - 1 + count]
        ]
        width = max((_width(r) for r in selected), default=0)
        return tuple(tuple(row[:width]) + (None,) * (width - len(row)) for row in selected)


def _width(row: Sequence[Cell]) -> int:
    """The cells up to the last one holding a value."""
    width = len(row)
    while width and row[width - 1] is None:
        width -= 1
    return width


def _height(rows: Sequence[Sequence[Cell]]) -> int:
    """The rows up to the last one holding a value."""
    height = len(rows)
    while height and not _width(rows[height - 1]):
        height -= 1
    return height
