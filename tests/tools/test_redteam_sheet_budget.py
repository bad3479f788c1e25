"""A read_excel call parses at most its cell budget, whatever the number of sheets.

Red-team pass (redwrite15): ``MAX_CELLS`` bounds "the cells one call may parse", but each
sheet was scanned within the whole budget, so a workbook of N sheets cost N budgets. Sheets
may even share one worksheet part (the workbook's relations name the same target): a 490 KB
workbook of 20 sheets naming one part of 200,000 empty rows cost 24 s of CPU in one listing
(budget: 1,000,000 cells, some 8 s), and a 2.4 MB one of 100 such sheets held a core until
the call's deadline."""

from __future__ import annotations

import importlib.util
import io
import zipfile

import pytest

from rho_adapters.local.spreadsheet import OpenpyxlReader

if importlib.util.find_spec("openpyxl") is None:
    pytest.skip("openpyxl is not installed", allow_module_level=True)

NS = (
    'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" '
    'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"'
)
WORKSHEET = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet"


def _sheets_naming_one_part(sheets: int, rows: int) -> bytes:
    """A workbook of ``sheets`` sheets, all naming xl/worksheets/sheet1.xml, which holds
    ``rows`` rows of one value each."""
    import openpyxl

    book = openpyxl.Workbook()
    book.active["A1"] = "x"
    buffer = io.BytesIO()
    book.save(buffer)
    source = zipfile.ZipFile(buffer)
    cells = "".join(f'<row r="{r}"><c r="A{r}"><v>{r}</v></c></row>' for r in range(1, rows + 1))
    part = f'<?xml version="1.0"?><worksheet {NS}><sheetData>{cells}</sheetData></worksheet>'
    entries = "".join(
        f'<sheet name="S{i}" sheetId="{i}" r:id="rId{100 + i}"/>' for i in range(1, sheets + 1)
    )
    workbook_xml = f'<?xml version="1.0"?><workbook {NS}><sheets>{entries}</sheets></workbook>'
    targets = "".join(
        f'<Relationship Id="rId{100 + i}" Type="{WORKSHEET}" Target="worksheets/sheet1.xml"/>'
        for i in range(1, sheets + 1)
    )
    replaced = {
        "xl/worksheets/sheet1.xml": part.encode(),
        "xl/workbook.xml": workbook_xml.encode(),
        "xl/_rels/workbook.xml.rels": source.read("xl/_rels/workbook.xml.rels")
        .decode()
        .replace("</Relationships>", targets + "</Relationships>")
        .encode(),
    }
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            target.writestr(info, replaced.get(info.filename, source.read(info.filename)))
    return out.getvalue()


async def test_the_budget_holds_for_the_whole_workbook() -> None:
    data = _sheets_naming_one_part(sheets=5, rows=600)
    found = await OpenpyxlReader(max_cells=1000).sheets(data)
    assert [s.name for s in found] == ["S1", "S2", "S3", "S4", "S5"]
    # 600 cells for the first sheet, the 400 left for the second, none for the rest
    assert [(s.rows, s.complete) for s in found] == [
        (600, True),
        (400, False),
        (0, False),
        (0, False),
        (0, False),
    ]


async def test_a_workbook_within_the_budget_is_scanned_whole() -> None:
    data = _sheets_naming_one_part(sheets=3, rows=300)
    found = await OpenpyxlReader(max_cells=1000).sheets(data)
    assert [(s.rows, s.complete) for s in found] == [(300, True)] * 3


async def test_opening_a_sheet_costs_some_cells_too() -> None:
    # Every row costs at least one cell, but an empty sheet cost none: 20,000 sheets naming
    # one empty part (211 KB) cost 5.7 s of CPU within any budget (some 0.3 ms a sheet
    # opened). Each sheet now costs at least SHEET_COST cells.
    from rho_adapters.local.sheet_scan import SHEET_COST

    data = _sheets_naming_one_part(sheets=50, rows=0)
    found = await OpenpyxlReader(max_cells=10 * SHEET_COST).sheets(data)
    assert len(found) == 50
    assert [s.complete for s in found] == [True] * 10 + [False] * 40
