"""SpreadsheetReader: decode a workbook file's bytes (.xlsx) into sheets and cell values.

The bytes come from ``Executor.read``, so confinement and secrets rules apply before any
parsing; the reader itself touches no filesystem.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import TYPE_CHECKING, Protocol

from rho_domain.lazy_names import lazy_names

if TYPE_CHECKING:
    from rho_domain.ports.sheets import SheetInfo as SheetInfo

Cell = str | int | float | bool | None
# built by the reader with the first workbook read, not by every registry naming the port
__getattr__ = lazy_names(__name__, {"SheetInfo": "rho_domain.ports.sheets"})


class SpreadsheetReader(Protocol):
    """Reads workbooks in read-only mode: values (the cached result of a formula), never
    formulas, except that a formula cell without a cached value reads ``"formula: =..."``
    (the workbook was written by a program that does not calculate)."""

    @abstractmethod
    async def sheets(self, data: bytes) -> tuple[SheetInfo, ...]:
        """The workbook's sheets in order. Raises ``ToolError`` for a broken or unsupported
        file, and for one that would cost more memory or work to open than the reader allows
        (a zip bomb), saying which limit."""

    @abstractmethod
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
        """Rows ``start`` (1-based) .. ``start+count-1`` of ``sheet``, each the cells of
        columns ``first_column`` (1-based) .. ``first_column+max_columns-1``; columns empty
        in every row returned are cut from the right. Raises ``ToolError`` for an unknown
        sheet or a broken file."""
