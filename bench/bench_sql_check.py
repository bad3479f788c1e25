"""Benchmark: the SQL read-only check on long statements, to show it stays linear.

Usage: .venv/bin/python bench/bench_sql_check.py [--sizes 1000,4000,16000] [--runs 3]

For each size N it times ``classify`` (best of ``--runs``) on statements an agent can write:
N allowlisted calls in a select list (PostgreSQL), a CASE with N ``WHEN (...)`` branches
(Oracle, where WHEN is not reserved), and an IN list of N parenthesised numbers (MySQL).
Prints the time per statement and per thousand tokens; a constant per-token figure means
linear time. Before the per-statement shape, 4,000 calls took 18.6 s.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Sequence

from rho_domain.sql import classify, dialect, tokenize

CASES: dict[str, tuple[str, Callable[[int], str]]] = {
    "calls": ("postgres", lambda n: "SELECT " + ", ".join(["lower(a)"] * n) + " FROM t"),
    "when": ("oracle", lambda n: "SELECT CASE " + "WHEN (a) THEN 1 " * n + "END FROM t"),
    "in-list": ("mysql", lambda n: "SELECT a FROM t WHERE a IN (" + ", ".join(["(1)"] * n) + ")"),
}


def best_of(runs: int, sql: str, dialect_name: str) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        verdict = classify(sql, dialect_name)
        times.append(time.perf_counter() - started)
        assert verdict.read_only, verdict.reason
    return min(times)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1000,4000,16000")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    print(f"{'case':8} {'N':>6} {'KB':>6} {'tokens':>7} {'ms':>8} {'ms/1k tokens':>13}")
    for name, (dialect_name, build) in CASES.items():
        for size in (int(s) for s in args.sizes.split(",")):
            sql = build(size)
            tokens = len(tokenize(sql, dialect(dialect_name).readings[0]))
            seconds = best_of(args.runs, sql, dialect_name)
            print(
                f"{name:8} {size:6} {len(sql) / 1024:6.0f} {tokens:7} {seconds * 1000:8.1f} "
                f"{seconds * 1e6 / tokens:13.2f}"
            )


if __name__ == "__main__":
    main()
