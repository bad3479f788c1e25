"""OpenpyxlReader: the SpreadsheetReader port over openpyxl (extra ``excel``), read-only mode.

openpyxl is imported lazily; a missing install raises ``MissingExtra``. Before openpyxl sees
the bytes, ``xlsx_guard.check_workbook`` refuses a zip bomb from the zip's directory. Sheets
are read by ``sheet_scan`` (used extent, hidden rows and columns, "formula: =..." for a formula
without a cached value). Parsing runs in a thread (``in_thread``) that checks at every row
whether its caller gave up, and within a budget of ``MAX_CELLS`` cells per call; every
openpyxl/zip failure becomes a ``ToolError``.
"""

from __future__ import annotations

import collections
import datetime
import hashlib
import io
from typing import Any

from rho_adapters.local.sheet_scan import BudgetSpent, scan, window
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
                SheetInfo(
                    name=ws.title,
                    rows=found.rows,
                    columns=found.columns,
                    complete=found.complete,
                    hidden_rows=found.hidden_rows,
                    hidden_columns=found.hidden_columns,
                )
                for ws in book.worksheets
                for found in [scan(ws, stop, self.max_cells)]
            )
        finally:
            book.close()

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
        """See ``SpreadsheetReader.rows``."""
        return await in_thread(
            lambda stop: self._rows(data, sheet, start, count, max_columns, first_column, stop)
        )

    def _rows(
        self,
        data: bytes,
        sheet: str,
        start: int,
        count: int,
        max_columns: int,
        first_column: int,
        stop: Stop,
    ) -> tuple[tuple[Cell, ...], ...]:
        book = self._checked_open(data, stop)
        try:
            if sheet not in book.sheetnames:
                raise ToolError(f"no sheet {sheet!r}; sheets: {', '.join(book.sheetnames)}")
            try:
                # From row 1, not start: the rows before start are parsed anyway, and only
                # this loop can count them and stop.
                out = window(
                    book[sheet],
                    stop,
                    self.max_cells,
                    start=start,
                    count=count,
                    first_column=first_column,
                    max_columns=max_columns,
                    convert=_cell,
                )
            except BudgetSpent as spent:
                raise ToolError(
                    f"sheet {sheet!r}: stopped at row {spent.row} after parsing "
                    f"{self.max_cells:,} cells (the limit of one call); ask for fewer "
                    "or earlier rows, or export the sheet as .csv"
                ) from None
            used = max((_used_width(row) for row in out), default=0)
            return tuple(row[:used] for row in out)
        finally:
            book.close()
