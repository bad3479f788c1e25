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
``--help`` and ``from rho_agent import Agent, AgentConfig, Session`` are timed in the same
alternation. Figures are medians with the spread (min-max); the load average is printed.

Usage: python bench/bench_oneshot.py [--runs 15]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_sessions import start_server

PHASES = ("start-up", "run start", "first turn", "model call 1", "tool", "model call 2")
PHASES += ("end of run", "exit", "whole process")


def _launch(argv: list[str], *, cwd: Path, env: dict[str, str]) -> tuple[float, float, int]:
    """(launch time, end time, exit code) of one process, by the wall clock."""
    started = time.time()
    code = subprocess.call(
        argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    return started, time.time(), code


def _phases(session: Path, started: float, ended: float) -> dict[str, float]:
    """Milliseconds per phase of one one-shot, from its session directory."""
    meta = json.loads((session / "meta.json").read_text())
    events = [json.loads(line) for line in (session / "trace.jsonl").read_text().splitlines()]
    at = {}
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


def main() -> None:
    """Run the rounds and print the timeline."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    runs = parser.parse_args().runs
    script = shutil.which("rho-agent") or str(Path(sys.executable).with_name("rho-agent"))
    server, base_url = start_server()
    load_before = os.getloadavg()[0]
    try:
        with tempfile.TemporaryDirectory() as tmp:
            work, home = Path(tmp) / "work", Path(tmp) / "home"
            work.mkdir()
            for i in range(20):
                (work / f"file{i:02}.txt").write_text(f"file {i}\n")
            env = {
                "PATH": os.environ.get("PATH", ""),
                "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
                "HOME": tmp,
                "RHO_AGENT_HOME": str(home),
                "RHO_AGENT_BASE_URL": base_url,
                "RHO_AGENT_MODEL": "bench",
                "OPENAI_API_KEY": "unused",
                "NO_COLOR": "1",
            }
            one_shot = [script, "-y", "list the files"]
            floor = [sys.executable, "-c", "pass"]
            facade = [sys.executable, "-c", "from rho_agent import Agent, AgentConfig, Session"]
            timed: dict[str, list[float]] = {"floor": [], "--help": [], "facade import": []}
            phases: dict[str, list[float]] = {name: [] for name in PHASES}
            for _ in range(runs):
                for name, argv in (("floor", floor), ("--help", [script, "--help"])):
                    started, ended, _ = _launch(argv, cwd=work, env=env)
                    timed[name].append((ended - started) * 1000)
                started, ended, _ = _launch(facade, cwd=work, env=env)
                timed["facade import"].append((ended - started) * 1000)
                before = set((home / "sessions").glob("*")) if home.exists() else set()
                started, ended, code = _launch(one_shot, cwd=work, env=env)
                if code != 0:
                    raise SystemExit(f"the one-shot exited {code}")
                (session,) = set((home / "sessions").glob("*")) - before
                for name, ms in _phases(session, started, ended).items():
                    phases[name].append(ms)
            module_run = ["-m", "rho_entry", *one_shot[1:]]
            imports = [import_ms(module_run, cwd=work, env=env) for _ in range(5)]
    finally:
        server.stdin.close()  # type: ignore[union-attr]
        server.wait()
    floor_ms = statistics.median(timed["floor"])
    print(f"load average {load_before:.1f} -> {os.getloadavg()[0]:.1f}; {runs} rounds")
    print(f"{'phase of the one-shot':24} {'median ms':>9}  (min-max)")
    for name, samples in phases.items():
        print(f"{name:24} {_figure(samples)}")
    whole = statistics.median(phases["whole process"])
    print(f"{'imports (-X importtime)':24} {_figure(imports)}  (5 runs; also in start-up)")
    print()
    print(f"{'process':24} {'median ms':>9}  (min-max)   over the floor   x floor")
    for name, samples in timed.items():
        over = statistics.median(samples) - floor_ms
        ratio = statistics.median(samples) / floor_ms
        print(f"{name:24} {_figure(samples)}   {over:+8.1f} ms   {ratio:5.2f}x")
    over = whole - floor_ms
    print(f"{'one-shot':24} {_figure(phases['whole process'])}   {over:+8.1f} ms", end="")
    print(f"   {whole / floor_ms:5.2f}x")


if __name__ == "__main__":
    main()
