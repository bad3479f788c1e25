"""Anchor item 16 (the reference's edit turned CRLF into LF), re-tried with the line endings
real files have: mixed CRLF and LF, a new_string that already has CRLF, an old_string with
CRLF in an LF file, no final newline, a byte order mark. The tools run on real files through
the LocalExecutor."""

from __future__ import annotations

import codecs
import json
from pathlib import Path
from typing import Any

import pytest

from rho_adapters.clock import SystemClock
from rho_adapters.local import LocalExecutor
from rho_domain.messages import ToolCall
from rho_domain.permissions import developer_profile
from rho_domain.tools.base import ToolContext, ToolOutput
from rho_domain.tools.factory import build_registry


async def _call(ws: Path, tool: str, **args: Any) -> ToolOutput:
    profile = developer_profile()
    executor = LocalExecutor(
        str(ws), file_write=profile.file_write, allow_shell=False, base_env={"PATH": "/usr/bin"}
    )
    ctx = ToolContext(
        session_id="s", call_id="c", executor=executor, profile=profile, clock=SystemClock()
    )
    call = ToolCall(id="c", name=tool, arguments=json.dumps(args))
    return await build_registry(profile).dispatch(call, ctx)


async def _edit(ws: Path, before: bytes, old: str, new: str, **kw: Any) -> bytes:
    (ws / "f.txt").write_bytes(before)
    out = await _call(ws, "edit", path="f.txt", old_string=old, new_string=new, **kw)
    assert not out.is_error, out.content
    return (ws / "f.txt").read_bytes()


@pytest.mark.parametrize(
    ("before", "old", "new", "after"),
    [
        # an LF file with one CRLF line (a pasted line): its LF lines are edited as they are
        (b"a\nb\r\nc\n", "a\nb", "A\nB", b"A\nB\r\nc\n"),
        # an edit across the two kinds of ending keeps each
        (b"a\r\nb\nc\r\n", "a\nb\nc", "1\n2\n3", b"1\r\n2\n3\r\n"),
        # a line added after a single-line match takes that line's ending, not the file's other
        (b"x\ny\r\nz\n", "x", "x\nw", b"x\nw\ny\r\nz\n"),
        (b"x\ny\r\nz\n", "y", "y\nw", b"x\ny\r\nw\r\nz\n"),
        # a new_string already in CRLF makes no \r\r\n in a CRLF file
        (b"a\r\nb\r\n", "a", "A\r\nA2", b"A\r\nA2\r\nb\r\n"),
        (b"a\r\nb\r\n", "a\r\nb", "A\r\nB", b"A\r\nB\r\n"),
        # an old_string in CRLF finds its text in an LF file, written back in LF
        (b"a\nb\n", "a\r\nb", "A\r\nB", b"A\nB\n"),
        # a CRLF file without a final newline
        (b"a\r\nb", "a\nb", "a\nb\nc", b"a\r\nb\r\nc"),
    ],
)
async def test_edit_keeps_each_lines_ending(
    tmp_path: Path, before: bytes, old: str, new: str, after: bytes
) -> None:
    assert await _edit(tmp_path, before, old, new) == after


async def test_replace_all_in_a_mixed_file_counts_and_keeps_endings(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_bytes(b"k\nv\r\nk\r\nv\nk\nx\n")
    out = await _call(tmp_path, "edit", path="f.txt", old_string="k\nv", new_string="K\nV")
    assert out.is_error
    assert "matches 2 times" in out.content
    assert "lines 1, 3" in out.content
    before = (tmp_path / "f.txt").read_bytes()
    after = await _edit(tmp_path, before, "k\nv", "K\nV", replace_all=True)
    assert after == b"K\nV\r\nK\r\nV\nk\nx\n"


async def test_a_byte_order_mark_is_not_shown_and_is_kept(tmp_path: Path) -> None:
    (tmp_path / "bom.txt").write_bytes(b"\xef\xbb\xbfhello\r\nworld\r\n")
    shown = await _call(tmp_path, "read", path="bom.txt")
    assert shown.content.splitlines()[0] == "     1\thello"  # what the model copies
    out = await _call(tmp_path, "edit", path="bom.txt", old_string="hello\nworld", new_string="hi")
    assert not out.is_error, out.content
    assert (tmp_path / "bom.txt").read_bytes() == b"\xef\xbb\xbfhi\r\n"


async def test_an_empty_file_read_past_its_start_shows_no_window(tmp_path: Path) -> None:
    """The count's class (the reference reported a wrong total): an empty file read from
    line 2 said "[lines 2-0 of 0; ...]"."""
    (tmp_path / "empty.txt").write_bytes(b"")
    shown = await _call(tmp_path, "read", path="empty.txt", offset=2)
    assert shown.content == "(empty file)"
    assert shown.metadata["total_lines"] == 0


async def test_a_utf16_file_is_read_as_text(tmp_path: Path) -> None:
    """A UTF-16 file (PowerShell's `>`, SQL Server's scripts) was refused as binary for its NUL
    bytes. With its byte order mark it is text, decoded a chunk at a time: the lines past the
    first chunk come out whole and counted."""
    (tmp_path / "ps.txt").write_bytes("café\r\nnaïve\r\n".encode("utf-16"))  # LE, with BOM
    shown = await _call(tmp_path, "read", path="ps.txt")
    assert shown.content == "     1\tcafé\n     2\tnaïve"
    (tmp_path / "be.txt").write_bytes(codecs.BOM_UTF16_BE + "x\ny\n".encode("utf-16-be"))
    assert (await _call(tmp_path, "read", path="be.txt")).content == "     1\tx\n     2\ty"
    lines = [f"línea {n} €" for n in range(1, 150_001)]  # ~4 MiB: several chunks
    (tmp_path / "big.txt").write_bytes("\n".join(lines).encode("utf-16"))
    deep = await _call(tmp_path, "read", path="big.txt", offset=149_999, limit=5)
    assert deep.content.splitlines()[:2] == ["149999\tlínea 149999 €", "150000\tlínea 150000 €"]
    assert deep.metadata["total_lines"] == 150_000
    assert "\ufffd" not in deep.content
