"""Import cost of the packages: fresh interpreters against `python -c pass`, wall and CPU time.

Each round runs every case once, in turn (with ``--against SRC``, each case once per tree,
the trees' order alternating from round to round), so a before/after shares the machine's
load. A case's CPU time is the child's user + system time (``getrusage`` of the reaped
process), which the other processes on a shared machine move far less than its wall time.
Medians, and each case over the floor's median.

Run: python bench/bench_imports.py [--runs 21] [--against OTHER/src]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence

CASES = {
    "python -c pass": "pass",
    "import rho_domain": "import rho_domain",
    "import rho_domain.loop.session (the whole loop)": "import rho_domain.loop.session",
    "import rho_entry": "import rho_entry",
    "from rho_agent import Agent, AgentConfig, Session": (
        "from rho_agent import Agent, AgentConfig, Session"
    ),
}


def timed(code: str, src: str) -> tuple[float, float]:
    """(wall ms, CPU ms) of one fresh interpreter running ``code`` with ``src`` first."""
    env = {**os.environ, "PYTHONPATH": src}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall * 1000, cpu * 1000


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--against", metavar="SRC", help="another tree's src/, alternating")
    args = parser.parse_args(argv)
    trees = {"this tree": os.environ.get("PYTHONPATH", "src")}
    if args.against:
        trees["against"] = args.against
    samples: dict[tuple[str, str], tuple[list[float], list[float]]] = {
        (tree, label): ([], []) for tree in trees for label in CASES
    }
    load = os.getloadavg()[0]
    for round_ in range(args.runs):
        order = list(trees.items()) if round_ % 2 == 0 else list(reversed(trees.items()))
        for label, code in CASES.items():
            for tree, src in order:
                wall, cpu = timed(code, src)
                samples[tree, label][0].append(wall)
                samples[tree, label][1].append(cpu)
    print(f"load average {load:.1f} -> {os.getloadavg()[0]:.1f}; {args.runs} rounds")
    for tree, src in trees.items():
        print(f"== {tree} ({src})")
        print("| case | wall | over the floor | CPU | over the floor |")
        floor_wall, floor_cpu = (statistics.median(s) for s in samples[tree, "python -c pass"])
        for label in CASES:
            wall, cpu = (statistics.median(s) for s in samples[tree, label])
            print(
                f"| {label} | {wall:.1f} ms | +{wall - floor_wall:.1f} ms "
                f"| {cpu:.1f} ms | +{cpu - floor_cpu:.1f} ms |"
            )


if __name__ == "__main__":
    main()
