"""What a workbook with many shared strings costs ``read_excel``'s reader, against openpyxl's own.

A workbook is written once: one sheet whose ``--rows`` rows of 20 cells name shared strings, and a
shared-strings part of ``--strings`` distinct six-letter strings (400,000 by default: 8 MB,
the size ``tests/tools/test_spreadsheet_bounds.py`` reads under its memory bound). Each round
starts one fresh process per tree, which measures by its own CPU clock (``time.process_time``,
all threads):

- openpyxl   ``openpyxl.load_workbook(read_only=True, data_only=True)`` of the bytes and its
             first row: openpyxl's reader alone, the floor
- read       what one ``read_excel`` call asks ``OpenpyxlReader``: its sheets (the zip check,
             the workbook opened, the sheet scanned), then a window of 5 rows (opened again)
- again      the next call on the same reader (the next 5 rows), as an agent's tool makes it

``--against SRC`` runs another tree's sources (``git archive`` of an earlier commit unpacked
somewhere) in the same rounds, alternating. Medians over the rounds, with the spread; the load
average is printed.

Usage: python bench/bench_excel.py [--runs 5] [--strings 400000] [--rows 3000]
       [--against OTHER/src]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Sequence
from pathlib import Path

MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
SHARED_TYPE = (
    '<Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.openxmlformats-'
    'officedocument.spreadsheetml.sharedStrings+xml"/></Types>'
)

_CHILD = """
import asyncio, io, json, sys, time
import openpyxl
from rho_adapters.local.spreadsheet import OpenpyxlReader
data = open(sys.argv[1], "rb").read()
first = sys.argv[2]
began = time.process_time()
book = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
row = next(book.active.iter_rows(values_only=True))
book.close()
floor = time.process_time() - began
assert row[0] == first, row
reader = OpenpyxlReader()
began = time.process_time()
sheets = asyncio.run(reader.sheets(data))
rows = asyncio.run(reader.rows(data, sheets[0].name, start=1, count=5, max_columns=50))
read = time.process_time() - began
assert rows[0][0] == first, rows
began = time.process_time()
sheets = asyncio.run(reader.sheets(data))
rows = asyncio.run(reader.rows(data, sheets[0].name, start=6, count=5, max_columns=50))
again = time.process_time() - began
print(json.dumps({"openpyxl": floor, "read": read, "again": again}))
"""


def write_workbook(path: Path, strings: int, rows: int) -> str:
    """The workbook (above) at ``path``; its first string, which cell A1 shows."""
    import openpyxl

    book = openpyxl.Workbook()
    book.active.title = "Main"
    book.active.append(["x"])
    buffer = io.BytesIO()
    book.save(buffer)
    letters = random.Random(5).randbytes(strings * 3).hex()
    words = [letters[i : i + 6] for i in range(0, len(letters), 6)]
    shared = "".join(f"<si><t>{word}</t></si>" for word in words)

    def cell(r: int, c: int) -> str:
        return f'<c r="{chr(65 + c)}{r}" t="s"><v>{(r * 20 + c) % strings}</v></c>'

    data = "".join(
        f'<row r="{r}">{"".join(cell(r, c) for c in range(20))}</row>' for r in range(1, rows + 1)
    )
    sheet = f'<worksheet xmlns="{MAIN}"><sheetData>{data}</sheetData></worksheet>'
    source = zipfile.ZipFile(buffer)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            body = source.read(info.filename)
            if info.filename == "[Content_Types].xml":
                body = body.replace(b"</Types>", SHARED_TYPE.encode())
            elif info.filename == "xl/worksheets/sheet1.xml":
                body = sheet.encode()
            target.writestr(info, body)
        target.writestr("xl/sharedStrings.xml", f'<sst xmlns="{MAIN}">{shared}</sst>')
    return words[20 % strings]


def measure(src: str, path: Path, first: str) -> dict[str, float]:
    """One fresh process of the tree at ``src``: its figures, in seconds."""
    env = {**os.environ, "PYTHONPATH": src}
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(path), first],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    figures: dict[str, float] = json.loads(out.stdout)
    return figures


def _figure(samples: list[float]) -> str:
    values = [s * 1e3 for s in samples]
    return f"{statistics.median(values):.0f} ms ({min(values):.0f}-{max(values):.0f})"


def main(argv: Sequence[str] | None = None) -> None:
    """Run the rounds (alternating trees when ``--against`` is given) and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--strings", type=int, default=400_000)
    parser.add_argument("--rows", type=int, default=3000, help="of 20 cells each")
    parser.add_argument("--against", metavar="SRC", help="another tree's src/, alternating")
    args = parser.parse_args(argv)
    trees = {"this tree": os.environ.get("PYTHONPATH", "")}
    if args.against:
        trees[f"against {args.against}"] = args.against
    samples: dict[str, dict[str, list[float]]] = {tree: {} for tree in trees}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "strings.xlsx"
        first = write_workbook(path, args.strings, args.rows)
        load_before = os.getloadavg()[0]
        for _ in range(args.runs):
            for tree, src in trees.items():
                for key, seconds in measure(src, path, first).items():
                    samples[tree].setdefault(key, []).append(seconds)
    print(f"load average {load_before:.1f} -> {os.getloadavg()[0]:.1f}; {args.runs} rounds")
    shape = f"{args.strings:,} shared strings, {args.rows:,} x 20 cells"
    print(f"| {shape} (CPU, median (min-max)) | {' | '.join(trees)} |")
    print(f"|---|{'---:|' * len(trees)}")
    rows = {
        "openpyxl.load_workbook + first row": "openpyxl",
        "read_excel's reader: sheets + 5 rows": "read",
        "the next call, same reader: sheets + 5 rows": "again",
    }
    for label, key in rows.items():
        cells = " | ".join(_figure(samples[tree][key]) for tree in trees)
        print(f"| {label} | {cells} |")


if __name__ == "__main__":
    main()
