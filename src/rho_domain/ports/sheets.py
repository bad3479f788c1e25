"""SheetInfo: one sheet of a workbook, as ``SpreadsheetReader.sheets`` describes it.

Apart from the port (``rho_domain.ports.spreadsheet``, which names it lazily) because every
read-only registry holds the ``read_excel`` tool and its reader, and only a workbook read
builds one.
"""

from __future__ import annotations

import attrs

from rho_domain.value_methods import value_eq, value_hash, value_repr


@attrs.frozen(kw_only=True)
class SheetInfo:
    """One sheet: its name and its used size: the last row and column holding a value or a
    formula (a formatted empty cell does not count, whatever the workbook's own dimension
    record says). ``complete`` False: the reader stopped counting at its work budget; the
    sheet has at least ``rows`` rows. ``hidden_rows`` / ``hidden_columns``: 1-based numbers
    of the rows and columns the workbook hides (as far as it was read)."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    name: str
    rows: int
    columns: int
    complete: bool = True
    hidden_rows: tuple[int, ...] = ()
    hidden_columns: tuple[int, ...] = ()
