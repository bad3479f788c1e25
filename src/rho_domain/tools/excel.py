"""read_excel: sheets and rows of .xlsx (through the SpreadsheetReader port) and .csv/.tsv.

.csv/.tsv are parsed here with the standard library; .xlsx bytes are read through the executor
(confinement, secrets) and decoded by the reader adapter (openpyxl, read-only, values not
formulas, but "formula: =..." for a formula without a cached value). .xls and broken files give
a clear error. A window of rows and columns is read (``start_row``/``max_rows``,
``start_column``/``max_columns``); the caps are stated in the output, sizes are the used extent
(formatting alone does not count), and hidden rows and columns are shown, marked. Both kinds are
bounded in bytes, not only rows: the file is read up to ``MAX_BYTES``, a workbook's unpacked
size is checked before it is opened (the reader's zip-bomb guard), and parsing runs in a thread
that stops when the call's deadline passes.
"""

from __future__ import annotations

import io
import posixpath
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from rho_domain.errors import ToolError
from rho_domain.ports.spreadsheet import Cell, SpreadsheetReader
from rho_domain.tools.base import READ_ONLY, ToolContext, ToolHandler, ToolOutput, ToolPolicy
from rho_domain.tools.offload import Stop, in_thread

if TYPE_CHECKING:  # built by the reader with the first workbook read
    from rho_domain.ports.sheets import SheetInfo

MAX_BYTES = 50 << 20
_SAME_NAME = " - the name of an earlier sheet, which Excel never allows: not readable by name"
_OLE2 = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # the compound file of .xls (and .doc)


def _not_a_workbook(data: bytes) -> tuple[str, str] | None:
    """What a file named .xlsx really is when it is a kind exported under that name: an Excel
    97-2003 workbook, or an HTML or XML page (reporting tools export tables so), with what
    to do; None for anything else (a zip is the reader's to judge)."""
    if data.startswith(_OLE2):
        return "an Excel 97-2003 (.xls) workbook", "save it as .xlsx or .csv"
    if data.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] == b"<":
        return "an HTML or XML page", "read it with the read tool"
    return None


MAX_ROWS = 1000
MAX_COLUMNS = 50
MAX_CELL = 200


class ReadExcelHandler(ToolHandler):
    """``read_excel``: sheets and rows of .xlsx, .csv and .tsv files, values only."""

    name = "read_excel"
    description = (
        "Read a spreadsheet (.xlsx, .csv, .tsv). action 'list_sheets' lists sheets with their "
        "used sizes; 'read_sheet' returns rows start_row..start_row+max_rows-1 (1-based) of "
        "sheet (default the first) as tab-separated values, each line starting with the row "
        f"number, columns start_column (a letter such as 'BA' or a number, default A) onward, "
        f"at most max_columns (<= {MAX_COLUMNS}). Values are the cached results of formulas; "
        "a formula never calculated shows as 'formula: =...'. Hidden rows and columns are "
        "included, not skipped: a hidden row's number is followed by ' (hidden)' and hidden "
        "columns are listed after the rows."
    )
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "action": {"type": "string", "enum": ["list_sheets", "read_sheet"]},
            "sheet": {"type": "string"},
            "start_row": {"type": "integer", "minimum": 1},
            "max_rows": {"type": "integer", "minimum": 1, "maximum": MAX_ROWS},
            "start_column": {"type": ["string", "integer"]},
            "max_columns": {"type": "integer", "minimum": 1, "maximum": MAX_COLUMNS},
        },
        "required": ["path"],
        "additionalProperties": False,
    }

    def __init__(self, reader: SpreadsheetReader | None = None) -> None:
        self.reader = reader

    def policy_for(self, arguments: Mapping[str, Any]) -> ToolPolicy:
        """Read-only."""
        return READ_ONLY

    async def handle(self, arguments: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
        """See ``ToolHandler.handle``."""
        path = str(arguments["path"])
        action = str(arguments.get("action") or "read_sheet")
        start = int(arguments.get("start_row") or 1)
        count = int(arguments.get("max_rows") or 100)
        # the columns asked for, 1-based: from the first, at most max_columns of them
        first = column_number(arguments.get("start_column") or 1)
        columns = range(first, first + int(arguments.get("max_columns") or MAX_COLUMNS))
        ext = posixpath.splitext(path)[1].lower()
        if ext == ".xls":
            raise ToolError(".xls (Excel 97-2003) is not supported; save it as .xlsx or .csv")
        if ext not in (".xlsx", ".xlsm", ".csv", ".tsv"):
            raise ToolError(
                f"unsupported spreadsheet type {ext or '(none)'}: use .xlsx, .csv, .tsv"
            )
        data = await ctx.executor.read(path, length=MAX_BYTES + 1)
        if len(data) > MAX_BYTES:
            raise ToolError(f"{path} is larger than {MAX_BYTES:,} bytes")
        if ext in (".csv", ".tsv"):
            delimiter = "\t" if ext == ".tsv" else ","
            wanted = 0 if action == "list_sheets" else count
            window, total, width = await in_thread(
                lambda stop: _parse_delimited(data, delimiter, start, wanted, stop)
            )
            if action == "list_sheets":
                return ToolOutput(content=f"1. {path} ({total} rows x {width} columns)")
            cut = [row[columns.start - 1 : columns.stop - 1] for row in window]
            return _render(path, cut, start, total, width, columns=columns)
        if (other := _not_a_workbook(data)) is not None:
            raise ToolError(f"{path} is {other[0]}, not an .xlsx workbook; {other[1]}")
        if self.reader is None:
            raise ToolError("reading .xlsx needs openpyxl: install rho-agent[excel]")
        try:
            sheets = await self.reader.sheets(data)
        except ToolError as exc:
            raise ToolError(f"{path}: {exc}") from None
        names = [s.name for s in sheets]
        if action == "list_sheets":
            # Excel never lets two sheets share a name; a crafted workbook may, and only the
            # first of them is read by name: the listing says so rather than hide the rest
            seen: set[str] = set()  # a set: a crafted workbook may list 100,000 sheets
            listing = []
            for i, s in enumerate(sheets, 1):
                listing.append(
                    f"{i}. {s.name} ({'' if s.complete else 'at least '}{s.rows} rows x "
                    f"{s.columns} columns{_hidden_count(s)})"
                    + (_SAME_NAME if s.name in seen else "")
                )
                seen.add(s.name)
            return ToolOutput(content="\n".join(listing) or "(no sheets)")
        if not sheets:
            raise ToolError(f"{path} has no sheets")
        name = str(arguments.get("sheet") or sheets[0].name)
        info = next((s for s in sheets if s.name == name), None)
        if info is None:
            raise ToolError(f"no sheet {name!r}; sheets: {', '.join(s.name for s in sheets)}")
        if info.complete:  # rows past the used extent are empty (formatting at most)
            count = max(0, min(count, info.rows - start + 1))
        rows = (
            await self.reader.rows(
                data,
                name,
                start=start,
                count=count,
                max_columns=len(columns),
                first_column=columns.start,
            )
            if count
            else ()
        )
        same = names.count(name)
        return _render(
            f"{path} [{name}]"
            + (f" (the first of {same} sheets of this name)" if same > 1 else ""),
            rows,
            start,
            info.rows,
            info.columns,
            complete=info.complete,
            columns=columns,
            hidden_rows=frozenset(info.hidden_rows),
            hidden_columns=info.hidden_columns,
        )


def column_number(value: object) -> int:
    """A 1-based column number from a number or a letter name ("A", "ba", "XFD")."""
    text = str(value).strip()
    if text.isdigit() and int(text) >= 1:
        return int(text)
    if text.isascii() and text.isalpha() and len(text) <= 3:
        number = 0
        for letter in text.upper():
            number = number * 26 + ord(letter) - ord("A") + 1
        return number
    raise ToolError(f"start_column must be a column letter (A, BA) or a number >= 1, got {text!r}")


def column_letter(number: int) -> str:
    """The letter name of a 1-based column number (1 -> A, 53 -> BA)."""
    letters = ""
    while number:
        number, rest = divmod(number - 1, 26)
        letters = chr(ord("A") + rest) + letters
    return letters


def _hidden_count(sheet: SheetInfo) -> str:
    parts = [
        f"{len(found)} {what}"
        for found, what in ((sheet.hidden_rows, "rows"), (sheet.hidden_columns, "columns"))
        if found
    ]
    return f"; hidden: {', '.join(parts)}" if parts else ""


def _parse_delimited(
    data: bytes, delimiter: str, start: int, count: int, stop: Stop
) -> tuple[list[tuple[Cell, ...]], int, int]:
    """(rows start..start+count-1, total rows, widest row), keeping only the window in memory:
    the text is decoded as it is read, never as a whole (a 50 MB file of non-ASCII text would
    be 200 MB as one string). Runs in a thread; stops at ``stop``."""
    import csv  # with the first delimited file, not with every registry of tools

    text = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8-sig", errors="replace", newline="")
    window: list[tuple[Cell, ...]] = []
    total = width = 0
    try:
        for row in csv.reader(text, delimiter=delimiter):
            stop.check()
            total += 1
            width = max(width, len(row))
            if start <= total < start + count:
                window.append(tuple(row))
        return window, total, width
    except csv.Error as exc:
        raise ToolError(
            f"could not parse the file as {delimiter!r}-separated values: {exc}"
        ) from None


def _text(value: Cell) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    text = str(value).replace("\t", " ").replace("\n", " ")
    return text if len(text) <= MAX_CELL else text[:MAX_CELL] + "..."


def _render(
    title: str,
    rows: Sequence[Sequence[Cell]],
    start: int,
    total: int,
    width: int,
    *,
    columns: range,
    complete: bool = True,
    hidden_rows: frozenset[int] = frozenset(),
    hidden_columns: Sequence[int] = (),
) -> ToolOutput:
    reached = max((len(r) for r in rows), default=0)
    if reached:  # the rows are wider than the size said (a .csv's ragged rows)
        width = max(width, columns.start - 1 + reached)
    total_text = f"{total}" if complete else f"at least {total}"
    lines = [
        f"{start + i}{' (hidden)' if start + i in hidden_rows else ''}\t"
        + "\t".join(_text(v) for v in row[: len(columns)])
        for i, row in enumerate(rows)
    ]
    notes = (
        [f"rows {start}-{start + len(rows) - 1} of {total_text}"]
        if rows
        else [f"no rows from {start} (the sheet has {total_text})"]
    )
    last = columns.stop - 1
    if columns.start > 1 or width > last:
        shown = f"{column_letter(columns.start)}-{column_letter(min(width, last))}"
        notes.append(
            f"columns {shown} of {width} (A-{column_letter(width)}); start_column for others"
            if columns.start <= width
            else f"no columns from {column_letter(columns.start)} (the sheet has {width})"
        )
    shown_hidden = [c for c in hidden_columns if c in columns]
    if shown_hidden:
        notes.append(f"hidden columns: {', '.join(column_letter(c) for c in shown_hidden)}")
    header = f"{title}: {total_text} rows x {width} columns"
    return ToolOutput(
        content="\n".join([header, *lines, f"[{'; '.join(notes)}]"]),
        metadata={"rows": len(rows), "total_rows": total},
    )
