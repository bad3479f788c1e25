"""Benchmark: the cost of starting one tool command through LocalExecutor.

Usage: .venv/bin/python bench/bench_tool_spawn.py [--runs 50]

Times ``echo hi`` as an unrestricted shell command and as a restricted argv stage without
bubblewrap: both run under the guard that makes them die with the agent (local/guard.py). With
``--bwrap`` the restricted stage runs in the sandbox instead (no guard). Prints the median
wall time and the mean CPU time (user + system) of the processes a command starts (the
guard, which sets the rlimits, and the program; in the sandbox prlimit and bwrap), read from
``RUSAGE_CHILDREN``. With ``--guard`` it measures the guard alone instead: the mean CPU of a
guarded ``/bin/true`` started with ``subprocess.run`` (run it with another tree's ``src`` on
``PYTHONPATH`` to compare).
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import statistics
import subprocess
import tempfile
import time
from collections.abc import Sequence

from rho_adapters.local import LocalExecutor
from rho_domain.ports.executor import Command, Stage


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


async def measure(runs: int, sandbox: bool) -> dict[str, tuple[float, float]]:
    with tempfile.TemporaryDirectory() as root:
        executor = LocalExecutor(root, allow_shell=True, sandbox=sandbox)
        commands = {
            "unrestricted `echo hi`": Command(shell="echo hi", timeout=10),
            "restricted echo hi": Command(pipeline=(Stage(argv=("echo", "hi")),), timeout=10),
        }
        medians = {}
        for label, command in commands.items():
            await executor.run(command)  # warm-up
            times = []
            cpu = _children_cpu()
            for _ in range(runs):
                start = time.perf_counter()
                await executor.run(command)
                times.append(time.perf_counter() - start)
            cpu = (_children_cpu() - cpu) / runs
            medians[label] = (statistics.median(times) * 1000, cpu * 1000)
        return medians


def guard_cpu(runs: int) -> float:
    """Mean CPU (ms) of the guard and ``/bin/true`` under it, per run."""
    from rho_adapters.local.guard import guarded

    argv = guarded(("/bin/true",))
    subprocess.run(argv, check=True)  # warm-up
    cpu = _children_cpu()
    for _ in range(runs):
        subprocess.run(argv, check=True)
    return (_children_cpu() - cpu) / runs * 1000


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--bwrap", action="store_true", help="restricted stages in bubblewrap")
    parser.add_argument("--guard", action="store_true", help="the guard alone, CPU only")
    args = parser.parse_args(argv)
    if args.guard:
        print(f"guarded /bin/true: CPU {guard_cpu(args.runs):.1f} ms a run over {args.runs} runs")
        return
    for label, (ms, cpu) in asyncio.run(measure(args.runs, args.bwrap)).items():
        print(f"{label}: median {ms:.1f} ms over {args.runs} runs, CPU {cpu:.1f} ms a command")


if __name__ == "__main__":
    main()
