"""read_excel in the corners (issue 29, item 11): columns past the cap, the used extent (not
the dimension record), formulas without a cached value, hidden rows and columns.

Real workbooks written by openpyxl (and, for a cached value or a shared formula, the sheet
XML as Excel writes it), read through a real LocalExecutor and the OpenpyxlReader.
"""

from __future__ import annotations

import importlib.util
import io
import json
import zipfile
from pathlib import Path
from typing import Any

import pytest

from rho_adapters.clock import SystemClock
from rho_adapters.fakes import MemorySpreadsheetReader
from rho_adapters.local import LocalExecutor
from rho_adapters.local.spreadsheet import OpenpyxlReader
from rho_domain.messages import ToolCall
from rho_domain.permissions import readonly_profile
from rho_domain.ports.spreadsheet import SpreadsheetReader
from rho_domain.tools.base import ToolContext, ToolOutput
from rho_domain.tools.factory import build_registry

if importlib.util.find_spec("openpyxl") is None:  # found, not imported (``workbook``)
    pytest.skip("openpyxl is not installed", allow_module_level=True)
RO = readonly_profile()
SHEET = "xl/worksheets/sheet1.xml"


async def call(ws: Path, reader: SpreadsheetReader | None = None, **args: Any) -> ToolOutput:
    registry = build_registry(RO, spreadsheet_reader=reader or OpenpyxlReader())
    ctx = ToolContext(
        session_id="s", call_id="c", executor=LocalExecutor(str(ws)), profile=RO,
        clock=SystemClock(),
    )  # fmt: skip
    return await registry.dispatch(
        ToolCall(id="c", name="read_excel", arguments=json.dumps(args)), ctx
    )


def workbook() -> Any:
    """A new openpyxl workbook. openpyxl is imported here, not at the module's top: each xdist
    worker collects this module, and only the one that runs its tests needs openpyxl."""
    import openpyxl

    return openpyxl.Workbook()


def save(book: Any, path: Path, **replace: str) -> None:
    """Save ``book`` at ``path``, replacing text in the sheet XML (``old=new`` pairs given as
    a mapping, since the XML is not a Python name)."""
    buffer = io.BytesIO()
    book.save(buffer)
    source = zipfile.ZipFile(buffer)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            part = source.read(info.filename)
            if info.filename == SHEET:
                text = part.decode()
                for old, new in replace.items():
                    assert old in text, old
                    text = text.replace(old, new)
                part = text.encode()
            target.writestr(info, part)


def wide(path: Path) -> None:
    book = workbook()
    book.active.title = "Wide"
    for r in range(1, 4):
        book.active.append([f"r{r}c{c}" for c in range(1, 121)])
    book.save(path)


async def test_columns_past_the_cap_are_readable_by_letter_or_number(tmp_path: Path) -> None:
    wide(tmp_path / "wide.xlsx")
    out = await call(tmp_path, path="wide.xlsx", max_rows=1)
    assert out.content.splitlines()[1].endswith("\tr1c50")
    assert "[rows 1-1 of 3; columns A-AX of 120 (A-DP); start_column for others]" in out.content
    out = await call(tmp_path, path="wide.xlsx", start_column="BA", max_columns=3)
    assert out.content.splitlines()[1:4] == [
        "1\tr1c53\tr1c54\tr1c55",
        "2\tr2c53\tr2c54\tr2c55",
        "3\tr3c53\tr3c54\tr3c55",
    ]
    assert out.content.splitlines()[-1] == (
        "[rows 1-3 of 3; columns BA-BC of 120 (A-DP); start_column for others]"
    )
    by_number = await call(tmp_path, path="wide.xlsx", start_column=53, max_columns=3)
    assert by_number.content == out.content
    last = await call(tmp_path, path="wide.xlsx", start_column="dp", start_row=3, max_rows=1)
    assert last.content.splitlines()[1] == "3\tr3c120"
    past = await call(tmp_path, path="wide.xlsx", start_column="ZZ")
    assert "no columns from ZZ (the sheet has 120)" in past.content
    bad = await call(tmp_path, path="wide.xlsx", start_column="B2")
    assert bad.is_error
    assert "start_column must be a column letter (A, BA) or a number >= 1, got 'B2'" in (
        bad.content
    )


async def test_a_csv_reads_a_column_range_too(tmp_path: Path) -> None:
    (tmp_path / "w.csv").write_text(
        "\n".join(",".join(f"{r}-{c}" for c in range(60)) for r in range(2))
    )
    out = await call(tmp_path, path="w.csv", start_column="BH")  # the 60th column
    assert out.content.splitlines()[1:3] == ["1\t0-59", "2\t1-59"]


async def test_the_size_is_the_used_data_not_a_formatted_empty_cell(tmp_path: Path) -> None:
    from openpyxl.styles import Border, PatternFill, Side

    book = workbook()
    sheet = book.active
    sheet.title = "Main"
    sheet["A1"] = "only"
    sheet["Z500"].fill = PatternFill("solid", fgColor="FFFF00")  # formatted, empty
    sheet["C2"].border = Border(left=Side(style="thin"))
    save(book, tmp_path / "sparse.xlsx")
    assert b'<dimension ref="A1:Z500"' in zipfile.ZipFile(tmp_path / "sparse.xlsx").read(SHEET)
    out = await call(tmp_path, path="sparse.xlsx", action="list_sheets")
    assert out.content == "1. Main (1 rows x 1 columns)"
    out = await call(tmp_path, path="sparse.xlsx")
    assert out.content.splitlines() == [
        "sparse.xlsx [Main]: 1 rows x 1 columns",
        "1\tonly",
        "[rows 1-1 of 1]",
    ]
    sheet["D7"] = 4  # a value far from A1 widens and lengthens it
    save(book, tmp_path / "sparse.xlsx")
    out = await call(tmp_path, path="sparse.xlsx", action="list_sheets")
    assert out.content == "1. Main (7 rows x 4 columns)"


async def test_a_formula_without_a_cached_value_says_so(tmp_path: Path) -> None:
    book = workbook()
    sheet = book.active
    sheet.title = "Main"
    sheet.append([1, 2, "=A1+B1", "=SUM(A1:B1)"])
    sheet.append([3, 4, "=A2+B2"])
    sheet.append([5, 6, "=A3+B3"])
    # Excel's way: C1 cached, C1:C3 one shared formula (C2, C3 written as references to it,
    # C3 uncalculated), D1 never calculated.
    save(
        book,
        tmp_path / "f.xlsx",
        **{
            '<c r="C1"><f>A1+B1</f><v /></c>': (
                '<c r="C1"><f t="shared" ref="C1:C3" si="0">A1+B1</f><v>3</v></c>'
            ),
            '<c r="C2"><f>A2+B2</f><v /></c>': '<c r="C2"><f t="shared" si="0"/><v>7</v></c>',
            '<c r="C3"><f>A3+B3</f><v /></c>': '<c r="C3"><f t="shared" si="0"/></c>',
        },
    )
    out = await call(tmp_path, path="f.xlsx")
    assert out.content.splitlines()[1:4] == [
        "1\t1\t2\t3\tformula: =SUM(A1:B1)",
        "2\t3\t4\t7\t",
        "3\t5\t6\tformula: =A3+B3\t",
    ]
    assert "formula: =A1+B1" not in out.content  # a cached value is the value


async def test_hidden_rows_and_columns_are_shown_and_marked(tmp_path: Path) -> None:
    book = workbook()
    sheet = book.active
    sheet.title = "Main"
    for r in range(1, 5):
        sheet.append([f"a{r}", f"b{r}", f"c{r}"])
    sheet.row_dimensions[3].hidden = True
    sheet.column_dimensions["B"].hidden = True
    book.save(tmp_path / "h.xlsx")
    out = await call(tmp_path, path="h.xlsx", action="list_sheets")
    assert out.content == "1. Main (4 rows x 3 columns; hidden: 1 rows, 1 columns)"
    out = await call(tmp_path, path="h.xlsx")
    assert out.content.splitlines() == [
        "h.xlsx [Main]: 4 rows x 3 columns",
        "1\ta1\tb1\tc1",
        "2\ta2\tb2\tc2",
        "3 (hidden)\ta3\tb3\tc3",
        "4\ta4\tb4\tc4",
        "[rows 1-4 of 4; hidden columns: B]",
    ]
    out = await call(tmp_path, path="h.xlsx", start_column="C")  # B not in the window
    assert (
        out.content.splitlines()[-1]
        == "[rows 1-4 of 4; columns C-C of 3 (A-C); start_column for others]"
    )


async def test_the_fake_reader_reads_the_same_window(tmp_path: Path) -> None:
    wide(tmp_path / "wide.xlsx")
    data = (tmp_path / "wide.xlsx").read_bytes()
    rows = [[f"r{r}c{c}" for c in range(1, 121)] for r in range(1, 4)]
    fake = MemorySpreadsheetReader({data: {"Wide": rows}})
    for reader in (OpenpyxlReader(), fake):
        assert await reader.rows(
            data, "Wide", start=2, count=1, max_columns=2, first_column=119
        ) == (("r2c119", "r2c120"),)
    assert (await call(tmp_path, fake, path="wide.xlsx", start_column="BA")).content == (
        await call(tmp_path, path="wide.xlsx", start_column="BA")
    ).content


async def test_a_workbook_s_sheets_are_scanned_once_per_reader_and_content(tmp_path: Path) -> None:
    """A reader keeps the sheets it scanned by the bytes' digest and its cell budget: the
    same bytes are answered with the same sheets (not scanned again), changed bytes and
    another budget are scanned anew, and a listing then a read through one reader agree."""
    wide(tmp_path / "wide.xlsx")
    data = (tmp_path / "wide.xlsx").read_bytes()
    reader = OpenpyxlReader()
    first = await reader.sheets(data)
    assert (first[0].name, first[0].rows, first[0].columns) == ("Wide", 3, 120)
    assert await reader.sheets(data) is first  # kept, not scanned again
    assert await reader.sheets(bytes(data)) is first  # by content, not by object
    book = workbook()
    book.active.title = "Wide"
    book.active.append(["one"])
    book.save(tmp_path / "wide.xlsx")  # the same path, other bytes
    changed = (tmp_path / "wide.xlsx").read_bytes()
    assert [(s.name, s.rows, s.columns) for s in await reader.sheets(changed)] == [("Wide", 1, 1)]
    budget = OpenpyxlReader(max_cells=2)
    assert (await budget.sheets(data))[0].complete is False
    reader.max_cells = 2  # the same bytes under another budget: scanned under it
    assert (await reader.sheets(data))[0].complete is False
    listing = await call(tmp_path, reader, path="wide.xlsx", action="list_sheets")
    assert listing.content == "1. Wide (1 rows x 1 columns)"
    read = await call(tmp_path, reader, path="wide.xlsx")
    assert read.content.splitlines()[:2] == ["wide.xlsx [Wide]: 1 rows x 1 columns", "1\tone"]


async def test_a_scan_with_many_hidden_rows_is_not_kept(tmp_path: Path) -> None:
    """A reader keeps no scan past ``KEEP_AT_MOST`` sheets and hidden rows and columns (a
    crafted workbook's could be tens of MB): the same bytes are scanned again, and read the
    same; one hidden row fewer than the bound is kept."""
    from rho_adapters.local.workbook import KEEP_AT_MOST

    def hidden_rows(count: int) -> bytes:
        book = workbook()
        book.active.title = "Main"
        book.active.append(["a"])
        rows = "".join(f'<row r="{r}" hidden="1"/>' for r in range(2, count + 2))
        save(book, tmp_path / "hidden.xlsx", **{"</sheetData>": rows + "</sheetData>"})
        return (tmp_path / "hidden.xlsx").read_bytes()

    reader = OpenpyxlReader()
    many = hidden_rows(KEEP_AT_MOST)  # with its one sheet: one past the bound
    first = await reader.sheets(many)
    assert len(first[0].hidden_rows) == KEEP_AT_MOST
    again = await reader.sheets(many)
    assert again == first
    assert again is not first  # scanned again, not kept
    fewer = hidden_rows(KEEP_AT_MOST - 1)
    assert await reader.sheets(fewer) is await reader.sheets(fewer)
