"""Where a one-shot's main thread waits: ``rho-agent -y "list the files"``, phase by phase.

Each round runs the one-shot in a fresh process against ``bench/loopback_agent_server.py``
(``bench_oneshot.py``'s server and workspace), launched as ``python THIS --child -y ...``:
the child wraps the file store's ``create``, ``append`` and ``release`` (a measuring harness,
nothing else changes) and, at each of them and when ``main`` returns, reads the main
thread's CPU time and its run-queue wait from ``/proc/thread-self/schedstat``. Per phase:

- wall     the wall clock between the two marks
- cpu      the main thread's CPU time
- runq     the main thread runnable but waiting for a core (the machine's load)
- blocked  wall - cpu - runq: the main thread asleep (a worker thread's fsync, the server's
           answer, a lock); what a change to the run's order can cut

The phases: start-up (launch -> the store's ``create``) and, inside it, the interpreter (->
this file's ``_child``), the parse (-> ``parse_words`` returned: the parser's imports), the
run's imports (-> ``rho_entry.cli.app`` loaded), the settings (``prepare``), the store
(``_store``), the agent, session and executor (the CLI's ``open_session``: the wiring, the
bubblewrap probe's join) and the event loop up to the run's ``create``; then the session
directory (``create``), the run's start and first turn (``create`` -> the first
``llm_start``, where the store syncs ``run_start`` and the server is probed), the run (->
``run_end``), its end (``run_end``'s sync), the close (-> ``main`` returned) and the exit (->
the process reaped, by the parent's clock). The wrappers go in as each module is loaded
(``_AfterImport``), so the child imports nothing ahead of the one-shot's own order; the
main thread's counters start at the launch, so every phase but the exit has its columns.
``--against SRC`` times another tree's sources in the same rounds, alternating. Linux only
(schedstat).

Usage: python bench/bench_oneshot_waits.py [--runs 15] [--against OTHER/src]
"""

from __future__ import annotations

import argparse
import importlib.machinery
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

# (name, first mark, last mark); "launch" and "reaped" are the parent's clock
PHASES = (
    ("start-up", "launch", "create>"),
    ("  interpreter", "launch", "child"),
    ("  parse (the parser's imports)", "child", "parsed"),
    ("  the run's imports", "parsed", "imported"),
    ("  settings", "imported", "settings"),
    ("  store", "settings", "store"),
    ("  agent, session, executor", "store", "session"),
    ("  loop, run's start", "session", "create>"),
    ("session directory (create)", "create>", "create<"),
    ("run start + first turn", "create>", "append> llm_start"),
    ("  of which run_start synced", "create>", "append< run_start"),
    ("model calls and tool", "append> llm_start", "append> run_end"),
    ("run_end synced", "append> run_end", "append< run_end"),
    ("close", "append< run_end", "main returned"),
    ("exit", "main returned", "reaped"),
    ("whole process", "launch", "reaped"),
)
Mark = tuple[float, float, float]  # (ms since launch, main thread CPU ms, run-queue ms)


class _AfterImport:
    """A ``sys.meta_path`` finder that calls ``then[name](module)`` once module ``name`` has run:
    the marks and wrappers go in without importing anything ahead of the one-shot's own order."""

    def __init__(self, then: dict[str, Callable[[Any], None]]) -> None:
        self.then = then

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if name not in self.then:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        run, then = spec.loader.exec_module, self.then.pop(name)

        def exec_module(module: Any) -> None:
            run(module)
            then(module)

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def _child(argv: list[str]) -> int:
    """Run ``rho-agent ARGV`` in this process with the marks; they go to ``$WAITS_OUT``."""
    launched = float(os.environ["WAITS_T0"])
    marks: list[tuple[str, float, float, float]] = []

    def mark(what: str) -> None:
        if threading.current_thread() is threading.main_thread():
            with open("/proc/thread-self/schedstat") as stat:
                run, delay, _ = stat.read().split()
            marks.append((what, (time.time() - launched) * 1000, int(run) / 1e6, int(delay) / 1e6))

    mark("child")

    def after(function: Callable[..., Any], what: str) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            result = function(*args, **kwargs)
            mark(what)
            return result

        return timed

    def after_async(function: Callable[..., Any], what: str) -> Callable[..., Any]:
        async def timed(*args: Any, **kwargs: Any) -> Any:
            result = await function(*args, **kwargs)
            mark(what)
            return result

        return timed

    def parser(module: Any) -> None:
        module.parse_words = after(module.parse_words, "parsed")

    def app(module: Any) -> None:
        mark("imported")
        module.prepare = after(module.prepare, "settings")
        module._store = after(module._store, "store")
        module.open_session = after_async(module.open_session, "session")

    def files(module: Any) -> None:
        for name in ("create", "append", "release"):
            setattr(module.FileSessionStore, name, wrapped(module.FileSessionStore, name))

    def wrapped(store_class: Any, name: str) -> Callable[..., Any]:
        method = getattr(store_class, name)

        async def timed(store: Any, *args: Any) -> Any:
            kinds = " " + ",".join(e.kind for e in args[1]) if name == "append" else ""
            mark(f"{name}>{kinds}")
            result = await method(store, *args)
            mark(f"{name}<{kinds}")
            return result

        return timed

    sys.meta_path.insert(
        0,
        _AfterImport(
            {
                "rho_entry.cli.parser": parser,
                "rho_entry.cli.app": app,
                "rho_adapters.store.files": files,
            }
        ),
    )
    from rho_entry.cli.main import main

    sys.argv = ["rho-agent", *argv]
    code = main()
    mark("main returned")
    Path(os.environ["WAITS_OUT"]).write_text(json.dumps(marks))
    return code


def _one_shot(env: dict[str, str], work: Path, out: Path) -> dict[str, Mark]:
    """One instrumented one-shot: its marks by name (the first of each), launch and reap."""
    started = time.time()
    argv = [sys.executable, __file__, "--child", "-y", "list the files"]
    child_env = {**env, "WAITS_T0": repr(started), "WAITS_OUT": str(out)}
    code = subprocess.call(
        argv, cwd=work, env=child_env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    reaped = (time.time() - started) * 1000
    if code != 0:
        raise SystemExit(f"the one-shot exited {code}")
    marks: dict[str, Mark] = {"launch": (0.0, 0.0, 0.0)}
    for what, at, cpu, delay in json.loads(out.read_text()):
        marks.setdefault(what, (at, cpu, delay))
    marks["reaped"] = (reaped, float("nan"), float("nan"))
    return marks


def _report(label: str, rounds: list[dict[str, Mark]]) -> None:
    import statistics  # here: the child (this file with --child) loads no more than a one-shot

    print(f"== {label}")
    print(f"{'phase (medians, ms)':30} {'wall':>7} {'cpu':>7} {'runq':>7} {'blocked':>8}")
    for name, first, last in PHASES:
        walls = [r[last][0] - r[first][0] for r in rounds]
        row = f"{name:30} {statistics.median(walls):7.1f}"
        if last != "reaped":  # the main thread's marks (its counters start at the launch)
            cpu = [r[last][1] - r[first][1] for r in rounds]
            runq = [r[last][2] - r[first][2] for r in rounds]
            blocked = [w - c - q for w, c, q in zip(walls, cpu, runq, strict=True)]
            row += f" {statistics.median(cpu):7.1f} {statistics.median(runq):7.1f}"
            row += f" {statistics.median(blocked):8.1f}"
        print(row)


def main(argv: Sequence[str] | None = None) -> None:
    """Run the rounds (alternating trees with ``--against``) and print each tree's table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--against", metavar="SRC", help="another tree's src/, alternating")
    args = parser.parse_args(argv)
    trees = {"this tree": os.environ.get("PYTHONPATH", "")}
    if args.against:
        trees[f"against {args.against}"] = args.against
    import tempfile

    # imported here, not at the top: the child (this file with --child) loads no more than
    # a one-shot does (the loopback server's module imports rho_adapters.fakes)
    from loopback_agent_server import start_server

    server, base_url = start_server()
    load_before = os.getloadavg()[0]
    rounds: dict[str, list[dict[str, Mark]]] = {tree: [] for tree in trees}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp) / "work"
            work.mkdir()
            for i in range(20):
                (work / f"file{i:02}.txt").write_text(f"file {i}\n")
            base = {
                "PATH": os.environ.get("PATH", ""),
                "HOME": tmp,
                "RHO_AGENT_HOME": str(Path(tmp) / "home"),
                "RHO_AGENT_BASE_URL": base_url,
                "RHO_AGENT_MODEL": "bench",
                "OPENAI_API_KEY": "unused",
                "NO_COLOR": "1",
            }
            for _ in range(args.runs):
                for tree, path in trees.items():
                    env = {**base, "PYTHONPATH": path}
                    rounds[tree].append(_one_shot(env, work, Path(tmp) / "marks.json"))
    finally:
        assert server.stdin is not None
        server.stdin.close()
        server.wait()
    print(f"load average {load_before:.1f} -> {os.getloadavg()[0]:.1f}; {args.runs} rounds")
    for tree, done in rounds.items():
        _report(tree, done)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        sys.exit(_child(sys.argv[2:]))
    main()
