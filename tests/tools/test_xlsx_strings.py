"""The shared strings ``read_excel`` reads are the ones openpyxl's own reader reads.

``xlsx_strings.read_string_table`` replaces openpyxl's (which builds a ``Text`` object per
string): each table here is read by both and must come out the same, string for string, and
a real workbook whose shared strings hold each of them reads through the reader as through
openpyxl's own ``load_workbook``.
"""

from __future__ import annotations

import importlib.util
import io
import zipfile
from pathlib import Path

import pytest

from rho_adapters.local.spreadsheet import OpenpyxlReader

if importlib.util.find_spec("openpyxl") is None:  # found, not imported: 0.1 s per worker
    pytest.skip("openpyxl is not installed", allow_module_level=True)

MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
ITEMS = [
    "<si><t>plain</t></si>",
    '<si><t xml:space="preserve">  spaced  </t></si>',
    "<si><t></t></si>",
    "<si><t/></si>",
    "<si></si>",
    '<si><r><t>bold</t></r><r><rPr><b/></rPr><t xml:space="preserve"> and not</t></r></si>',
    "<si><r><rPr><i/></rPr><t>one run</t></r></si>",
    "<si><t>base</t><r><t>+run</t></r></si>",  # both: openpyxl puts the plain text first
    "<si><r><t>run first</t></r><t>plain after</t></si>",
    '<si><t>\u6f22\u5b57</t><rPh sb="0" eb="2"><t>\u304b\u3093\u3058</t></rPh>'
    '<phoneticPr fontId="1"/></si>',  # the phonetic reading is left out
    "<si><t>a_x005F_x000D_b</t></si>",  # openpyxl drops x005F_ (an escaped underscore)
    "<si><t>x005F_x005F_</t></si>",
    "<si><t>a &amp; b &lt;c&gt; &#233;</t></si>",
    "<si><t><![CDATA[<cdata>]]></t></si>",
    "<si><t>line\none</t></si>",
    "<si><t>first</t><t>second</t></si>",  # two plain texts: openpyxl keeps the last
    "<si><r><t>a</t><t>b</t></r></si>",
    "<si><unknown>skipped</unknown><t>kept</t></si>",
]


def table(items: list[str]) -> bytes:
    body = "".join(items)
    return (
        f'<?xml version="1.0" encoding="UTF-8"?><sst xmlns="{MAIN}" count="{len(items)}">'
        f"{body}</sst>"
    ).encode()


def openpyxl_reads(data: bytes) -> list[str]:
    from openpyxl.reader.strings import read_string_table

    return list(read_string_table(io.BytesIO(data)))


def ours(data: bytes) -> list[str]:
    from rho_adapters.local.xlsx_strings import read_string_table

    return read_string_table(io.BytesIO(data))


@pytest.mark.parametrize("item", ITEMS)
def test_each_kind_of_string_reads_as_openpyxl_reads_it(item: str) -> None:
    data = table(["<si><t>before</t></si>", item, "<si><t>after</t></si>"])
    assert ours(data) == openpyxl_reads(data)


def test_a_whole_table_and_a_prefixed_namespace_read_as_openpyxl_reads_them() -> None:
    data = table(ITEMS)
    assert ours(data) == openpyxl_reads(data)
    prefixed = (
        f'<x:sst xmlns:x="{MAIN}"><x:si><x:t>p</x:t></x:si>'
        "<x:si><x:r><x:t>r</x:t></x:r></x:si></x:sst>"
    ).encode()
    assert ours(prefixed) == openpyxl_reads(prefixed) == ["p", "r"]


def shared_workbook(path: Path, items: list[str]) -> None:
    """A real workbook (openpyxl's, which writes inline strings) whose sheet's first row
    names each of ``items`` by its index in a shared-strings part added to it."""
    import openpyxl

    book = openpyxl.Workbook()
    book.active.title = "Main"
    book.active.append(["x"])
    buffer = io.BytesIO()
    book.save(buffer)
    cells = "".join(f'<c r="{chr(65 + i)}1" t="s"><v>{i}</v></c>' for i in range(len(items)))
    sheet = f'<worksheet xmlns="{MAIN}"><sheetData><row r="1">{cells}</row></sheetData></worksheet>'
    shared = (
        '<Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.openxmlformats-'
        'officedocument.spreadsheetml.sharedStrings+xml"/></Types>'
    )
    source = zipfile.ZipFile(buffer)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            body = source.read(info.filename)
            if info.filename == "[Content_Types].xml":
                body = body.replace(b"</Types>", shared.encode())
            elif info.filename == "xl/worksheets/sheet1.xml":
                body = sheet.encode()
            target.writestr(info, body)
        target.writestr("xl/sharedStrings.xml", table(items))


async def test_a_workbook_s_shared_strings_read_as_openpyxl_reads_them(tmp_path: Path) -> None:
    import openpyxl

    shared_workbook(tmp_path / "shared.xlsx", ITEMS)
    expected = next(
        openpyxl.load_workbook(
            tmp_path / "shared.xlsx", read_only=True, data_only=True
        ).active.iter_rows(values_only=True)
    )
    assert len(expected) == len(ITEMS)
    assert "plain" in expected
    assert "bold and not" in expected
    data = (tmp_path / "shared.xlsx").read_bytes()
    rows = await OpenpyxlReader().rows(data, "Main", start=1, count=1, max_columns=50)
    assert rows == (tuple(expected),)
