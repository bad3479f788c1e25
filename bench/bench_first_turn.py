"""What a one-shot's first turn is made of, and what its collector does, per tree.

The first turn (``run_start`` -> the first ``llm_start`` in ``bench_oneshot.py``) is what the
first model request needs that start-up did not load, and the server probe. Each sample is a
fresh process that first imports what a one-shot's start-up has imported (the CLI, the
wiring, the facade, the OpenAI adapter), then measures, by its own CPU clock:

- http stack       importing httpcore and h11 (httpx loads them at the first request)
- probe            ``context_window()`` of a fresh model: the client, the connection, the
                   two GETs of the probe (``/props``, ``/v1/models``) to the loopback server,
                   and what that first request imports (a tree before netback7: anyio's
                   asyncio backend, which httpcore's locks loaded, and sniffio)
- anyio loaded     1 when the probe left anyio's asyncio backend imported, else 0

and, in another fresh process, a whole ``rho-agent -y "list the files"`` run through its own
command line (``main()`` reading ``sys.argv``), counting the cyclic collector's passes by
generation. Medians and spreads of ``--runs`` samples; the load average is printed.

``--against SRC`` measures another tree's sources in the same rounds, alternating.

Usage: python bench/bench_first_turn.py [--runs 10] [--against OTHER/src]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from loopback_agent_server import start_server

_PARTS = """
import asyncio, sys, time
import rho_entry.cli.app, rho_entry.wiring, rho_entry.facade, rho_adapters.model.openai_chat
import yaml, httpx
t0 = time.process_time()
import httpcore, h11
t1 = time.process_time()
from rho_adapters.model import build_model
async def probe():
    model = build_model(model="bench", base_url=sys.argv[1], api_key="unused")
    c0, w0 = time.process_time(), time.perf_counter()
    await model.context_window()
    c1, w1 = time.process_time(), time.perf_counter()
    await model.aclose()
    return (c1 - c0) * 1000, (w1 - w0) * 1000
cpu, wall = asyncio.run(probe())
print(json.dumps({"http stack": (t1 - t0) * 1000, "probe CPU": cpu, "probe wall": wall,
                  "anyio loaded": float("anyio._backends._asyncio" in sys.modules)}))
"""

_COLLECTIONS = """
import contextlib, gc, io, json, sys
seen = {0: 0, 1: 0, 2: 0}
gc.callbacks.append(lambda phase, info: phase == "start" and seen.update(
    {info["generation"]: seen[info["generation"]] + 1}))
from rho_entry.cli import main
sys.argv = ["rho-agent", "-y", "list the files"]
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    main()
print(json.dumps({f"collections gen {g}": n for g, n in seen.items()}))
"""


def _sample(code: str, *args: str, env: dict[str, str], cwd: Path) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, "-c", "import json\n" + code, *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise SystemExit(done.stderr)
    result: dict[str, float] = json.loads(done.stdout.splitlines()[-1])
    return result


def main(argv: Sequence[str] | None = None) -> None:
    """Alternate the trees' samples and print each measure's median (min-max)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--against", metavar="SRC", help="another tree's src/ to measure too")
    args = parser.parse_args(argv)
    trees = {"this tree": os.environ.get("PYTHONPATH", "")}
    if args.against:
        trees[f"against {args.against}"] = args.against
    server, base_url = start_server()
    assert server.stdin is not None
    load_before = os.getloadavg()[0]
    samples: dict[str, dict[str, list[float]]] = {tree: {} for tree in trees}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp) / "work"
            work.mkdir()
            for i in range(20):
                (work / f"file{i:02}.txt").write_text(f"file {i}\n")
            for _ in range(args.runs):
                for tree, path in trees.items():
                    env = {
                        **os.environ,
                        "PYTHONPATH": path,
                        "HOME": tmp,
                        "RHO_AGENT_HOME": str(Path(tmp) / "home"),
                        "RHO_AGENT_BASE_URL": base_url,
                        "RHO_AGENT_MODEL": "bench",
                        "OPENAI_API_KEY": "unused",
                        "NO_COLOR": "1",
                    }
                    measured = _sample(_PARTS, base_url, env=env, cwd=work)
                    measured |= _sample(_COLLECTIONS, env=env, cwd=work)
                    for name, value in measured.items():
                        samples[tree].setdefault(name, []).append(value)
    finally:
        server.stdin.close()
        server.wait()
    print(f"load average {load_before:.1f} -> {os.getloadavg()[0]:.1f}; {args.runs} rounds")
    for tree, measures in samples.items():
        print(f"== {tree}")
        for name, values in measures.items():
            unit = "" if name.startswith(("collections", "anyio")) else " ms"
            print(
                f"{name:22} {statistics.median(values):8.1f}{unit}"
                f"  ({min(values):.1f}-{max(values):.1f})"
            )


if __name__ == "__main__":
    main()
