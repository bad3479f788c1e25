"""OpenpyxlReader: the SpreadsheetReader port over openpyxl (extra ``excel``), read-only mode.

openpyxl is imported lazily; a missing install raises ``MissingExtra``. Before openpyxl sees
the bytes, ``xlsx_guard.check_workbook`` refuses a zip bomb from the zip's directory. Parsing
runs in a thread (``in_thread``) that checks at every row whether its caller gave up, and
within a budget of ``MAX_CELLS`` cells per call; every openpyxl/zip failure becomes a
``ToolError``.
"""

from __future__ import annotations

import collections
import datetime
import hashlib
import io
from typing import Any

from rho_domain.errors import MissingExtra, ToolError
from rho_domain.ports.spreadsheet import Cell, SheetInfo, SpreadsheetReader
from rho_domain.tools.offload import Stop, in_thread

# Cells parsed per call (rows before the window included, each padded to the width read):
# the work a call may cost, whatever the sheet holds. openpyxl parses 1,000,000 in about 7 s
# on a free core (22 s on a loaded 2-core machine); a cancelled call stops at the next row.
MAX_CELLS = 1_000_000


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


def _size(ws: Any, stop: Stop, max_cells: int) -> tuple[int, int, bool]:
    """Rows and columns of a read-only sheet, and whether they are complete. Many writers
    leave out the dimension record openpyxl reads them from; then the sheet is counted, row
    by row, within ``max_cells`` (past it, the count so far: "at least")."""
    if ws.max_row and ws.max_column:
        return ws.max_row, ws.max_column, True
    rows = columns = cells = 0
    for number, row in enumerate(ws.iter_rows(values_only=True), 1):
        stop.check()
        cells += len(row)
        if cells > max_cells:
            return rows, columns, False
        if any(value is not None for value in row):
            rows, columns = number, max(columns, _used_width(row))
    return rows, columns, True


def _used_width(row: tuple[Any, ...]) -> int:
    """The number of cells up to the last non-empty one."""
    width = len(row)
    while width and row[width - 1] is None:
        width -= 1
    return width


class OpenpyxlReader(SpreadsheetReader):
    """The ``SpreadsheetReader`` port over openpyxl in read-only mode (extra ``excel``).
    ``max_cells``: the cells one call may parse (``MAX_CELLS``)."""

    def __init__(self, *, max_cells: int = MAX_CELLS) -> None:
        self.max_cells = max_cells
        # Digests of the workbooks that passed check_workbook lately: read_sheet reads the
        # same bytes twice (sheets, then rows), and the check scans every large part.
        self._checked: collections.deque[bytes] = collections.deque(maxlen=8)

    def _checked_open(self, data: bytes, stop: Stop) -> Any:
        """``data`` opened by openpyxl once ``check_workbook`` has passed it."""
        digest = hashlib.blake2b(data, digest_size=16).digest()
        if digest not in self._checked:
            # Imported at the first workbook (zipfile, expat), not by every run's start-up.
            from rho_adapters.local.xlsx_guard import check_workbook

            check_workbook(data, stop)  # before openpyxl unpacks anything
            self._checked.append(digest)
        return _open(data)

    async def sheets(self, data: bytes) -> tuple[SheetInfo, ...]:
        """See ``SpreadsheetReader.sheets``."""
        return await in_thread(lambda stop: self._sheets(data, stop))

    def _sheets(self, data: bytes, stop: Stop) -> tuple[SheetInfo, ...]:
        book = self._checked_open(data, stop)
        try:
            return tuple(
                SheetInfo(name=ws.title, rows=rows, columns=columns, complete=complete)
                for ws in book.worksheets
                for rows, columns, complete in [_size(ws, stop, self.max_cells)]
            )
        finally:
            book.close()

    async def rows(
        self, data: bytes, sheet: str, *, start: int, count: int, max_columns: int
    ) -> tuple[tuple[Cell, ...], ...]:
        """See ``SpreadsheetReader.rows``."""
        return await in_thread(
            lambda stop: self._rows(data, sheet, start, count, max_columns, stop)
        )

    def _rows(
        self, data: bytes, sheet: str, start: int, count: int, max_columns: int, stop: Stop
    ) -> tuple[tuple[Cell, ...], ...]:
        book = self._checked_open(data, stop)
        try:
            if sheet not in book.sheetnames:
                raise ToolError(f"no sheet {sheet!r}; sheets: {', '.join(book.sheetnames)}")
            ws = book[sheet]
            # Read-only sheets pad every row to max_col: ask for no more than the sheet has
            # (when its dimension record says), then drop columns empty in every row read.
            width = min(max_columns, ws.max_column or max_columns)
            out: list[tuple[Cell, ...]] = []
            cells = 0
            # From row 1, not min_row=start: openpyxl parses the rows before start anyway,
            # and only this loop can count them and stop.
            rows = ws.iter_rows(max_row=start + count - 1, max_col=width, values_only=True)
            for number, row in enumerate(rows, 1):
                stop.check()
                cells += len(row)
                if cells > self.max_cells:
                    raise ToolError(
                        f"sheet {sheet!r}: stopped at row {number} after parsing "
                        f"{self.max_cells:,} cells (the limit of one call); ask for fewer "
                        "or earlier rows, or export the sheet as .csv"
                    )
                if number >= start:
                    out.append(tuple(_cell(v) for v in row))
            used = max((_used_width(row) for row in out), default=0)
            return tuple(row[:used] for row in out)
        finally:
            book.close()
