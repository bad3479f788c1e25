"""OpenpyxlReader: the SpreadsheetReader port over openpyxl (extra ``excel``), read-only mode.

openpyxl is imported lazily; a missing install raises ``MissingExtra``. Parsing runs in a
thread (openpyxl is synchronous); every openpyxl/zip failure becomes a ``ToolError``.
"""

from __future__ import annotations

import asyncio
import datetime
import io
from typing import Any

from rho_domain.errors import MissingExtra, ToolError
from rho_domain.ports.spreadsheet import Cell, SheetInfo, SpreadsheetReader


def _open(data: bytes) -> Any:
    try:
        import openpyxl
    except ImportError as exc:
        raise MissingExtra("openpyxl", "excel", "reading .xlsx files") from exc
    try:
        return openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    except Exception as exc:
        raise ToolError(f"not a readable .xlsx workbook ({type(exc).__name__}: {exc})") from exc


def _cell(value: Any) -> Cell:
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    return str(value)


def _size(ws: Any) -> tuple[int, int]:
    """Rows and columns of a read-only sheet. Many writers leave out the dimension record that
    openpyxl reads them from; then the sheet is scanned once (the file is size-capped)."""
    if not (ws.max_row and ws.max_column):
        try:
            ws.calculate_dimension(force=True)
        except (UnboundLocalError, ValueError):  # no cell at all
            return 0, 0
    return ws.max_row or 0, ws.max_column or 0


def _used_width(row: tuple[Cell, ...]) -> int:
    """The number of cells up to the last non-empty one."""
    width = len(row)
    while width and row[width - 1] is None:
        width -= 1
    return width


class OpenpyxlReader(SpreadsheetReader):
    """The ``SpreadsheetReader`` port over openpyxl in read-only mode (extra ``excel``)."""

    async def sheets(self, data: bytes) -> tuple[SheetInfo, ...]:
        """See ``SpreadsheetReader.sheets``."""
        return await asyncio.to_thread(self._sheets, data)

    def _sheets(self, data: bytes) -> tuple[SheetInfo, ...]:
        book = _open(data)
        try:
            return tuple(
                SheetInfo(name=ws.title, rows=rows, columns=columns)
                for ws in book.worksheets
                for rows, columns in [_size(ws)]
            )
        finally:
            book.close()

    async def rows(
        self, data: bytes, sheet: str, *, start: int, count: int, max_columns: int
    ) -> tuple[tuple[Cell, ...], ...]:
        """See ``SpreadsheetReader.rows``."""
        return await asyncio.to_thread(self._rows, data, sheet, start, count, max_columns)

    def _rows(
        self, data: bytes, sheet: str, start: int, count: int, max_columns: int
    ) -> tuple[tuple[Cell, ...], ...]:
        book = _open(data)
        try:
            if sheet not in book.sheetnames:
                raise ToolError(f"no sheet {sheet!r}; sheets: {', '.join(book.sheetnames)}")
            ws = book[sheet]
            # Read-only sheets pad every row to max_col: ask for no more than the sheet has
            # (when its dimension record says), then drop columns empty in every row read.
            width = min(max_columns, _size(ws)[1] or max_columns)
            out = [
                tuple(_cell(v) for v in row)
                for row in ws.iter_rows(
                    min_row=start, max_row=start + count - 1, max_col=width, values_only=True
                )
            ]
            used = max((_used_width(row) for row in out), default=0)
            return tuple(row[:used] for row in out)
        finally:
            book.close()
