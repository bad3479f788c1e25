"""What ``OpenpyxlReader`` does in its worker thread: a workbook opened by openpyxl once
``xlsx_guard`` passed its bytes, its sheets' extents, a window of a sheet's rows.

Imported with the first workbook read, not with the reader every Agent builds (``sheet_scan``'s
classes, hashlib, datetime). Every openpyxl/zip failure becomes a ``ToolError``.
"""

from __future__ import annotations

import collections
import datetime
import hashlib
import io
from typing import Any

from rho_adapters.extras import missing_extra
from rho_adapters.local.sheet_scan import BudgetSpent, CellBudget, scan, window
from rho_domain.errors import ToolError
from rho_domain.ports.spreadsheet import Cell, SheetInfo
from rho_domain.tools.offload import Stop


def _open(data: bytes) -> Any:
    try:
        import openpyxl  # noqa: F401  (installed: xlsx_strings builds on it)
    except ImportError as exc:
        raise missing_extra("openpyxl", "excel", "reading .xlsx files") from exc
    # openpyxl's reader but for the shared strings, read without an object per string
    from rho_adapters.local.xlsx_strings import load_workbook

    try:
        return load_workbook(io.BytesIO(data))
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


def _digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


def checked_open(
    data: bytes, stop: Stop, checked: collections.deque[bytes], digest: bytes | None = None
) -> Any:
    """``data`` opened by openpyxl once ``check_workbook`` has passed it. ``checked`` holds
    the digests of the workbooks that passed lately (the reader's): a sheet is read from the
    same bytes twice (sheets, then rows), and the check scans every large part. ``digest``:
    ``data``'s, when the caller has it."""
    digest = digest or _digest(data)
    if digest not in checked:
        # Imported at the first workbook (zipfile, expat), not by every run's start-up.
        from rho_adapters.local.xlsx_guard import check_workbook

        check_workbook(data, stop)  # before openpyxl unpacks anything
        checked.append(digest)
    return _open(data)


def sheets(
    data: bytes,
    stop: Stop,
    *,
    checked: collections.deque[bytes],
    scanned: collections.deque[tuple[bytes, int, tuple[SheetInfo, ...]]],
    max_cells: int,
) -> tuple[SheetInfo, ...]:
    """See ``SpreadsheetReader.sheets``; the sheets scanned within ``max_cells`` cells in all.
    ``scanned`` holds the sheets of the workbooks scanned lately (the reader's), by digest
    and budget: the same bytes are answered from it, not opened and scanned again."""
    digest = _digest(data)
    # a copy: other threads of the reader may append meanwhile (each append is atomic)
    for known, budget, infos in tuple(scanned):
        if known == digest and budget == max_cells:
            return infos
    found = _scan_sheets(checked_open(data, stop, checked, digest), stop, max_cells)
    if _size(found) <= KEEP_AT_MOST:
        scanned.append((digest, max_cells, found))
    return found


# What a kept scan may hold, in sheets and hidden rows and columns: a crafted workbook of a
# million hidden rows would otherwise keep tens of MB in the agent's reader (eight of them,
# hundreds); such a scan is used once, as before the reader kept any.
KEEP_AT_MOST = 10_000


def _size(found: tuple[SheetInfo, ...]) -> int:
    return len(found) + sum(len(s.hidden_rows) + len(s.hidden_columns) for s in found)


def _scan_sheets(book: Any, stop: Stop, max_cells: int) -> tuple[SheetInfo, ...]:
    budget = CellBudget(max_cells)  # one for the workbook: its sheets may name one part
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
            for found in [scan(ws, stop, budget)]
        )
    finally:
        book.close()


def rows(
    data: bytes,
    sheet: str,
    *,
    start: int,
    count: int,
    max_columns: int,
    first_column: int,
    stop: Stop,
    checked: collections.deque[bytes],
    max_cells: int,
) -> tuple[tuple[Cell, ...], ...]:
    """See ``SpreadsheetReader.rows``; at most ``max_cells`` cells parsed."""
    book = checked_open(data, stop, checked)
    try:
        if sheet not in book.sheetnames:
            raise ToolError(f"no sheet {sheet!r}; sheets: {', '.join(book.sheetnames)}")
        try:
            # From row 1, not start: the rows before start are parsed anyway, and only
            # this loop can count them and stop.
            out = window(
                book[sheet],
                stop,
                max_cells,
                start=start,
                count=count,
                first_column=first_column,
                max_columns=max_columns,
                convert=_cell,
            )
        except BudgetSpent as spent:
            raise ToolError(
                f"sheet {sheet!r}: stopped at row {spent.row} after parsing "
                f"{max_cells:,} cells (the limit of one call); ask for fewer "
                "or earlier rows, or export the sheet as .csv"
            ) from None
        used = max((_used_width(row) for row in out), default=0)
        return tuple(row[:used] for row in out)
    finally:
        book.close()
