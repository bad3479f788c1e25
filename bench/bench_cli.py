"""Start-up cost of the CLI: wall time and peak memory against ``python -c pass``.

Measures, each as the median of N runs (peak RSS: the child's own ``VmHWM``, which a
``sitecustomize`` this bench puts on the child's path writes at exit; ``os.wait4``'s
``ru_maxrss`` would also count the pages the child shared with this process before its exec,
so in a big process, a pytest worker, every short command read that process's size):

- ``python -c pass``                       the floor
- ``python -c "import rho_entry"``         the library's import
- ``rho-agent --help``                     goal: within 60 ms of the floor, peak < 25 MiB
- ``rho-agent --version``
- ``rho-agent --model demo "..."``         a complete offline one-shot loop (real tools)

Also lists which heavy modules ``--help`` imported (must be none of httpx, yaml, cattrs or a
driver). Usage: ``python bench/bench_cli.py [--runs N]``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

HEAVY = ("httpx", "yaml", "cattrs", "psycopg", "pymysql", "oracledb", "vertica_python", "openpyxl")


# Written beside the bench's temporary workspace and put first on the children's PYTHONPATH:
# the process's own peak (``VmHWM`` counts only what it mapped since its exec), at exit. It
# would hide an environment's own sitecustomize (none in ours; Debian's python3 has one).
PEAK_HOOK = """
import atexit, os

def _peak(path=os.environ.get("RHO_BENCH_PEAK_FILE")):
    if not path:
        return
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                with open(path, "w") as out:
                    out.write(line.split()[1])  # KiB

atexit.register(_peak)
"""


def measure(argv: list[str], *, cwd: str, env: dict[str, str]) -> tuple[float, float, int]:
    """(wall seconds, peak RSS MiB, exit code) of one run."""
    with tempfile.NamedTemporaryFile(prefix="rho-bench-peak-") as peak:
        started = time.perf_counter()
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env={**env, "RHO_BENCH_PEAK_FILE": peak.name},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        written = Path(peak.name).read_text()
    proc.returncode = os.waitstatus_to_exitcode(status)
    # Where the hook could not read /proc (not Linux): wait4's figure, an upper bound.
    kib = int(written) if written.isdigit() else usage.ru_maxrss
    return wall, kib / 1024, proc.returncode


def heavy_imports(command: list[str], env: dict[str, str]) -> list[str]:
    code = (
        "import sys, contextlib, io\n"
        "from rho_entry.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    main({command!r})\n"
        f"print(' '.join(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r}))))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    return out.stdout.split()


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    runs = parser.parse_args(argv).runs
    script = shutil.which("rho-agent") or str(Path(sys.executable).with_name("rho-agent"))
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "work"
        work.mkdir()
        (work / "README.md").write_text("# Bench project\n\nA small workspace.\n")
        hook = Path(tmp) / "peak"
        hook.mkdir()
        (hook / "sitecustomize.py").write_text(PEAK_HOOK)
        paths = [str(hook), *filter(None, [os.environ.get("PYTHONPATH")])]
        env = {
            # the sources PYTHONPATH names (a worktree's), and where their bytecode is kept
            **{k: os.environ[k] for k in ("PYTHONPYCACHEPREFIX",) if k in os.environ},
            "PYTHONPATH": os.pathsep.join(paths),
            "PATH": os.environ.get("PATH", ""),
            "HOME": tmp,
            "RHO_AGENT_HOME": str(Path(tmp) / "home"),
            "NO_COLOR": "1",
        }
        cases = {
            "python -c pass": [sys.executable, "-c", "pass"],
            'python -c "import rho_entry"': [sys.executable, "-c", "import rho_entry"],
            "rho-agent --help": [script, "--help"],
            "rho-agent --version": [script, "--version"],
            'rho-agent --model demo "..."': [script, "--model", "demo", "what is here?"],
        }
        results = {}
        for name, argv in cases.items():
            samples = [measure(argv, cwd=str(work), env=env) for _ in range(runs)]
            codes = {code for *_, code in samples}
            results[name] = (
                statistics.median(s[0] for s in samples) * 1000,
                max(s[1] for s in samples),
                codes,
            )
        floor = results["python -c pass"][0]
        print(f"{'command':34} {'median ms':>10} {'vs floor':>9} {'peak MiB':>9}  exit")
        for name, (wall, rss, codes) in results.items():
            print(f"{name:34} {wall:10.1f} {wall - floor:+9.1f} {rss:9.1f}  {sorted(codes)}")
        print()
        print("heavy modules imported by --help:   ", heavy_imports(["--help"], env) or "none")
        print("heavy modules imported by --version:", heavy_imports(["--version"], env) or "none")
        help_wall, help_rss, _ = results["rho-agent --help"]
        print(
            f"goals: --help within 60 ms of the floor: {help_wall - floor:+.1f} ms "
            f"({'met' if help_wall - floor <= 60 else 'MISSED'}); "
            f"peak under 25 MiB: {help_rss:.1f} MiB ({'met' if help_rss < 25 else 'MISSED'})"
        )


if __name__ == "__main__":
    main()
