"""Tool handlers end to end: registry dispatch, LocalExecutor, real files and processes."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from rho_adapters.clock import SystemClock
from rho_adapters.local import LocalExecutor
from rho_adapters.local.line_search import ProcessLineSearcher
from rho_adapters.local.spreadsheet import OpenpyxlReader
from rho_domain.messages import ToolCall
from rho_domain.permissions import (
    FileWriteMode,
    PermissionProfile,
    ShellMode,
    developer_profile,
    readonly_profile,
)
from rho_domain.tools.base import ToolContext, ToolOutput
from rho_domain.tools.bash import BashHandler
from rho_domain.tools.factory import build_registry


class NoRipgrep(LocalExecutor):
    async def which(self, program: str) -> str | None:
        return None if program == "rg" else await super().which(program)


async def call(
    ws: Path, tool: str, profile: PermissionProfile | None = None, executor: Any = None, **args: Any
) -> ToolOutput:
    profile = profile or developer_profile()
    registry = build_registry(
        profile, spreadsheet_reader=OpenpyxlReader(), line_searcher=ProcessLineSearcher()
    )
    executor = executor or LocalExecutor(
        str(ws),
        file_write=profile.file_write,
        allow_shell=profile.shell is ShellMode.UNRESTRICTED,
        base_env={"PATH": "/usr/bin:/bin"},
    )
    ctx = ToolContext(
        session_id="s", call_id="c", executor=executor, profile=profile, clock=SystemClock()
    )
    return await registry.dispatch(ToolCall(id="c", name=tool, arguments=json.dumps(args)), ctx)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("def main():\n    return 'foo'\n# foo again\n")
    (tmp_path / "src" / "util.py").write_text("import os\nFOO = 1\n")
    (tmp_path / "README.md").write_text("Title\nfoo bar\n")
    (tmp_path / ".env").write_text("SECRET_FOO=1\n")
    (tmp_path / "data.csv").write_text("name,qty\napple,3\npear,5\n")
    return tmp_path


RO = readonly_profile()


def test_the_restricted_description_names_only_allowed_programs() -> None:
    """What the model is told it may run, it may run."""
    from rho_domain.shell import PROGRAMS

    described = BashHandler(restricted=True, timeout=20).description
    listed = described.split("such as ", 1)[1].split(";", 1)[0]
    names = [word.split()[0].split("/")[0] for word in listed.split(", ")]
    assert "zcat" in names
    assert [name for name in names if name not in PROGRAMS] == []


async def test_tools_bash_restricted_runs_pipeline(ws: Path) -> None:
    out = await call(ws, "bash", RO, command="grep -rn foo src | wc -l")
    assert out.content.startswith("2\n")
    assert "[exit code 0" in out.content


async def test_tools_bash_restricted_refusal_names_reason(ws: Path) -> None:
    out = await call(ws, "bash", RO, command="ls; rm -rf src")
    assert out.is_error
    assert "'rm' is not an allowed read-only program" in out.content
    assert (ws / "src").exists()


async def test_tools_bash_restricted_lists_cd_and_subshells(ws: Path) -> None:
    out = await call(
        ws, "bash", RO, command="ls nope 2>/dev/null || echo fallback && (cd src && pwd) && pwd"
    )
    lines = out.content.splitlines()
    assert lines[0] == "fallback"
    assert lines[1] == str(ws / "src")
    assert lines[2] == str(ws)


async def test_tools_bash_restricted_cd_outside_fails(ws: Path) -> None:
    out = await call(ws, "bash", RO, command="cd .. && ls")
    assert out.is_error
    assert "cd: .." in out.content


async def test_tools_bash_timeout_is_stated(ws: Path) -> None:
    out = await call(ws, "bash", developer_profile(), command="sleep 30", timeout=1)
    assert out.is_error
    assert "timed out after 1 s" in out.content


async def test_tools_bash_unrestricted_reports_exit_code(ws: Path) -> None:
    out = await call(ws, "bash", developer_profile(), command="echo hi; exit 3")
    assert out.content.startswith("hi\n")
    assert "[exit code 3" in out.content


async def test_tools_read_numbers_lines_and_counts_total(ws: Path) -> None:
    (ws / "big.txt").write_text("".join(f"line {i}\n" for i in range(1, 5001)))
    out = await call(ws, "read", RO, path="big.txt", offset=10, limit=3)
    assert out.content.splitlines()[0] == "    10\tline 10"
    assert "lines 10-12 of 5000" in out.content


async def test_tools_read_cuts_long_lines_and_keeps_crlf_text(ws: Path) -> None:
    (ws / "long.txt").write_bytes(b"a" * 5000 + b"\r\nshort\r\n")
    out = await call(ws, "read", RO, path="long.txt")
    assert "[...]" in out.content
    assert "1 line(s) cut" in out.content
    assert "     2\tshort" in out.content


async def test_tools_read_refuses_binary_fifo_and_secrets(ws: Path) -> None:
    (ws / "bin.dat").write_bytes(b"\x00\x01\x02abc")
    os.mkfifo(ws / "pipe")
    assert "binary" in (await call(ws, "read", RO, path="bin.dat")).content
    assert "FIFO" in (await call(ws, "read", RO, path="pipe")).content
    assert "secrets" in (await call(ws, "read", RO, path=".env")).content


async def test_tools_grep_refuses_a_fifo_at_once_and_skips_one_in_a_directory(ws: Path) -> None:
    # Before, grep given a FIFO (or a link to one) waited for its 120 s timeout: nothing
    # writes to it, and rg and the fallback both open it.
    os.mkfifo(ws / "src" / "pipe")
    (ws / "src" / "link").symlink_to("pipe")
    for path in ("src/pipe", "src/link"):
        out = await call(ws, "grep", RO, pattern="FOO", path=path)
        assert "is not a regular file or a directory (a FIFO, socket or device)" in out.content
    assert "src/util.py:2:FOO = 1" in (await call(ws, "grep", RO, pattern="FOO")).content


async def test_tools_read_replaces_undecodable_bytes(ws: Path) -> None:
    (ws / "latin.txt").write_bytes(b"caf\xe9\n")
    assert "caf\ufffd" in (await call(ws, "read", RO, path="latin.txt")).content


async def test_tools_grep_pattern_cannot_become_an_option(ws: Path) -> None:
    out = await call(ws, "grep", RO, pattern="--pre=/bin/rm")
    assert out.content == "No matches."
    assert (ws / "src" / "app.py").exists()


@pytest.mark.parametrize("fallback", [False, True])
async def test_tools_grep_rg_and_fallback_agree(ws: Path, fallback: bool) -> None:
    executor = NoRipgrep(str(ws)) if fallback else None
    out = await call(ws, "grep", RO, executor=executor, pattern="foo", path="src")
    assert out.content == ("src/app.py:2:    return 'foo'\nsrc/app.py:3:# foo again\n[2 matches]")
    out = await call(
        ws,
        "grep",
        RO,
        executor=executor,
        pattern="FOO",
        ignore_case=True,
        glob="*.py",
        max_results=2,
    )
    assert out.content.count("\n") == 2
    assert "showing the first 2 matches" in out.content
    out = await call(ws, "grep", RO, executor=executor, pattern="SECRET")
    assert out.content == "No matches."
    out = await call(ws, "grep", RO, executor=executor, pattern="return", path="src", context=1)
    assert out.content.splitlines()[:3] == [
        "src/app.py-1-def main():",
        "src/app.py:2:    return 'foo'",
        "src/app.py-3-# foo again",
    ]


@pytest.mark.parametrize("fallback", [False, True])
async def test_tools_grep_says_a_binary_file_it_was_given_matches(ws: Path, fallback: bool) -> None:
    """Before: grep given a binary file (NUL bytes) that holds the pattern answered "No
    matches.": rg's "binary file matches" line was dropped, the fallback skipped the file.
    In a directory a binary file is still skipped, as rg does (not read through)."""
    executor = NoRipgrep(str(ws)) if fallback else None
    (ws / "src" / "blob.bin").write_bytes(b"\x00\x01FOO\xff\n")
    out = await call(ws, "grep", RO, executor=executor, pattern="FOO", path="src/blob.bin")
    assert out.content == (
        "Binary file src/blob.bin matches (it holds NUL bytes, so its lines are not shown: "
        "bash `grep -a`, `strings` or `xxd`)\n[no text lines to show]"
    )
    out = await call(ws, "grep", RO, executor=executor, pattern="BAR", path="src/blob.bin")
    assert out.content == "No matches."
    out = await call(ws, "grep", RO, executor=executor, pattern="FOO", path="src")
    assert "blob.bin" not in out.content


@pytest.mark.parametrize("fallback", [False, True])
async def test_tools_show_a_name_with_a_line_break_or_an_escape_on_one_line(
    ws: Path, fallback: bool
) -> None:
    """A file named "x\\nREADME.md" was listed by glob and list as two lines, one naming
    README.md; grep (ripgrep) reported its match as one in "README.md:1:"; an escape
    sequence in a name reached the terminal of whoever reads the trace; and grep without
    ripgrep failed whole on such a file ("control characters in a path are not allowed").
    Each control character is now shown as its \\xNN escape, and grep's fallback notes
    the file it cannot read and searches the rest."""
    executor = NoRipgrep(str(ws)) if fallback else None
    (ws / "d").mkdir()
    (ws / "d" / "x\nREADME.md").write_text("planted foo\n")
    (ws / "d" / "e\x1b[31m.txt").write_text("foo\n")
    (ws / "d" / "plain.txt").write_text("foo\n")
    out = await call(ws, "glob", RO, executor=executor, pattern="d/*")
    assert out.content == "d/e\\x1b[31m.txt\nd/plain.txt\nd/x\\x0aREADME.md\n[3 files]"
    out = await call(ws, "list", RO, executor=executor, path="d")
    assert [line.split()[-1] for line in out.content.splitlines()] == [
        "e\\x1b[31m.txt",
        "plain.txt",
        "x\\x0aREADME.md",
    ]
    out = await call(ws, "grep", RO, executor=executor, pattern="foo", path="d")
    lines = out.content.splitlines()
    if fallback:
        assert lines[0] == "d/plain.txt:1:foo"
        assert "d/x\\x0aREADME.md: not searched (control characters" in lines[1]
    else:
        assert sorted(lines[:-1]) == [
            "d/e\\x1b[31m.txt:1:foo",
            "d/plain.txt:1:foo",
            "d/x\\x0aREADME.md:1:planted foo",
        ]


@pytest.mark.parametrize("fallback", [False, True])
async def test_tools_show_a_name_not_utf8_as_list_does(ws: Path, fallback: bool) -> None:
    """A name holding a byte that is not UTF-8 was 'caf\\xe9.txt' in list and in glob
    without ripgrep, but 'caf\ufffd.txt' in glob and grep with it (rg's output decoded with
    U+FFFD, the byte lost). Now one way for all: the byte as \\xNN; a line's text is still
    shown as read shows it (U+FFFD)."""
    executor = NoRipgrep(str(ws)) if fallback else None
    (ws / "d").mkdir()
    Path(os.fsdecode(os.fsencode(ws / "d") + b"/caf\xe9.txt")).write_bytes(b"caf\xe9 foo\n")
    out = await call(ws, "glob", RO, executor=executor, pattern="d/*")
    assert out.content == "d/caf\\xe9.txt\n[1 file]"
    out = await call(ws, "list", RO, executor=executor, path="d")
    assert out.content.split()[-1] == "caf\\xe9.txt"
    if not fallback:  # without ripgrep the file tools cannot open such a name (noted)
        out = await call(ws, "grep", RO, executor=executor, pattern="foo", path="d")
        assert out.content == "d/caf\\xe9.txt:1:caf\ufffd foo\n[1 match]"


async def test_tools_grep_outside_workspace_is_refused(ws: Path) -> None:
    out = await call(ws, "grep", RO, pattern="root", path="/etc")
    assert out.is_error
    assert "outside the workspace" in out.content


@pytest.mark.parametrize("fallback", [False, True])
async def test_tools_glob_sorted_and_capped(ws: Path, fallback: bool) -> None:
    executor = NoRipgrep(str(ws)) if fallback else None
    out = await call(ws, "glob", RO, executor=executor, pattern="**/*.py")
    assert out.content == "src/app.py\nsrc/util.py\n[2 files]"
    out = await call(ws, "glob", RO, executor=executor, pattern="*.py", max_results=1)
    assert out.content == "src/app.py\n[showing 1 of 2 files; narrow the pattern]"


async def test_tools_list_types_sizes_hidden(ws: Path) -> None:
    out = await call(ws, "list", RO)
    assert out.content.splitlines()[0].startswith("dir")
    assert out.content.splitlines() == [
        "dir           -  src/",
        "file        24B  data.csv",
        "file        14B  README.md",
    ]
    hidden = (await call(ws, "list", RO, show_hidden=True)).content.splitlines()
    assert "file        13B  .env" in hidden
    assert len(hidden) == 4


async def test_tools_write_full_and_create_only(ws: Path) -> None:
    out = await call(ws, "write", path="new/file.txt", content="a\nb\n")
    assert out.content == "Created new/file.txt (4 bytes, 2 lines)"
    out = await call(ws, "write", path="new/file.txt", content="c\n")
    assert out.content.startswith("Overwrote")
    create_only = PermissionProfile(name="c", file_write=FileWriteMode.CREATE_ONLY)
    out = await call(ws, "write", create_only, path="new/file.txt", content="d\n")
    assert out.is_error
    assert (ws / "new" / "file.txt").read_text() == "c\n"


async def test_tools_edit_preserves_crlf_and_shows_diff(ws: Path) -> None:
    (ws / "win.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    out = await call(ws, "edit", path="win.txt", old_string="two\nthree", new_string="2\n3")
    assert (ws / "win.txt").read_bytes() == b"one\r\n2\r\n3\r\n"
    assert "-two" in out.content
    assert "+2" in out.content


async def test_tools_edit_ambiguous_and_missing_say_where(ws: Path) -> None:
    out = await call(ws, "edit", path="src/app.py", old_string="foo", new_string="bar")
    assert out.is_error
    assert "matches 2 times" in out.content
    assert "lines 2, 3" in out.content
    out = await call(ws, "edit", path="src/app.py", old_string="def mian", new_string="x")
    assert "not found" in out.content
    out = await call(
        ws, "edit", path="src/app.py", old_string="foo", new_string="bar", replace_all=True
    )
    assert "2 replacement(s)" in out.content


async def test_tools_edit_keeps_latin1_bytes(ws: Path) -> None:
    (ws / "l1.txt").write_bytes(b"caf\xe9 old\n")
    await call(ws, "edit", path="l1.txt", old_string="old", new_string="new")
    assert (ws / "l1.txt").read_bytes() == b"caf\xe9 new\n"


async def test_tools_read_excel_csv_tsv(ws: Path) -> None:
    out = await call(ws, "read_excel", RO, path="data.csv")
    assert out.content.splitlines()[1:3] == ["1\tname\tqty", "2\tapple\t3"]
    (ws / "d.tsv").write_text("a\tb\n1\t2\n")
    out = await call(ws, "read_excel", RO, path="d.tsv", start_row=2)
    assert "2\t1\t2" in out.content


async def test_tools_read_excel_xlsx_values_not_formulas(ws: Path) -> None:
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Main"
    sheet.append(["a", "b", "sum"])
    sheet.append([1, 2, "=A2+B2"])
    book.create_sheet("Other")
    book.save(ws / "book.xlsx")
    out = await call(ws, "read_excel", RO, path="book.xlsx", action="list_sheets")
    assert out.content.splitlines() == [
        "1. Main (2 rows x 3 columns)",
        "2. Other (0 rows x 0 columns)",  # empty: its used extent, not openpyxl's A1:A1
    ]
    out = await call(ws, "read_excel", RO, path="book.xlsx", sheet="Main")
    # openpyxl writes no cached value: the formula is said to be one, never left blank
    assert "2\t1\t2\tformula: =A2+B2" in out.content
    out = await call(ws, "read_excel", RO, path="book.xlsx", sheet="Nope")
    assert "no sheet 'Nope'" in out.content


async def test_tools_read_excel_width_is_the_used_columns_not_the_cap(ws: Path) -> None:
    """A sheet without a dimension record (many writers omit it) is read by openpyxl as
    MAX_COLUMNS wide; the tool reports and shows only the columns in use."""
    import zipfile

    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Main"
    for row in (["name", "qty"], ["apple", 3], ["pear", None]):
        sheet.append(row)
    book.save(ws / "full.xlsx")
    with zipfile.ZipFile(ws / "full.xlsx") as src, zipfile.ZipFile(ws / "bare.xlsx", "w") as dst:
        for item in src.infolist():
            data = src.read(item.filename)
            if item.filename.startswith("xl/worksheets/"):
                start = data.index(b"<dimension")
                data = data[:start] + data[data.index(b"/>", start) + 2 :]
            dst.writestr(item, data)
    out = await call(ws, "read_excel", RO, path="bare.xlsx", sheet="Main")
    lines = out.content.splitlines()
    assert lines[0].endswith(": 3 rows x 2 columns")
    assert lines[1:4] == ["1\tname\tqty", "2\tapple\t3", "3\tpear\t"]


async def test_tools_read_excel_xls_and_broken(ws: Path) -> None:
    (ws / "old.xls").write_bytes(b"\xd0\xcf\x11\xe0")
    (ws / "bad.xlsx").write_bytes(b"not a zip")
    assert (
        ".xls (Excel 97-2003) is not supported"
        in (await call(ws, "read_excel", RO, path="old.xls")).content
    )
    assert "not a readable .xlsx" in (await call(ws, "read_excel", RO, path="bad.xlsx")).content


def test_tools_factory_registers_per_profile() -> None:
    assert build_registry(readonly_profile()).names == (
        "bash",
        "glob",
        "grep",
        "list",
        "read",
        "read_excel",
    )
    assert build_registry(developer_profile()).names == (
        "bash",
        "edit",
        "glob",
        "grep",
        "list",
        "read",
        "read_excel",
        "write",
    )
    bash_only = PermissionProfile(name="b", shell=ShellMode.UNRESTRICTED, bash_only=True)
    assert build_registry(bash_only).names == ("bash",)
    create_only = PermissionProfile(name="c", file_write=FileWriteMode.CREATE_ONLY)
    assert "edit" not in build_registry(create_only).names
    assert "write" in build_registry(create_only).names
    denied = PermissionProfile(name="d", denied_tools=frozenset({"grep", "bash"}))
    assert build_registry(denied).names == ("glob", "list", "read", "read_excel")
