"""A cell a workbook cannot hold is a damaged workbook, said as such; never another value.

Red-team pass (redwrite15): a cell naming shared string -1 read as the workbook's last string
(Python counts a negative index from the end; Excel refuses such a file), one naming a string
past the table, or a number, date or boolean that is no such thing, ended read_excel
'failed unexpectedly: IndexError' or 'ValueError', though every openpyxl failure is to be a
plain error (workbook.py)."""

from __future__ import annotations

import importlib.util
import io
import zipfile
from pathlib import Path

import pytest
from test_read_excel_corners import call, workbook

if importlib.util.find_spec("openpyxl") is None:
    pytest.skip("openpyxl is not installed", allow_module_level=True)

STRINGS = (
    b'<?xml version="1.0"?><sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/'
    b'main" count="2" uniqueCount="2"><si><t>first</t></si><si><t>last string</t></si></sst>'
)
DAMAGED = "the workbook is damaged (Excel would repair or refuse it)"


def _with_cell(path: Path, cell: str) -> None:
    """A workbook of two shared strings whose sheet holds the one ``cell`` (its XML)."""
    book = workbook()
    book.active["A1"] = "x"
    buffer = io.BytesIO()
    book.save(buffer)
    source = zipfile.ZipFile(buffer)
    parts = {info.filename: source.read(info.filename) for info in source.infolist()}
    parts["[Content_Types].xml"] = parts["[Content_Types].xml"].replace(
        b"</Types>",
        b'<Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.'
        b'openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/></Types>',
    )
    parts["xl/sharedStrings.xml"] = STRINGS
    parts["xl/worksheets/sheet1.xml"] = (
        '<?xml version="1.0"?><worksheet xmlns="http://schemas.openxmlformats.org/'
        f'spreadsheetml/2006/main"><sheetData><row r="1">{cell}</row></sheetData></worksheet>'
    ).encode()
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as target:
        for name, data in parts.items():
            target.writestr(name, data)


@pytest.mark.parametrize(
    ("cell", "why"),
    [
        ('<c r="A1" t="s"><v>-1</v></c>', "cell A1: it names shared string -1; the workbook has 2"),
        ('<c r="A1" t="s"><v>2</v></c>', "cell A1: it names shared string 2; the workbook has 2"),
        ('<c r="B1" t="s"><v>1.5</v></c>', "cell B1: invalid literal for int()"),
        ('<c r="A1"><v>abc</v></c>', "cell A1: invalid literal for int()"),
        ('<c r="A1" t="d"><v>soon</v></c>', "cell A1: Invalid datetime value soon"),
        ('<c r="ZZZZZ1"><v>1</v></c>', "cell ZZZZZ1: 'ZZZZZ' is not a valid column name"),
    ],
)
@pytest.mark.parametrize("action", ["list_sheets", "read_sheet"])
async def test_a_cell_the_workbook_cannot_hold_is_refused(
    tmp_path: Path, cell: str, why: str, action: str
) -> None:
    _with_cell(tmp_path / "w.xlsx", cell)
    out = await call(tmp_path, path="w.xlsx", action=action)
    assert out.is_error
    assert "unexpectedly" not in out.content
    assert f"w.xlsx: sheet 'Sheet', {why}" in out.content
    assert DAMAGED in out.content
    assert "last string" not in out.content


async def test_the_strings_it_holds_read_as_before(tmp_path: Path) -> None:
    _with_cell(tmp_path / "w.xlsx", '<c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c>')
    out = await call(tmp_path, path="w.xlsx")
    assert out.content.splitlines()[1] == "1\tfirst\tlast string"


@pytest.mark.parametrize(
    ("head", "what"),
    [
        (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 512, "an Excel 97-2003 (.xls) workbook"),
        (b"\xef\xbb\xbf\n<html><table><tr><td>1</td></tr></table>", "an HTML or XML page"),
    ],
)
async def test_a_file_named_xlsx_that_is_another_kind_says_which(
    tmp_path: Path, head: bytes, what: str
) -> None:
    # Reporting tools export .xls and HTML tables under the name .xlsx; the answer was 'not a
    # readable .xlsx workbook (BadZipFile: File is not a zip file)'.
    (tmp_path / "export.xlsx").write_bytes(head)
    out = await call(tmp_path, path="export.xlsx", action="list_sheets")
    assert out.is_error
    assert f"export.xlsx is {what}, not an .xlsx workbook; " in out.content
    assert "BadZipFile" not in out.content


async def test_a_second_sheet_of_the_same_name_is_said_not_hidden(tmp_path: Path) -> None:
    # Excel never lets two sheets share a name; a crafted workbook may, and read_sheet reads
    # the first by name: the listing and the read said nothing of the other sheet's rows.
    book = workbook()
    book.active.title = "Data"
    book.active["A1"] = "the decoy"
    book.create_sheet("Other")["A1"] = "the rows nobody reads"
    buffer = io.BytesIO()
    book.save(buffer)
    source = zipfile.ZipFile(buffer)
    with zipfile.ZipFile(tmp_path / "w.xlsx", "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            part = source.read(info.filename)
            if info.filename == "xl/workbook.xml":
                part = part.replace(b'name="Other"', b'name="Data"')
            target.writestr(info, part)
    listing = await call(tmp_path, path="w.xlsx", action="list_sheets")
    assert listing.content.splitlines()[1] == (
        "2. Data (1 rows x 1 columns) - the name of an earlier sheet, which Excel never "
        "allows: not readable by name"
    )
    read = await call(tmp_path, path="w.xlsx", sheet="Data")
    assert read.content.splitlines()[:2] == [
        "w.xlsx [Data] (the first of 2 sheets of this name): 1 rows x 1 columns",
        "1\tthe decoy",
    ]
