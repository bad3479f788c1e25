"""A workbook part of any size that declares a DTD is refused before openpyxl parses it: the
guard scanned only parts past 64 KiB, so a 1 KB sheet's entities (a billion laughs) reached
expat, which stopped them only after some 90 MiB and answered 'failed unexpectedly'."""

from __future__ import annotations

import asyncio
import io
import json
import zipfile
from pathlib import Path

import pytest

from rho_adapters.clock import SystemClock
from rho_adapters.local import LocalExecutor
from rho_adapters.local.spreadsheet import OpenpyxlReader
from rho_domain.messages import ToolCall
from rho_domain.permissions import readonly_profile
from rho_domain.tools.base import ToolContext, ToolOutput
from rho_domain.tools.factory import build_registry

LAUGHS = '<!DOCTYPE worksheet [<!ENTITY a "aaaaaaaaaa">' + "".join(
    f'<!ENTITY {chr(98 + i)} "' + f"&{chr(97 + i)};" * 10 + '">' for i in range(8)
) + "]>"  # fmt: skip
EXTERNAL = '<!DOCTYPE worksheet [<!ENTITY i SYSTEM "file:///etc/hostname">]>'


def _workbook(path: Path, doctype: str) -> None:
    from openpyxl import Workbook  # here: at import it cost every worker's collection 0.15 s

    book = Workbook()
    book.active["A1"] = "hello"
    plain = io.BytesIO()
    book.save(plain)
    source = zipfile.ZipFile(io.BytesIO(plain.getvalue()))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as out:
        for name in source.namelist():
            data = source.read(name)
            if name == "xl/worksheets/sheet1.xml":
                text = data.decode()
                at = text.index("<worksheet")
                data = (text[:at] + doctype + text[at:]).replace("hello", "&i;").encode()
                assert len(data) < 64 << 10  # below the size the guard scanned from
            out.writestr(name, data)


async def _read(ws: Path) -> ToolOutput:
    profile = readonly_profile()
    registry = build_registry(profile, spreadsheet_reader=OpenpyxlReader())
    executor = LocalExecutor(
        str(ws), file_write=profile.file_write, allow_shell=False, base_env={"PATH": "/usr/bin"}
    )
    ctx = ToolContext(
        session_id="s", call_id="c", executor=executor, profile=profile, clock=SystemClock()
    )
    call = ToolCall(id="c", name="read_excel", arguments=json.dumps({"path": "book.xlsx"}))
    return await registry.dispatch(call, ctx)


@pytest.mark.parametrize("doctype", [LAUGHS, EXTERNAL], ids=["laughs", "external"])
def test_a_small_part_declaring_a_dtd_is_refused(tmp_path: Path, doctype: str) -> None:
    _workbook(tmp_path / "book.xlsx", doctype)
    out = asyncio.run(_read(tmp_path))
    assert out.is_error
    assert "xl/worksheets/sheet1.xml declares a DTD, which no workbook needs; not read" in (
        out.content
    )
