"""SpreadsheetReader: decode a workbook file's bytes (.xlsx) into sheets and cell values.

The bytes come from ``Executor.read``, so confinement and secrets rules apply before any
parsing; the reader itself touches no filesystem.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Protocol

import attrs

Cell = str | int | float | bool | None


@attrs.frozen(kw_only=True)
class SheetInfo:
    """One sheet: its name and its used size (rows and columns, from the workbook).
    ``complete`` False: the reader stopped counting at its work budget; the sheet has at
    least ``rows`` rows."""

    name: str
    rows: int
    columns: int
    complete: bool = True


class SpreadsheetReader(Protocol):
    """Reads workbooks in read-only mode (values, never formulas)."""

    @abstractmethod
    async def sheets(self, data: bytes) -> tuple[SheetInfo, ...]:
        """The workbook's sheets in order. Raises ``ToolError`` for a broken or unsupported
        file, and for one that would cost more memory or work to open than the reader allows
        (a zip bomb), saying which limit."""

    @abstractmethod
    async def rows(
        self, data: bytes, sheet: str, *, start: int, count: int, max_columns: int
    ) -> tuple[tuple[Cell, ...], ...]:
        """Rows ``start`` (1-based) .. ``start+count-1`` of ``sheet``, at most ``max_columns``
        cells each. Raises ``ToolError`` for an unknown sheet or a broken file."""
