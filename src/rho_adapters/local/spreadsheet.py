"""OpenpyxlReader: the SpreadsheetReader port over openpyxl (extra ``excel``), read-only mode.

openpyxl is imported lazily; a missing install raises ``MissingExtra``. Before openpyxl sees
the bytes, ``xlsx_guard.check_workbook`` refuses a zip bomb from the zip's directory. Sheets
are read by ``sheet_scan`` (used extent, hidden rows and columns, "formula: =..." for a formula
without a cached value). Parsing runs in a thread (``in_thread``) that checks at every row
whether its caller gave up, and within a budget of ``MAX_CELLS`` cells per call; every
openpyxl/zip failure becomes a ``ToolError``. The sheets of the last eight workbooks scanned
are kept by digest: a ``read_excel`` call asks for them before its rows, so a listing and each
page of a read after it open and scan the sheets once (a scan of more than
``workbook.KEEP_AT_MOST`` sheets and hidden rows and columns is not kept).

Every Agent builds a reader (its ``read_excel`` tool holds one); what reads a workbook
(``workbook``, ``sheet_scan``) is imported with the first workbook read.
"""

from __future__ import annotations

import collections
from typing import TYPE_CHECKING

from rho_domain.ports.spreadsheet import Cell, SpreadsheetReader
from rho_domain.tools.offload import in_thread

if TYPE_CHECKING:  # the workbook module builds them, with the first workbook read
    from rho_domain.ports.sheets import SheetInfo

# Cells parsed per call (rows before the window included, each padded to the width read):
# the work a call may cost, whatever the sheet holds. openpyxl parses 1,000,000 in about 7 s
# on a free core (22 s on a loaded 2-core machine); a cancelled call stops at the next row.
MAX_CELLS = 1_000_000


class OpenpyxlReader(SpreadsheetReader):
    """The ``SpreadsheetReader`` port over openpyxl in read-only mode (extra ``excel``).
    ``max_cells``: the cells one call may parse (``MAX_CELLS``)."""

    def __init__(self, *, max_cells: int = MAX_CELLS) -> None:
        self.max_cells = max_cells
        # Digests of the workbooks that passed check_workbook lately: read_sheet reads the
        # same bytes twice (sheets, then rows), and the check scans every large part.
        self._checked: collections.deque[bytes] = collections.deque(maxlen=8)
        # The sheets of the workbooks scanned lately, by digest: every read_excel call asks
        # for them first, and a scan parses every cell of every sheet (a list, then each page
        # of a read, would scan the same bytes again).
        self._scanned: collections.deque[tuple[bytes, int, tuple[SheetInfo, ...]]] = (
            collections.deque(maxlen=8)
        )

    async def sheets(self, data: bytes) -> tuple[SheetInfo, ...]:
        """See ``SpreadsheetReader.sheets``."""
        from rho_adapters.local import workbook

        checked, scanned, max_cells = self._checked, self._scanned, self.max_cells
        return await in_thread(
            lambda stop: workbook.sheets(
                data, stop, checked=checked, scanned=scanned, max_cells=max_cells
            )
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
        """See ``SpreadsheetReader.rows``."""
        from rho_adapters.local import workbook

        checked, max_cells = self._checked, self.max_cells
        return await in_thread(
            lambda stop: workbook.rows(
                data,
                sheet,
                start=start,
                count=count,
                max_columns=max_columns,
                first_column=first_column,
                stop=stop,
                checked=checked,
                max_cells=max_cells,
            )
        )
