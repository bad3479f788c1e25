"""Import cost of the packages: median wall time of fresh interpreters, vs `python -c pass`.

Run: python bench/bench_imports.py [runs]
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

CASES = {
    "python -c pass": "pass",
    "import rho_domain": "import rho_domain",
    "import rho_domain.loop.session (the whole loop)": "import rho_domain.loop.session",
    "import rho_entry": "import rho_entry",
}


def median_ms(code: str, runs: int) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1000


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 21
    base = None
    for label, code in CASES.items():
        ms = median_ms(code, runs)
        base = ms if base is None else base
        print(f"| {label} | {ms:.1f} ms | +{ms - base:.1f} ms |")


if __name__ == "__main__":
    main()
