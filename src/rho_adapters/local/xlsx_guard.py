"""check_workbook: refuse a zip bomb before openpyxl opens it, from the zip itself.

A 307 KB .xlsx grew the agent by 919 MiB: the tool's size cap counted compressed bytes,
and deflate packs repetitive XML a thousand to one. What a workbook costs is its
uncompressed parts, which the zip's central directory declares, and Python's ``zipfile``
never returns more than the declared size of a member (a member that holds more fails its
CRC check). So the declared sizes are a bound that holds, and they are checked first:

* the number of members, read from the end-of-directory record before ``zipfile`` builds an
  object per member (``MAX_MEMBERS``);
* each member's size: worksheets (streamed by openpyxl, ``MAX_SHEET_PART``), the shared
  strings (kept in memory: 16 MB of short strings cost the agent 122 MiB, measured;
  ``MAX_SHARED_STRINGS``), any other part (``MAX_PART``), and the total (``MAX_TOTAL``);
* each large member's compression ratio (``MAX_RATIO``): XML a spreadsheet program writes
  compresses 5 to 50 times, a bomb about a thousand.

Then every member larger than ``SCAN_FROM`` (whatever its name: the workbook's relations may
put a sheet anywhere) is read once by expat, as a stream, without a tree: openpyxl holds a
whole row in memory before it yields it (some 400 bytes a cell, for 4 bytes of ``<c/>``), so
a row may have at most Excel's own 16,384 cells and 16 MB of text, a cell or a shared string
Excel's 32,767 characters, and no part may declare a DTD (entity expansion); a smaller
member is read up to its root element for a DTD (``_prolog``), so no part of any size does.
"""

from __future__ import annotations

import io
import struct
import zipfile
import zlib
from xml.parsers import expat

from rho_domain.errors import ToolError
from rho_domain.tools.offload import Stop

MAX_MEMBERS = 10_000
MAX_SHEET_PART = 512 << 20
MAX_SHARED_STRINGS = 16 << 20
MAX_PART = 8 << 20
MAX_TOTAL = 1 << 30
MAX_RATIO = 250
RATIO_FROM = 1 << 20  # members smaller than this are not judged by their ratio
MAX_ROW_CELLS = 16_384  # Excel's last column, XFD
MAX_CELL_CHARS = 32_767  # Excel's longest cell text
MAX_ROW_CHARS = 16 << 20
SCAN_FROM = 64 << 10  # a part smaller than this cannot break the row limits
_SHARED_STRINGS = "xl/sharedStrings.xml"
_CHUNK = 1 << 20

_EOCD = b"PK\x05\x06"
_EOCD_SIZE = 22
_MAX_COMMENT = 0xFFFF


def _declared_members(data: bytes) -> int | None:
    """The member count of the end-of-central-directory record (None: not a zip)."""
    at = data.rfind(_EOCD, max(0, len(data) - _EOCD_SIZE - _MAX_COMMENT))
    if at < 0 or at + _EOCD_SIZE > len(data):
        return None
    count: int = struct.unpack_from("<H", data, at + 10)[0]
    return count


def _limit(name: str) -> int:
    if name.startswith("xl/worksheets/") and name.endswith(".xml"):
        return MAX_SHEET_PART
    return MAX_SHARED_STRINGS if name == _SHARED_STRINGS else MAX_PART


def check_workbook(data: bytes, stop: Stop) -> None:
    """Raise ``ToolError`` naming the part and the limit when ``data`` would cost more to
    open than the limits above allow; return quietly for anything else (a broken file is
    left to the reader, which reports it). Checks ``stop`` while it scans."""
    members = _declared_members(data)
    if members is None:
        return
    if members > MAX_MEMBERS:  # 0xFFFF also stands for "see the ZIP64 record": refused too
        raise ToolError(f"{members:,} parts in its zip (limit {MAX_MEMBERS:,}); not read")
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, OSError, ValueError, EOFError):
        return
    total = 0
    for info in archive.infolist():
        size = info.file_size
        total += size
        if size > (limit := _limit(info.filename)):
            raise ToolError(
                f"{info.filename} unpacks to {size:,} bytes (limit {limit:,}); not read. "
                "Export the sheet as .csv, or split the workbook"
            )
        if size > RATIO_FROM and size > MAX_RATIO * max(info.compress_size, 1):
            ratio = size // max(info.compress_size, 1)
            raise ToolError(
                f"{info.filename} unpacks {ratio:,} times larger than it is stored "
                f"({info.compress_size:,} -> {size:,} bytes; limit {MAX_RATIO} times): a zip "
                "bomb, not read"
            )
    if total > MAX_TOTAL:
        raise ToolError(f"it unpacks to {total:,} bytes in all (limit {MAX_TOTAL:,}); not read")
    for info in archive.infolist():
        if info.file_size > SCAN_FROM:
            _scan(archive, info, stop)
        else:
            _prolog(archive, info)


class _Rows:
    """expat handlers that hold a part to the row, cell and DTD rules."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.in_row = False
        self.cells = 0
        self.row_chars = 0
        self.text: int | None = None  # characters of the open cell or shared string

    def start(self, tag: str, _attributes: object) -> None:
        local = tag.rpartition(":")[2]
        if local == "row":
            self.in_row, self.cells, self.row_chars = True, 0, 0
        elif local == "c" and self.in_row:
            self.cells += 1
            self.text = 0
            if self.cells > MAX_ROW_CELLS:
                self._refuse(f"has a row of more than {MAX_ROW_CELLS:,} cells (Excel's limit)")
        elif local == "si":
            self.text = 0

    def end(self, tag: str) -> None:
        local = tag.rpartition(":")[2]
        if local == "row":
            self.in_row = False
        elif local in ("c", "si"):
            self.text = None

    def characters(self, data: str) -> None:
        if self.text is None:
            return
        self.text += len(data)
        if self.text > MAX_CELL_CHARS:
            self._refuse(f"has a text of more than {MAX_CELL_CHARS:,} characters (Excel's limit)")
        if self.in_row:
            self.row_chars += len(data)
            if self.row_chars > MAX_ROW_CHARS:
                self._refuse(f"has a row of more than {MAX_ROW_CHARS:,} characters of text")

    def doctype(self, *_: object) -> None:
        self._refuse("declares a DTD, which no workbook needs")

    def _refuse(self, what: str) -> None:
        raise ToolError(f"{self.name} {what}; not read")


_PROLOG_CHUNK = 1024  # a prolog is a few hundred bytes: the rest is never inflated


class _RootOpened(Exception):
    """The prolog ended (the root element opened) without a DTD."""


def _root_opened(*_: object) -> None:
    raise _RootOpened


def _prolog(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> None:
    """Refuse a DTD in a part too small to scan for rows: its entities (a billion laughs)
    would reach openpyxl's parser otherwise. Parsed up to the root element only (a DTD comes
    before it), so a small part costs a few microseconds; a part that is not XML is left to
    openpyxl."""
    rows = _Rows(info.filename)
    parser = expat.ParserCreate()
    parser.StartElementHandler = _root_opened
    parser.StartDoctypeDeclHandler = rows.doctype
    try:
        with archive.open(info) as stream:
            while chunk := stream.read(_PROLOG_CHUNK):
                parser.Parse(chunk, False)
            parser.Parse(b"", True)
    except (_RootOpened, expat.ExpatError, zipfile.BadZipFile, OSError, EOFError, zlib.error):
        return


def _scan(archive: zipfile.ZipFile, info: zipfile.ZipInfo, stop: Stop) -> None:
    """Stream one part through expat with ``_Rows``; a part that is not XML ends the scan
    (openpyxl reports it if it reads it)."""
    rows = _Rows(info.filename)
    parser = expat.ParserCreate()
    parser.StartElementHandler = rows.start
    parser.EndElementHandler = rows.end
    parser.CharacterDataHandler = rows.characters
    parser.StartDoctypeDeclHandler = rows.doctype
    parser.buffer_text = True  # one call per run of text, not per line
    try:
        with archive.open(info) as stream:
            while chunk := stream.read(_CHUNK):
                stop.check()
                parser.Parse(chunk, False)
            parser.Parse(b"", True)
    except (expat.ExpatError, zipfile.BadZipFile, OSError, EOFError, zlib.error):
        return
