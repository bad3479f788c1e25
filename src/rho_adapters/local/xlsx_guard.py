"""check_workbook: refuse a zip bomb before openpyxl opens it, from the zip's directory alone.

A 307 KB .xlsx grew the agent by 919 MiB: the tool's size cap counted compressed bytes,
and deflate packs repetitive XML a thousand to one. What a workbook costs is its
uncompressed members, which the zip's central directory declares, and Python's ``zipfile``
never returns more than the declared size of a member (a member that holds more fails its
CRC check). So the declared sizes are a bound that holds, and they are checked first:

* the number of members, read from the end-of-directory record before ``zipfile`` builds an
  object per member (``MAX_MEMBERS``);
* each member's size: shared strings and the other parts openpyxl loads whole
  (``MAX_LOADED_PART``), worksheets, which are streamed (``MAX_SHEET_PART``), the total
  (``MAX_TOTAL``);
* each large member's compression ratio (``MAX_RATIO``): XML a spreadsheet program writes
  compresses 5 to 50 times, a bomb about a thousand;
* each worksheet's rows, by a streamed scan: at most ``MAX_ROW_CELLS`` cells in a row
  (openpyxl holds a whole row in memory), and no DTD.

The work of reading rows is bounded separately, by the reader's cell budget.
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
MAX_LOADED_PART = 64 << 20  # sharedStrings.xml, styles.xml...: openpyxl keeps them in memory
MAX_SHEET_PART = 512 << 20  # a worksheet's XML, parsed as a stream
MAX_TOTAL = 1 << 30
MAX_RATIO = 250
RATIO_FROM = 1 << 20  # members smaller than this are not judged by their ratio
MAX_ROW_CELLS = 16_384  # Excel's last column, XFD
SCAN_FROM = 64 << 10  # a worksheet smaller than this cannot hold a row over the limit
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


def check_workbook(data: bytes, stop: Stop) -> None:
    """Raise ``ToolError`` naming the limit when ``data`` would cost more to open than the
    limits above allow; return quietly for anything else (a broken file is left to the
    reader, which reports it). Checks ``stop`` while it scans worksheets."""
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
        limit = MAX_SHEET_PART if _is_sheet(info.filename) else MAX_LOADED_PART
        if size > limit:
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
        if _is_sheet(info.filename) and info.file_size > SCAN_FROM:
            _check_rows(archive, info, stop)


def _is_sheet(name: str) -> bool:
    return name.startswith("xl/worksheets/") and name.endswith(".xml")


def _check_rows(archive: zipfile.ZipFile, info: zipfile.ZipInfo, stop: Stop) -> None:
    """Refuse a worksheet with a row of more than ``MAX_ROW_CELLS`` cells, or a DTD.

    openpyxl builds a whole row in memory before it yields it, at some 400 bytes a cell,
    while ``<c/>`` takes 4 bytes of XML: one row of a million cells costs 400 MB. Excel
    itself stops at 16,384 columns. The scan is expat's, streamed, with no tree: its memory
    is one chunk.
    """
    parser = expat.ParserCreate()
    cells = [0]

    def start(name: str, _attributes: object) -> None:
        local = name.rpartition(":")[2]
        if local == "row":
            cells[0] = 0
        elif local == "c":
            cells[0] += 1
            if cells[0] > MAX_ROW_CELLS:
                raise ToolError(
                    f"{info.filename} has a row of more than {MAX_ROW_CELLS:,} cells "
                    "(Excel's limit); not read"
                )

    def doctype(*_: object) -> None:
        raise ToolError(f"{info.filename} declares a DTD, which no workbook needs; not read")

    parser.StartElementHandler = start
    parser.StartDoctypeDeclHandler = doctype
    try:
        with archive.open(info) as stream:
            while chunk := stream.read(_CHUNK):
                stop.check()
                parser.Parse(chunk, False)
            parser.Parse(b"", True)
    except (expat.ExpatError, zipfile.BadZipFile, OSError, EOFError, zlib.error):
        return  # broken: the reader says so
