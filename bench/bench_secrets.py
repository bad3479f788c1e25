"""The secrets policy's cost: a process's first judgement, and each path after it.

Every file a tool touches and every path word of a shell stage is judged by
``rho_domain.secrets`` (``SecretPolicy.judge``; ``refusal`` remembers its answers). Each round
starts one fresh process per tree, which measures, by its own CPU clock
(``time.process_time``):

- import        ``import rho_domain.secrets`` (attrs already imported: every caller has it)
- first         the first ``DEFAULT_POLICY.refusal`` of an ordinary workspace path: what the
                first file a process checks pays beyond the import (the patterns' set-up)
- per path      ``DEFAULT_POLICY.judge`` (never remembered) over ``ORDINARY`` paths, then
                over ``SECRET`` ones, ``--repeats`` times each: the best pass, per path

``--against SRC`` runs another tree's sources (``git archive`` of an earlier commit unpacked
somewhere) in the same rounds, alternating. Medians over the rounds, with the spread; the load
average is printed.

Usage: python bench/bench_secrets.py [--runs 11] [--repeats 200] [--against OTHER/src]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from collections.abc import Sequence

# What a listing, a read or a shell stage hands the policy: real paths in a workspace,
# relative words, devices; none of them secret.
ORDINARY = (
    "/home/u/work", "/home/u/work/src/app/main.py", "/home/u/work/README.md",
    "/home/u/work/tests/test_main.py", "/home/u/work/.gitignore", "/home/u/work/pyproject.toml",
    "src/app/config.py", "notes.txt", ".", "/dev/null", "/usr/bin/python3", "/tmp/out.log",
)  # fmt: skip
# One of each rule: a location, an allowed-looking device, names, a key, a system file.
SECRET = (
    "/home/u/.ssh/id_rsa", "/home/u/work/.env", "/home/u/work/.env.local", "/proc/self/environ",
    "/home/u/work/certs/server.pem", "id_ed25519", "/etc/shadow", "/home/u/.aws/credentials",
)  # fmt: skip

_CHILD = """
import json, sys, time
import attrs  # every caller of the policy has it already
paths = json.loads(sys.argv[1])
repeats = int(sys.argv[2])
started = time.process_time()
from rho_domain.secrets import DEFAULT_POLICY
imported = time.process_time()
DEFAULT_POLICY.refusal("/home/u/work/src/app/main.py")
first = time.process_time()
out = {"import": imported - started, "first": first - imported}
# the figures are of the verdicts meant: ordinary paths let through, secret ones refused
assert all(DEFAULT_POLICY.judge(p) is None for p in paths["ordinary"])
assert all(DEFAULT_POLICY.judge(p) is not None for p in paths["secret"])
for kind, group in paths.items():
    best = float("inf")
    for _ in range(repeats):
        began = time.process_time()
        for path in group:
            DEFAULT_POLICY.judge(path)
        best = min(best, (time.process_time() - began) / len(group))
    out[kind] = best
print(json.dumps(out))
"""


def measure(src: str, repeats: int) -> dict[str, float]:
    """One fresh process of the tree at ``src``: its figures, in seconds."""
    env = {**os.environ, "PYTHONPATH": src}
    paths = json.dumps({"ordinary": ORDINARY, "secret": SECRET})
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, paths, str(repeats)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    figures: dict[str, float] = json.loads(out.stdout)
    return figures


def _figure(samples: list[float], scale: float, unit: str) -> str:
    values = [s * scale for s in samples]
    median = statistics.median(values)
    return f"{median:.2f} {unit} ({min(values):.2f}-{max(values):.2f})"


def main(argv: Sequence[str] | None = None) -> None:
    """Run the rounds (alternating trees when ``--against`` is given) and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--repeats", type=int, default=200)
    parser.add_argument("--against", metavar="SRC", help="another tree's src/, alternating")
    args = parser.parse_args(argv)
    trees = {"this tree": os.environ.get("PYTHONPATH", "")}
    if args.against:
        trees[f"against {args.against}"] = args.against
    load_before = os.getloadavg()[0]
    samples: dict[str, dict[str, list[float]]] = {tree: {} for tree in trees}
    for _ in range(args.runs):
        for tree, src in trees.items():
            for key, seconds in measure(src, args.repeats).items():
                samples[tree].setdefault(key, []).append(seconds)
    print(f"load average {load_before:.1f} -> {os.getloadavg()[0]:.1f}; {args.runs} rounds")
    print(f"| measure (CPU, median (min-max)) | {' | '.join(trees)} |")
    print(f"|---|{'---:|' * len(trees)}")
    rows = {
        "import rho_domain.secrets": ("import", 1e3, "ms"),
        "first refusal": ("first", 1e3, "ms"),
        f"judge, per ordinary path ({len(ORDINARY)})": ("ordinary", 1e6, "µs"),
        f"judge, per secret path ({len(SECRET)})": ("secret", 1e6, "µs"),
    }
    for label, (key, scale, unit) in rows.items():
        cells = " | ".join(_figure(samples[tree][key], scale, unit) for tree in trees)
        print(f"| {label} | {cells} |")


if __name__ == "__main__":
    main()
