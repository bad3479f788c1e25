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


class OpenpyxlReader(SpreadsheetReader):
    async def sheets(self, data: bytes) -> tuple[SheetInfo, ...]:
        return await asyncio.to_thread(self._sheets, data)

    def _sheets(self, data: bytes) -> tuple[SheetInfo, ...]:
        book = _open(data)
        try:
            return tuple(
                SheetInfo(name=ws.title, rows=ws.max_row or 0, columns=ws.max_column or 0)
                for ws in book.worksheets
            )
        finally:
            book.close()

    async def rows(
        self, data: bytes, sheet: str, *, start: int, count: int, max_columns: int
    ) -> tuple[tuple[Cell, ...], ...]:
        return await asyncio.to_thread(self._rows, data, sheet, start, count, max_columns)

    def _rows(
        self, data: bytes, sheet: str, start: int, count: int, max_columns: int
    ) -> tuple[tuple[Cell, ...], ...]:
        book = _open(data)
        try:
            if sheet not in book.sheetnames:
                raise ToolError(f"no sheet {sheet!r}; sheets: {', '.join(book.sheetnames)}")
            ws = book[sheet]
            out = []
            for row in ws.iter_rows(
                min_row=start, max_row=start + count - 1, max_col=max_columns, values_only=True
            ):
                out.append(tuple(_cell(v) for v in row))
            return tuple(out)
        finally:
            book.close()
