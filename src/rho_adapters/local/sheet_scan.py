"""One pass over a worksheet's XML, seeing what openpyxl's read-only rows leave out.

openpyxl's read-only rows (``data_only=True``) give a formula without a cached value as an
empty cell, say nothing of hidden rows and columns, and size a sheet by its dimension record,
which counts formatted empty cells (one value at A1 and a bordered cell at Z500 is "500 x 26").
This module drives openpyxl's own sheet parser (the one ``ReadOnlyWorksheet`` uses, openpyxl
3.1) with three additions: a formula cell without a cached value reads ``formula: =...``,
hidden rows and columns are collected, and only cells holding something count towards the
extent. Work is bounded by the caller's cell budget, one for all the sheets a call scans
(every row costs at least one cell, so a sheet of empty rows is bounded too), and stops at
the caller's ``Stop``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import attrs

from rho_domain.errors import ToolError
from rho_domain.ports.spreadsheet import Cell
from rho_domain.tools.offload import Stop
from rho_domain.value_methods import value_eq, value_hash, value_repr

FORMULA_PREFIX = "formula: "


@attrs.frozen(kw_only=True)
class SheetScan:
    """A sheet's used extent (the last row and column holding a value, a formula or text;
    formatting alone does not count), its hidden rows and columns (1-based), and whether the
    scan finished within the budget (False: at least ``rows`` rows)."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    rows: int
    columns: int
    complete: bool
    hidden_rows: tuple[int, ...]
    hidden_columns: tuple[int, ...]


class BudgetSpent(Exception):
    """The cell budget ran out at ``row``."""

    def __init__(self, row: int) -> None:
        super().__init__(row)
        self.row = row


# What a sheet costs at least, in cells: opening one (its part, a parser) costs what parsing
# some 30 cells does (0.3 ms against some 10 µs a cell, measured), so a workbook of many
# empty sheets, which may all name one part, spends the budget as rows do.
SHEET_COST = 32


@attrs.define
class CellBudget:
    """The cells one call may still parse, shared by every sheet the call scans: a workbook
    of many sheets (they may even name one part) gets one budget, not one per sheet."""

    __repr__ = value_repr
    __eq__ = value_eq

    left: int

    def spend(self, cells: int, row: int) -> None:
        """Count ``cells`` parsed at ``row``; raise ``BudgetSpent`` past the budget."""
        self.left -= cells
        if self.left < 0:
            raise BudgetSpent(row)


def _hidden(attrs_: dict[str, str]) -> bool:
    return attrs_.get("hidden", "").lower() in ("1", "true")


class _SharedStrings:
    """A workbook's shared strings indexed as Excel indexes them: from 0 up, so a cell naming
    string -1 names none (a Python list would give the last string, a value the workbook
    never put in that cell)."""

    __slots__ = ("_strings",)

    def __init__(self, strings: Any) -> None:
        self._strings = strings

    def __getitem__(self, index: int) -> Any:
        if not 0 <= index < len(self._strings):
            raise IndexError(
                f"it names shared string {index}; the workbook has {len(self._strings):,}"
            )
        return self._strings[index]


def _parser(ws: Any, source: Any) -> Any:
    """An openpyxl ``WorkSheetParser`` over ``source`` with the additions above."""
    from openpyxl.worksheet._reader import FORMULA_TAG, WorkSheetParser

    class _Parser(WorkSheetParser):  # type: ignore[misc]
        hidden_rows: list[int]
        hidden_columns: list[int]

        def parse_column_dimensions(self, col: Any) -> None:
            super().parse_column_dimensions(col)
            if _hidden(dict(col.attrib)):
                low, high = int(col.get("min")), int(col.get("max", col.get("min")))
                # A <col> may span to XFD (16,384); only the first columns can hold data
                # a reader asks for, and the list must stay small.
                self.hidden_columns.extend(range(low, min(high, low + 1024) + 1))

        def parse_row(self, row: Any) -> Any:
            number, cells = super().parse_row(row)
            if _hidden(dict(row.attrib)):
                self.hidden_rows.append(number)
            return number, cells

        def parse_cell(self, element: Any) -> Any:
            try:
                cell = super().parse_cell(element)  # data_only: the cached value, if any
            except (IndexError, ValueError, TypeError, OverflowError) as exc:
                # openpyxl indexes, casts and converts a cell's text as it finds it: a
                # crafted one is a damaged workbook, said as such, not an unexplained failure
                raise ToolError(
                    f"sheet {ws.title!r}, cell {element.get('r') or '?'}: {exc}; the "
                    "workbook is damaged (Excel would repair or refuse it)"
                ) from None
            if element.find(FORMULA_TAG) is not None:
                # Parsed even when a value is cached: a shared formula's master registers
                # the formula its dependants are translated from.
                formula = self.parse_formula(element)
                if cell["value"] is None:
                    text = formula if isinstance(formula, str) else getattr(formula, "text", "")
                    cell["value"] = FORMULA_PREFIX + str(text or "=")
            return cell

    book = ws.parent
    parser = _Parser(
        source,
        _SharedStrings(ws._shared_strings),
        data_only=True,
        epoch=book.epoch,
        date_formats=book._date_formats,
        timedelta_formats=book._timedelta_formats,
    )
    parser.hidden_rows = []
    parser.hidden_columns = []
    return parser


def _rows(
    ws: Any, stop: Stop, budget: CellBudget, parser_seen: Callable[[Any], None]
) -> Iterator[tuple[int, list[dict[str, Any]]]]:
    """(row number, parsed cells) for each row element, within the budget."""
    with ws._get_source() as source:
        parser = _parser(ws, source)
        parser_seen(parser)
        for number, row in parser.parse():
            stop.check()
            budget.spend(max(1, len(row)), number)
            yield number, row


def scan(ws: Any, stop: Stop, budget: CellBudget) -> SheetScan:
    """The sheet's ``SheetScan``, its cells taken from ``budget`` (the call's, which the
    sheets scanned before spent from); past it, what was seen (``complete`` False)."""
    seen: list[Any] = []
    rows = columns = 0
    complete = True
    if budget.left <= 0:  # spent on the sheets before: this one is not opened
        return SheetScan(rows=0, columns=0, complete=False, hidden_rows=(), hidden_columns=())
    before = budget.left
    try:
        for number, row in _rows(ws, stop, budget, seen.append):
            used = [c["column"] for c in row if c["value"] is not None]
            if used:
                rows, columns = number, max(columns, max(used))
    except BudgetSpent:
        complete = False
    # at least SHEET_COST for the sheet, its rows' cells included (the next sheets pay it)
    budget.left -= max(0, SHEET_COST - (before - budget.left))
    parser = seen[0] if seen else None
    return SheetScan(
        rows=rows,
        columns=columns,
        complete=complete,
        hidden_rows=tuple(parser.hidden_rows) if parser else (),
        hidden_columns=tuple(sorted(set(parser.hidden_columns))) if parser else (),
    )


def window(
    ws: Any,
    stop: Stop,
    max_cells: int,
    *,
    start: int,
    count: int,
    first_column: int,
    max_columns: int,
    convert: Callable[[Any], Cell],
) -> list[tuple[Cell, ...]]:
    """Rows ``start``..``start+count-1``, columns ``first_column``..``+max_columns-1``,
    each row as wide as ``max_columns`` (the caller trims); rows missing from the XML are
    empty. Raises ``BudgetSpent`` past ``max_cells``."""
    last = start + count - 1
    out: list[tuple[Cell, ...]] = []
    expected = start
    for number, row in _rows(ws, stop, CellBudget(max_cells), lambda _: None):
        if number < start:
            continue
        if number > last:
            break
        out.extend((None,) * max_columns for _ in range(expected, number))
        values: list[Cell] = [None] * max_columns
        for cell in row:
            index = cell["column"] - first_column
            if 0 <= index < max_columns:
                values[index] = convert(cell["value"])
        out.append(tuple(values))
        expected = number + 1
    return out
