"""Where a one-shot run's time goes: ``rho-agent -y "list the files"`` against the loopback fake.

Alternating rounds of ``python -c pass`` (the floor: the interpreter) and the one-shot against
``bench/loopback_agent_server.py`` (a ``list`` tool call, then a 50-delta answer), each a fresh
process in a small workspace. Each one-shot's phases come from the process's own clock and
the session it wrote (``meta.json``'s ``created_at``, the trace's event times):

- start-up      launch -> session created: interpreter, imports, settings, store, session dir
- run start     session created -> ``run_start``
- first turn    ``run_start`` -> ``llm_start`` (the server probe, the system prompt)
- model call 1  ``llm_start`` -> ``llm_end`` (the streamed tool call)
- tool          ``tool_start`` -> ``tool_end`` (``list`` on the real LocalExecutor)
- model call 2  the streamed 50-delta answer
- end of run    last ``llm_end`` -> ``run_end``
- exit          ``run_end`` -> the process is reaped (stores closed, interpreter torn down)

The imports the one-shot pays are summed from ``-X importtime`` (its top-level entries), and
``--help``, ``--version``, ``from rho_agent import Agent, AgentConfig, Session`` and the
libraries alone (``LIBRARIES``: asyncio, httpx with httpcore and h11, attrs, argparse, json,
pathlib; what a one-shot cannot leave out) are timed in the same alternation. Each process's
CPU time (user + system, from ``getrusage`` of the reaped child) is reported beside its wall
time: what the suite's many ``rho-agent`` processes cost the machine, and less swayed by the
other processes' load than the wall clock. Figures
are medians with the spread (min-max); the load average is printed.

``--against SRC`` times another tree's sources (e.g. ``git archive`` of an earlier commit
unpacked somewhere) in the same rounds, alternating: a before/after at the same load.

Usage: python bench/bench_oneshot.py [--runs 15] [--import-runs 5] [--against OTHER/src]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from loopback_agent_server import start_server

# What every one-shot imports that is not ours (rho_adapters' package init only keeps httpx's
# command line out, as in a run): the floor under the "imports <= 120 ms".
LIBRARIES = "import rho_adapters, asyncio, argparse, json, pathlib, attrs, httpx, httpcore, h11"

CPU: dict[str, list[float]] = {}  # "tree/process" -> CPU ms of each run (user + system)


def _launch(
    argv: list[str], *, cwd: Path, env: dict[str, str], cpu: str = ""
) -> tuple[float, float, int]:
    """(launch time, end time, exit code) of one process, by the wall clock; its CPU time
    goes to ``CPU[cpu]`` when ``cpu`` names it."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.time()
    code = subprocess.call(
        argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    ended = time.time()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if cpu:
        used = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
        CPU.setdefault(cpu, []).append(used * 1000)
    return started, ended, code


def _phases(session: Path, started: float, ended: float) -> dict[str, float]:
    """Milliseconds per phase of one one-shot, from its session directory."""
    meta = json.loads((session / "meta.json").read_text())
    events = [json.loads(line) for line in (session / "trace.jsonl").read_text().splitlines()]
    at: dict[str, list[float]] = {}
    for event in events:
        at.setdefault(event["kind"], []).append(event["at"])
    marks = {
        "start-up": (started, meta["created_at"]),
        "run start": (meta["created_at"], at["run_start"][0]),
        "first turn": (at["run_start"][0], at["llm_start"][0]),
        "model call 1": (at["llm_start"][0], at["llm_end"][0]),
        "tool": (at["tool_start"][0], at["tool_end"][0]),
        "model call 2": (at["llm_start"][1], at["llm_end"][1]),
        "end of run": (at["llm_end"][1], at["run_end"][0]),
        "exit": (at["run_end"][0], ended),
        "whole process": (started, ended),
    }
    return {name: (end - begin) * 1000 for name, (begin, end) in marks.items()}


def import_ms(argv: list[str], *, cwd: Path, env: dict[str, str]) -> float:
    """The imports one process pays: the sum of ``-X importtime``'s top-level entries."""
    out = subprocess.run(
        [sys.executable, "-X", "importtime", *argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
    )
    top = re.findall(r"import time:\s+\d+ \|\s+(\d+) \| {1,2}\S", out.stderr)
    return sum(int(us) for us in top) / 1000


def _figure(samples: list[float]) -> str:
    return f"{statistics.median(samples):8.1f}  ({min(samples):.0f}-{max(samples):.0f})"


def _round(
    script: str, work: Path, home: Path, env: dict[str, str], tree: str
) -> tuple[dict[str, float], dict[str, float]]:
    """One round of one tree: (process -> ms, phase of the one-shot -> ms)."""
    timed = {}
    cases = {
        "floor": [sys.executable, "-c", "pass"],
        "--help": [script, "--help"],
        "--version": [script, "--version"],
        "facade import": [
            sys.executable,
            "-c",
            "from rho_agent import Agent, AgentConfig, Session",
        ],
        "libraries only": [sys.executable, "-c", LIBRARIES],
    }
    for name, argv in cases.items():
        started, ended, _ = _launch(argv, cwd=work, env=env, cpu=f"{tree}/{name}")
        timed[name] = (ended - started) * 1000
    before = set((home / "sessions").glob("*")) if home.exists() else set()
    one_shot = [script, "-y", "list the files"]
    started, ended, code = _launch(one_shot, cwd=work, env=env, cpu=f"{tree}/one-shot")
    if code != 0:
        raise SystemExit(f"the one-shot exited {code}")
    (session,) = set((home / "sessions").glob("*")) - before
    return timed, _phases(session, started, ended)


def _report(label: str, timed: dict[str, list[float]], phases: dict[str, list[float]]) -> None:
    floor_ms = statistics.median(timed["floor"])
    print(f"== {label}")
    print(f"{'phase of the one-shot':24} {'median ms':>9}  (min-max)")
    for name, samples in phases.items():
        print(f"{name:24} {_figure(samples)}")
    print(f"{'imports (-X importtime)':24} {_figure(timed['imports'])}  (also in start-up)")
    print(f"{'process':24} {'median ms':>9}  (min-max)   over the floor   x floor")
    for name, samples in [*timed.items(), ("one-shot", phases["whole process"])]:
        if name != "imports":
            over = statistics.median(samples) - floor_ms
            ratio = statistics.median(samples) / floor_ms
            print(f"{name:24} {_figure(samples)}   {over:+8.1f} ms   {ratio:5.2f}x")
    cpu_floor = statistics.median(CPU[f"{label}/floor"])
    print(f"{'CPU (user + system)':24} {'median ms':>9}  (min-max)   over the floor")
    for key, samples in CPU.items():
        tree, name = key.rsplit("/", 1)
        if tree == label:
            over = statistics.median(samples) - cpu_floor
            print(f"{name:24} {_figure(samples)}   {over:+8.1f} ms")


def main(argv: Sequence[str] | None = None) -> None:
    """Run the rounds (alternating trees when ``--against`` is given) and print the timelines."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument(
        "--against", metavar="SRC", help="another tree's src/ to time in the same rounds"
    )
    parser.add_argument("--import-runs", type=int, default=5, help="-X importtime samples")
    args = parser.parse_args(argv)
    script = shutil.which("rho-agent") or str(Path(sys.executable).with_name("rho-agent"))
    trees = {"this tree": os.environ.get("PYTHONPATH", "")}
    if args.against:
        trees[f"against {args.against}"] = args.against
    server, base_url = start_server()
    load_before = os.getloadavg()[0]
    timed: dict[str, dict[str, list[float]]] = {tree: {} for tree in trees}
    phases: dict[str, dict[str, list[float]]] = {tree: {} for tree in trees}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            work, home = Path(tmp) / "work", Path(tmp) / "home"
            work.mkdir()
            for i in range(20):
                (work / f"file{i:02}.txt").write_text(f"file {i}\n")
            envs = {
                tree: {
                    "PATH": os.environ.get("PATH", ""),
                    "PYTHONPATH": path,
                    **{k: os.environ[k] for k in ("PYTHONPYCACHEPREFIX",) if k in os.environ},
                    "HOME": tmp,
                    "RHO_AGENT_HOME": str(home),
                    "RHO_AGENT_BASE_URL": base_url,
                    "RHO_AGENT_MODEL": "bench",
                    "OPENAI_API_KEY": "unused",
                    "NO_COLOR": "1",
                }
                for tree, path in trees.items()
            }
            for _ in range(args.runs):
                for tree, env in envs.items():
                    round_timed, round_phases = _round(script, work, home, env, tree)
                    for name, ms in round_timed.items():
                        timed[tree].setdefault(name, []).append(ms)
                    for name, ms in round_phases.items():
                        phases[tree].setdefault(name, []).append(ms)
            module_run = ["-m", "rho_entry", "-y", "list the files"]
            for _ in range(args.import_runs):
                for tree, env in envs.items():
                    ms = import_ms(module_run, cwd=work, env=env)
                    timed[tree].setdefault("imports", []).append(ms)
    finally:
        assert server.stdin is not None
        server.stdin.close()
        server.wait()
    print(f"load average {load_before:.1f} -> {os.getloadavg()[0]:.1f}; {args.runs} rounds")
    for tree in trees:
        _report(tree, timed[tree], phases[tree])


if __name__ == "__main__":
    main()
