"""Issue 32, item 7: read_excel is bounded in bytes and work, not only in rows.

A 307 KB .xlsx grew the agent by 919 MiB: the size cap counted compressed bytes. Here each
kind of workbook that costs more unpacked than stored is built for real (a real openpyxl
workbook whose parts are replaced), passed through the real reader, and refused with the
file and the limit named; the memory the agent process gains is measured in a subprocess
(``ru_maxrss``). Legitimate workbooks and CSV files keep reading, off the event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import importlib.util
import io
import json
import os
import random
import select
import shutil
import signal
import string
import struct
import subprocess
import sys
import threading
import time
import zipfile
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import pytest
from resource_support import STALL, lag_of

from rho_adapters.clock import SystemClock
from rho_adapters.local import LocalExecutor
from rho_adapters.local.spreadsheet import OpenpyxlReader
from rho_domain.errors import ToolError
from rho_domain.messages import ToolCall
from rho_domain.permissions import readonly_profile
from rho_domain.tools.base import ToolContext, ToolOutput
from rho_domain.tools.factory import build_registry
from rho_domain.tools.offload import Stop, Stopped, in_thread

# openpyxl is imported where a workbook is built, not here: each xdist worker collects this
# module, and only the one that runs its tests needs openpyxl (0.1 s of CPU to import)
if importlib.util.find_spec("openpyxl") is None:
    pytest.skip("openpyxl is not installed", allow_module_level=True)
RO = readonly_profile()
SHEET = "xl/worksheets/sheet1.xml"
HEAD = (
    b'<?xml version="1.0"?><worksheet xmlns="http://schemas.openxmlformats.org/'
    b'spreadsheetml/2006/main"><sheetData>'
)
TAIL = b"</sheetData></worksheet>"
GROWTH_LIMIT_KIB = 50 * 1024  # the agent may grow by this much reading any of them


def workbook(
    replace: dict[str, Callable[[IO[bytes]], None]] | None = None,
    *,
    shared: bool = False,
    level: int = 6,
) -> bytes:
    """A real one-sheet workbook ("Main"), with the parts in ``replace`` written anew (or
    added); ``shared`` declares a shared-strings part, which openpyxl then loads. ``level``:
    deflate's (6, zlib's default: level 9 packs random text no smaller and takes three to
    four times as long; the zip bomb asks for 9, its ratio is in the refusal)."""
    import openpyxl

    book = openpyxl.Workbook()
    book.active.title = "Main"
    book.active.append(["a"])
    buffer = io.BytesIO()
    book.save(buffer)
    source = zipfile.ZipFile(io.BytesIO(buffer.getvalue()))
    out = io.BytesIO()
    replace = dict(replace or {})
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=level) as target:
        for info in source.infolist():
            writer = replace.pop(info.filename, None)
            if writer is None:
                body = source.read(info.filename)
                if shared and info.filename == "[Content_Types].xml":
                    body = body.replace(b"</Types>", SHARED_TYPE)
                target.writestr(info, body)
            else:
                with target.open(info.filename, "w", force_zip64=True) as part:
                    writer(part)
        for name, writer in replace.items():
            with target.open(name, "w", force_zip64=True) as part:
                writer(part)
    return out.getvalue()


def repetitive_sheet(part: IO[bytes]) -> None:
    """300 MB of one row of the same inline string: deflate packs it ~340 to 1."""
    part.write(HEAD + b'<row r="1">')
    chunk = b'<c t="inlineStr"><is><t>xxxxxxxxxxxxxxxx</t></is></c>' * 20_000
    for _ in range((300 << 20) // len(chunk)):
        part.write(chunk)
    part.write(b"</row>" + TAIL)


def wide_row(cells: int) -> Callable[[IO[bytes]], None]:
    """One row of ``cells`` random numbers: 400,000 are 9 MB of XML stored in 2 MB."""

    def write(part: IO[bytes]) -> None:
        rng = random.Random(7)
        part.write(HEAD + b'<row r="1">')
        for start in range(0, cells, 10_000):  # one write per 10,000 cells, not per cell
            batch = range(start, min(start + 10_000, cells))
            part.write(b"".join(b"<c><v>%d</v></c>" % rng.randrange(10**9) for _ in batch))
        part.write(b"</row>" + TAIL)

    return write


def long_cell(part: IO[bytes]) -> None:
    """One cell of 40,000 random letters (Excel stops at 32,767), padded past the scan
    threshold with ordinary rows."""
    rng = random.Random(3)
    text = "".join(rng.choices(string.ascii_letters, k=40_000)).encode()
    part.write(HEAD + b'<row r="1"><c t="inlineStr"><is><t>' + text + b"</t></is></c></row>")
    part.write(b'<row r="2"><c t="inlineStr"><is><t>' + b"p" * (80 << 10) + b"</t></is></c></row>")
    part.write(TAIL)


def shared_strings(megabytes: int) -> Callable[[IO[bytes]], None]:
    """A shared-strings part of ``megabytes`` of distinct six-letter strings."""

    def write(part: IO[bytes]) -> None:
        count = (megabytes << 20) // 21
        letters = random.Random(5).randbytes(count * 3).hex().encode()
        part.write(b'<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">')
        for start in range(0, len(letters), 6 * 10_000):
            chunk = letters[start : start + 6 * 10_000]
            part.write(
                b"".join(b"<si><t>%s</t></si>" % chunk[i : i + 6] for i in range(0, len(chunk), 6))
            )
        part.write(b"</sst>")

    return write


SHARED_TYPE = (
    b'<Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.'
    b'openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/></Types>'
)


def laughs(part: IO[bytes]) -> None:
    """A DTD whose entities multiply (billion laughs), padded past the scan threshold."""
    entities = "".join(f'<!ENTITY l{i} "{("&l" + str(i - 1) + ";") * 10}">' for i in range(1, 9))
    part.write(f'<?xml version="1.0"?><!DOCTYPE w [<!ENTITY l0 "ha">{entities}]>'.encode())
    part.write(HEAD + b'<row r="1"><c t="inlineStr"><is><t>&l8;</t></is></c></row>')
    part.write(b"<!-- " + b"p" * (100 << 10) + b" -->" + TAIL)


def lying_size(data: bytes, member: str, declared: int) -> bytes:
    """``data`` with ``member``'s uncompressed size in the central directory set to
    ``declared`` (the data stays): a reader that trusted the data would unpack it all."""
    raw = bytearray(data)
    at = raw.find(b"PK\x01\x02")
    while at >= 0:
        name_length = struct.unpack_from("<H", raw, at + 28)[0]
        if raw[at + 46 : at + 46 + name_length].decode() == member:
            if struct.unpack_from("<I", raw, at + 24)[0] != 0xFFFFFFFF:
                struct.pack_into("<I", raw, at + 24, declared)
            else:  # the ZIP64 extra field holds the size; the 32-bit field says "see it"
                struct.pack_into("<Q", raw, at + 46 + name_length + 4, declared)
            return bytes(raw)
        at = raw.find(b"PK\x01\x02", at + 4)
    raise AssertionError(f"{member} not in the directory")


def many_parts() -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for i in range(12_000):
            archive.writestr(f"xl/media/p{i}.bin", b"")
    return out.getvalue()


UNUSED_FOR = 7 * 24 * 3600  # a set of books no run has read for a week is removed


@pytest.fixture(scope="module")
def files(machine_cache: Path | None, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The workbooks, built once per machine and kept in the machine's test cache
    (``machine_cache``, shared by every checkout) under a name that is a digest of this
    module's source and the openpyxl and zlib that build them (any change to a builder
    builds them anew; building costs about 4 s of CPU, the 300 MB one alone a second or two
    to compress). The first worker to ask builds them while holding a lock, the others wait
    and reuse them. Another source's books are removed only once unused for a week: another
    checkout's run may be reading them. Without the machine cache: this run's."""
    import openpyxl

    if machine_cache is None:
        return _build_books(tmp_path_factory.mktemp("books"))
    digest = hashlib.sha256(Path(__file__).read_bytes())
    digest.update(f"{openpyxl.__version__} {zlib.ZLIB_RUNTIME_VERSION}".encode())
    shared = machine_cache / "spreadsheet-books"
    shared.mkdir(parents=True, exist_ok=True)
    root = shared / digest.hexdigest()[:16]
    with (shared / "lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (root / "done").exists():
            (root / "done").touch()  # read now: kept another week
            return root
        for old in shared.iterdir():  # under the lock, a set without "done" died building
            done = old / "done"
            if old.is_dir() and (
                not done.exists() or time.time() - done.stat().st_mtime > UNUSED_FOR
            ):
                shutil.rmtree(old)
        root.mkdir()
        _build_books(root)
        (root / "done").touch()
    return root


def _build_books(root: Path) -> Path:
    repetitive = workbook({SHEET: repetitive_sheet}, level=9)
    (root / "bomb.xlsx").write_bytes(repetitive)
    (root / "wide.xlsx").write_bytes(workbook({SHEET: wide_row(400_000)}))
    (root / "laughs.xlsx").write_bytes(workbook({SHEET: laughs}))
    (root / "lying.xlsx").write_bytes(lying_size(repetitive, SHEET, 100_000))
    (root / "parts.xlsx").write_bytes(many_parts())
    (root / "cell.xlsx").write_bytes(workbook({SHEET: long_cell}))
    (root / "elsewhere.xlsx").write_bytes(workbook({"xl/custom/data.xml": wide_row(100_000)}))
    (root / "strings.xlsx").write_bytes(
        workbook({"xl/sharedStrings.xml": shared_strings(17)}, shared=True)
    )
    (root / "strings_ok.xlsx").write_bytes(
        workbook({"xl/sharedStrings.xml": shared_strings(8)}, shared=True)
    )
    big_sheet(root / "big.xlsx", 1200)  # openpyxl writing 24,000 cells: 0.6 s of CPU
    big_sheet(root / "bare.xlsx", 300, dimension=False)
    return root


# A process that imports the reader once, then reads each workbook whose path it is given (a
# line on stdin) in a fork of itself, and answers one JSON line: a fork's ru_maxrss starts at
# its own size, not its parent's peak, so each read's growth is measured alone, as in a new
# process, without paying the interpreter and openpyxl's imports per workbook.
READER = """
import asyncio, json, os, resource, sys
import openpyxl
from rho_adapters.local.spreadsheet import OpenpyxlReader

def read(path):
    data = open(path, "rb").read()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    error = None
    try:
        asyncio.run(OpenpyxlReader().rows(data, "Main", start=1, count=5, max_columns=50))
    except Exception as exc:
        error = f"{type(exc).__name__}: {exc}"
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"error": error, "growth_kib": after - before, "size": len(data)}

for line in iter(sys.stdin.readline, ""):
    answer, to_parent = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(answer)
        os.write(to_parent, json.dumps(read(line.rstrip("\\n"))).encode())
        os._exit(0)
    os.close(to_parent)
    with os.fdopen(answer, "rb") as pipe:
        result = pipe.read()
    _, status = os.waitpid(pid, 0)
    print(result.decode() or json.dumps({"died": status}), flush=True)
"""


class Reader:
    """``READER``'s process, started at the first read and again after one it had to end."""

    def __init__(self) -> None:
        self.process: subprocess.Popen[str] | None = None

    def read(self, path: Path) -> dict[str, Any]:
        """The read of ``path`` in a process of its own (a fork of the reader): the refusal,
        if any, the process's growth in KiB, the file's size. A read that takes over 120 s
        ends the reader and its fork (the next read starts a new one) and fails."""
        if self.process is None:
            env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
            self.process = subprocess.Popen(
                [sys.executable, "-c", READER],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                env=env,
                start_new_session=True,  # one group with its forks, ended together
            )
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        self.process.stdin.write(f"{path}\n")
        self.process.stdin.flush()
        ready, _, _ = select.select([self.process.stdout], [], [], 120)
        if not ready:
            self.end()
            raise AssertionError(f"no answer for {path} within 120 s")
        result: dict[str, Any] = json.loads(self.process.stdout.readline())
        assert "died" not in result, f"the read of {path} died (wait status {result['died']})"
        return result

    def end(self) -> None:
        if self.process is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
            self.process = None

    def close(self) -> None:
        if self.process is not None and self.process.stdin is not None:
            self.process.stdin.close()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.end()


@pytest.fixture(scope="module")
def reader_process() -> Iterator[Reader]:
    reader = Reader()
    yield reader
    reader.close()


@pytest.mark.parametrize(
    ("name", "refusal"),
    [
        (
            "bomb.xlsx",
            "ToolError: xl/worksheets/sheet1.xml unpacks 343 times larger than it is stored (913,",
        ),
        (
            "wide.xlsx",
            "ToolError: xl/worksheets/sheet1.xml has a row of more than 16,384 cells "
            "(Excel's limit); not read",
        ),
        (
            "laughs.xlsx",
            "ToolError: xl/worksheets/sheet1.xml declares a DTD, which no workbook needs",
        ),
        ("lying.xlsx", "ToolError: not a readable .xlsx workbook (BadZipFile: Bad CRC-32"),
        ("parts.xlsx", "ToolError: 12,000 parts in its zip (limit 10,000); not read"),
        (
            "cell.xlsx",
            "ToolError: xl/worksheets/sheet1.xml has a text of more than 32,767 characters "
            "(Excel's limit); not read",
        ),
        (
            "elsewhere.xlsx",  # any part is scanned, whatever its name
            "ToolError: xl/custom/data.xml has a row of more than 16,384 cells",
        ),
        (
            "strings.xlsx",
            "ToolError: xl/sharedStrings.xml unpacks to 18,674,711 bytes (limit 16,777,216)",
        ),
    ],
)
def test_a_costly_workbook_is_refused_and_the_agent_stays_small(
    files: Path, reader_process: Reader, name: str, refusal: str
) -> None:
    result = reader_process.read(files / name)
    assert result["size"] < 5 << 20  # each is small on disk
    assert result["error"].startswith(refusal), result["error"]
    assert result["growth_kib"] < GROWTH_LIMIT_KIB


def test_allowed_shared_strings_cost_a_measured_bound(files: Path, reader_process: Reader) -> None:
    """8 MB of distinct short strings: read, at about 7.6 times their size (16 MB, the
    limit, measured 122 MiB)."""
    result = reader_process.read(files / "strings_ok.xlsx")
    assert result["error"] is None
    assert result["growth_kib"] < 80 * 1024


async def call(ws: Path, reader: OpenpyxlReader | None = None, **args: Any) -> ToolOutput:
    registry = build_registry(RO, spreadsheet_reader=reader or OpenpyxlReader())
    ctx = ToolContext(
        session_id="s",
        call_id="c",
        executor=LocalExecutor(str(ws)),
        profile=RO,
        clock=SystemClock(),
    )
    call = ToolCall(id="c", name="read_excel", arguments=json.dumps(args))
    return await registry.dispatch(call, ctx)


async def test_the_refusal_names_the_file_and_the_limit(files: Path) -> None:
    out = await call(files, path="bomb.xlsx", action="list_sheets")
    assert out.is_error
    assert out.content.startswith(
        "Tool 'read_excel': bomb.xlsx: xl/worksheets/sheet1.xml unpacks 343 times larger"
    )
    assert "limit 250 times): a zip bomb, not read" in out.content


def big_sheet(path: Path, rows: int, *, dimension: bool = True) -> None:
    import openpyxl

    book = openpyxl.Workbook()
    book.active.title = "Main"
    for r in range(1, rows + 1):
        book.active.append([f"r{r}c{c}" for c in range(1, 21)])
    book.save(path)
    if not dimension:  # as many writers leave it out
        data = path.read_bytes()
        source = zipfile.ZipFile(io.BytesIO(data))
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
            for info in source.infolist():
                part = source.read(info.filename)
                if info.filename == SHEET:
                    dimension_record = f'<dimension ref="A1:T{rows}" />'.encode()
                    assert dimension_record in part
                    part = part.replace(dimension_record, b"")
                target.writestr(info, part)
        path.write_bytes(out.getvalue())


async def test_a_big_legitimate_workbook_still_reads(files: Path) -> None:
    assert (files / "big.xlsx").stat().st_size > 64 << 10  # the row scan runs
    reader = OpenpyxlReader()  # one, as an agent's read_excel holds: the sheets scanned once
    out = await call(files, reader, path="big.xlsx", action="list_sheets")
    assert out.content == "1. Main (1200 rows x 20 columns)"
    out = await call(files, reader, path="big.xlsx", start_row=1199, max_rows=5)
    lines = out.content.splitlines()
    assert lines[0] == "big.xlsx [Main]: 1200 rows x 20 columns"
    assert lines[1].startswith("1199\tr1199c1\tr1199c2")
    assert lines[-1] == "[rows 1199-1200 of 1200]"


async def test_the_cell_budget_bounds_the_work_and_says_so(files: Path) -> None:
    reader = OpenpyxlReader(max_cells=2_000)
    out = await call(files, reader, path="bare.xlsx", action="list_sheets")
    assert out.content == "1. Main (at least 100 rows x 20 columns)"
    # Each row costs the cells it holds (20), not a width padded to the column cap.
    out = await call(files, reader, path="bare.xlsx", start_row=30, max_rows=5)
    assert out.content.splitlines()[0] == "bare.xlsx [Main]: at least 100 rows x 20 columns"
    assert out.content.splitlines()[-1] == "[rows 30-34 of at least 100]"
    out = await call(files, reader, path="bare.xlsx", start_row=250, max_rows=10)
    assert out.is_error
    assert out.content == (
        "Tool 'read_excel': sheet 'Main': stopped at row 101 after parsing 2,000 cells (the "
        "limit of one call); ask for fewer or earlier rows, or export the sheet as .csv"
    )


async def test_a_cancelled_thread_stops_at_its_next_step() -> None:
    steps: list[int] = []
    ended = threading.Event()

    def work(stop: Stop) -> None:
        try:
            while True:
                stop.check()
                steps.append(1)
                time.sleep(0.001)
        finally:
            ended.set()

    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.1):
            await in_thread(work)
    assert await asyncio.to_thread(ended.wait, 30.0)  # at once; 30 s is a hang
    count = len(steps)
    await asyncio.sleep(0.05)
    assert len(steps) == count  # it really stopped
    stopped = Stop()
    stopped.set()
    with pytest.raises(Stopped):
        stopped.check()


async def test_a_big_csv_is_parsed_off_the_loop(tmp_path: Path) -> None:
    rows = "".join(f"{i},name {i},é{i}\n" for i in range(600_000))
    (tmp_path / "big.csv").write_text("id,name,x\n" + rows)
    out, stall, _ = await lag_of(call(tmp_path, path="big.csv", start_row=500_000, max_rows=2))
    assert out.content.splitlines()[1] == "500000\t499998\tname 499998\té499998"
    assert "of 600001]" in out.content
    assert stall < STALL


async def test_an_unreadable_workbook_is_still_a_plain_error() -> None:
    with pytest.raises(ToolError, match=r"not a readable \.xlsx workbook"):
        await OpenpyxlReader().sheets(b"PK\x05\x06" + b"\0" * 18)
