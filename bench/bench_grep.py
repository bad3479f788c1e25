"""Benchmark: the grep tool on a 100k-file tree versus running ripgrep by hand.

Usage: .venv/bin/python bench/bench_grep.py [--files 100000] [--runs 5] [--dir DIR] [--keep]

Builds a tree of small text files (about 400 MB on disk; removed at the end unless ``--keep``, which
lets the next run reuse it), 1% of which contain the needle, then times:
  * by hand: ``rg --line-number --with-filename --no-heading NEEDLE .`` (output to a pipe);
  * the tool: ``GrepHandler`` through ``LocalExecutor`` (confinement, argv validation,
    hardening, bubblewrap sandbox when available, output capture and rendering).
Prints the median wall time of each and their ratio (goal: tool <= 1.5x by hand).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from rho_adapters.clock import SystemClock
from rho_adapters.local import LocalExecutor
from rho_domain.permissions import readonly_profile
from rho_domain.tools.base import ToolContext
from rho_domain.tools.grep import GrepHandler

NEEDLE = "needle_7f3a"


def build_tree(root: Path, files: int) -> None:
    marker = root / f".complete-{files}"
    if marker.exists():
        return
    shutil.rmtree(root, ignore_errors=True)
    per_dir = 500
    for i in range(files):
        directory = root / f"d{i // per_dir // 20:03d}" / f"s{i // per_dir:04d}"
        if i % per_dir == 0:
            directory.mkdir(parents=True, exist_ok=True)
        body = f"file {i}\nsome ordinary text line\nvalue = {i * 7}\n"
        if i % 100 == 0:
            body += f"here is the {NEEDLE} we look for\n"
        (directory / f"f{i:06d}.txt").write_text(body)
    marker.write_text("ok")


def time_by_hand(root: Path, rg: str) -> float:
    start = time.perf_counter()
    subprocess.run(
        [rg, "--line-number", "--with-filename", "--no-heading", NEEDLE, "."],
        cwd=root,
        stdout=subprocess.PIPE,
        check=True,
    )
    return time.perf_counter() - start


async def time_tool(root: Path) -> tuple[float, str]:
    executor = LocalExecutor(str(root))
    ctx = ToolContext(
        session_id="bench",
        call_id="c",
        executor=executor,
        profile=readonly_profile(),
        clock=SystemClock(),
    )
    start = time.perf_counter()
    out = await GrepHandler().handle({"pattern": NEEDLE, "max_results": 2000}, ctx)
    return time.perf_counter() - start, out.content.splitlines()[-1]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--dir", default="/tmp/rho-bench-grep")
    parser.add_argument("--keep", action="store_true", help="keep the tree for the next run")
    args = parser.parse_args(argv)
    root = Path(args.dir)
    try:
        run(root, args)
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


def run(root: Path, args: argparse.Namespace) -> None:
    started = time.perf_counter()
    build_tree(root, args.files)
    print(
        f"tree: {args.files:,} files under {root} (ready in {time.perf_counter() - started:.1f} s)"
    )
    rg = shutil.which("rg") or os.path.join(os.path.dirname(sys.executable), "rg")
    time_by_hand(root, rg)  # warm the page cache
    hand, tool = [], []
    footer = ""
    for _ in range(args.runs):
        hand.append(time_by_hand(root, rg))
        elapsed, footer = asyncio.run(time_tool(root))
        tool.append(elapsed)
    hand_ms, tool_ms = statistics.median(hand) * 1000, statistics.median(tool) * 1000
    print(f"tool footer: {footer}")
    print(f"rg by hand: median {hand_ms:.0f} ms over {args.runs} runs")
    print(f"grep tool:  median {tool_ms:.0f} ms over {args.runs} runs")
    print(f"ratio tool/hand: {tool_ms / hand_ms:.2f}x (goal <= 1.5x)")


if __name__ == "__main__":
    main()
