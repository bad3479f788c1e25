"""Every benchmark in ``bench/`` runs at its smallest size and prints its table.

The figures of docs/benchmarks.md come from these scripts, and nothing else runs them: one
that stopped running (its scripted model repeated a command the stuck-loop check now ends)
was found by chance. Each test here runs one script in this process, through its own
``main([...])`` at the smallest sizes its options allow: the smoke then costs the scripts'
work, not a fresh interpreter and its imports apiece (what a script starts itself, servers,
workers, the CLI, it still starts). A test checks the script's table, its header or key lines
with the figures' shape, not only that it returned. The database benchmarks use the test
process's one PostgreSQL (``db_servers.shared_postgres``); ``bench_db_million_rows`` runs in
``tests/db/test_db_bench.py``, beside the MariaDB fixture it shares.
"""

from __future__ import annotations

import ast
import contextlib
import io
import os
import re
import resource
import subprocess
import sys
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "store"))
from pg_rig import pg_server_url, schema_url

ROOT = Path(__file__).resolve().parents[2]
__all__ = ["pg_server_url"]  # the fixture, for the PostgreSQL benchmarks

Main = Callable[[Sequence[str] | None], object]
MS = r"-?\d+\.\d+ ms"


def table(main: Main, *args: str) -> str:
    """What ``main(args)`` printed; it must return normally (None, or 0 as an exit code).

    Not ``capsys``: DBOS's log handler keeps the ``sys.stderr`` it first saw, and capsys
    closes its streams when its test ends, so the next DBOS start in this process would
    fail writing to it. Only stdout is taken, into a buffer that is never closed."""
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main(list(args)) in (None, 0)
    return printed.getvalue()


def lines_match(out: str, *patterns: str) -> None:
    """Each pattern matches a line of ``out`` from its start."""
    for pattern in patterns:
        assert re.search(f"^{pattern}", out, re.MULTILINE), f"no line {pattern!r} in:\n{out}"


def new_database(server_url: str) -> str:
    """A new, empty database on the server (DBOS keeps its tables in its own), its URL."""
    import psycopg

    name = f"bench_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return server_url.rsplit("/", 1)[0] + "/" + name


def test_every_script_has_a_smoke_test() -> None:
    """A new script in bench/ is run here (or in tests/db/test_db_bench.py) from the start."""
    scripts = {path.stem for path in (ROOT / "bench").glob("bench_*.py")}
    tested = set()
    for module in (Path(__file__), ROOT / "tests" / "db" / "test_db_bench.py"):
        tested |= set(re.findall(r"^\s+import (bench_\w+)$", module.read_text(), re.MULTILINE))
    assert scripts == tested


def test_the_loopback_server_imports_only_the_fakes_it_serves() -> None:
    """Ten benchmarks start ``bench/loopback_agent_server.py`` in a process of its own: it
    imports the loopback fake, not every fake's packages (httpx, the Anthropic and Daytona
    fakes: 0.37 s of CPU a start against 0.15 s when ``rho_adapters.fakes`` loaded them all)."""
    code = "import sys, loopback_agent_server; print(sorted(sys.modules))"
    path = os.pathsep.join(filter(None, [str(ROOT / "bench"), os.environ.get("PYTHONPATH")]))
    out = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "PYTHONPATH": path},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    loaded = set(ast.literal_eval(out))
    assert "rho_adapters.fakes.loopback" in loaded
    unused = ("httpx", "rho_adapters.fakes.anthropic_messages", "rho_adapters.fakes.daytona")
    assert loaded.isdisjoint(unused), sorted(loaded.intersection(unused))


def test_bench_cli() -> None:
    import bench_cli

    out = table(bench_cli.main, "--runs", "1")
    lines_match(
        out,
        r"command +median ms +vs floor +peak MiB +exit",
        r"python -c pass .* \[0\]$",
        r"rho-agent --help .* \[0\]$",
        r'rho-agent --model demo "\.\.\." .* \[0\]$',
        r"heavy modules imported by --help: +none",
        r"goals: --help within 60 ms of the floor",
    )
    # Each peak is the child's own, not this big pytest worker's (wait4's ru_maxrss counts
    # what a child shared with its launcher before its exec: every row read the worker's
    # size): `python -c pass` maps about 9 MiB, the worker far more.
    floor = re.search(r"^python -c pass +\S+ +\S+ +(\S+)", out, re.MULTILINE)
    launcher = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    assert floor is not None
    assert float(floor.group(1)) < min(50.0, launcher / 2), (floor.group(1), launcher)


def test_bench_config_yaml() -> None:
    import bench_config_yaml

    out = table(bench_config_yaml.main, "--configs", "3", "--rounds", "1", "--imports", "1")
    lines_match(
        out,
        r"load average \d+\.\d -> \d+\.\d; 3 configs",
        r"config\.yaml by yaml_emit\.emit +\d+\.\d µs CPU",
        r"config\.yaml by CSafeDumper +\d+\.\d µs CPU",
        r"import yaml +\d+\.\d ms CPU",
        r"import rho_adapters\.store\.yaml_emit +\d+\.\d ms CPU",
    )


def test_bench_durable(pg_server_url: str) -> None:
    import bench_durable

    database = new_database(pg_server_url)
    args = ["--runs", "1", "--rounds", "1", "--warm-up", "0", "--steps", "2"]
    out = table(bench_durable.main, *args, "--postgres", database)
    for name in ("SQLite", "PostgreSQL"):
        lines_match(out, rf"{name}: plain {MS}/run, durable {MS}/run .* one step checkpoint")


def test_bench_durable_floor(pg_server_url: str) -> None:
    import bench_durable_floor

    database = new_database(pg_server_url)
    args = ["--rounds", "1", "--commits", "2", "--workflows", "1", "--steps", "2"]
    out = table(bench_durable_floor.main, *args, "--postgres", database)
    for name in ("SQLite", "PostgreSQL"):
        lines_match(out, rf"{name}: bare INSERT\+COMMIT \d+\.\d+ ms; DBOS empty step {MS} wall")


def test_bench_excel() -> None:
    import bench_excel

    out = table(bench_excel.main, "--runs", "1", "--strings", "1000", "--rows", "10")
    lines_match(
        out,
        r"load average \d+\.\d -> \d+\.\d; 1 rounds",
        r"\| 1,000 shared strings, 10 x 20 cells \(CPU, median \(min-max\)\) \| this tree \|",
        r"\| openpyxl\.load_workbook \+ first row \| \d+ ms \(\d+-\d+\) \|",
        r"\| read_excel's reader: sheets \+ 5 rows \| \d+ ms \(\d+-\d+\) \|",
        r"\| the next call, same reader: sheets \+ 5 rows \| \d+ ms \(\d+-\d+\) \|",
    )


def test_bench_first_turn() -> None:
    import bench_first_turn

    out = table(bench_first_turn.main, "--runs", "1")
    lines_match(
        out,
        "== this tree",
        r"http stack +\d+\.\d ms",
        r"probe wall",
        r"anyio loaded +[01]\.0",
        r"collections gen 2",
    )


def test_bench_gc() -> None:
    import bench_gc

    out = table(bench_gc.main, "--sessions", "2", "--runs", "1", "--handles", "2")
    lines_match(
        out,
        r"objects in reference cycles per run: \d+\.\d",
        r"objects the collector tracks per kept finished handle: \d+\.\d",
        r"2 sessions \(memory\): \d+\.\d s, longest loop stall",
    )


def test_bench_value_methods() -> None:
    import bench_value_methods

    out = table(bench_value_methods.main, "--number", "10", "--repeat", "1")
    lines_match(
        out,
        r"value +method +ours ns +attrs ns +ratio",
        r"ToolCall +== +\d+ +\d+ +\d+\.\d\dx$",
        r"Budget +repr +\d+ +\d+ +\d+\.\d\dx$",
    )


def test_bench_grep(tmp_path: Path) -> None:
    import bench_grep

    out = table(bench_grep.main, "--files", "200", "--runs", "1", "--dir", str(tmp_path))
    # one file in a hundred holds the needle: 2 of 200
    lines_match(out, r"tool footer: \[2 matches\]", r"rg by hand: median", r"ratio tool/hand")


def test_bench_imports() -> None:
    import bench_imports

    out = table(bench_imports.main, "--runs", "1")
    lines_match(
        out,
        r"\| case \| wall \| over the floor \| CPU \| over the floor \|",
        rf"\| from rho_agent import Agent, AgentConfig, Session \| {MS} \| \+{MS}",
    )


def test_bench_model() -> None:
    import bench_model

    out = table(bench_model.main, "--runs", "1", "--warm-up", "0", "--megabytes", "0.1")
    lines_match(out, rf"agent run .*: median {MS}", r"ratio: \d+\.\d+x", r"SSE decode: ")


def test_bench_oneshot() -> None:
    import bench_oneshot

    out = table(bench_oneshot.main, "--runs", "1", "--import-runs", "1")
    lines_match(
        out,
        r"phase of the one-shot +median ms",
        r"model call 2 +\d+\.\d",
        r"imports \(-X importtime\) +\d+\.\d",
        r"one-shot +\d+\.\d .* x?",
    )


def test_bench_oneshot_waits() -> None:
    import bench_oneshot_waits

    out = table(bench_oneshot_waits.main, "--runs", "1")
    lines_match(
        out,
        r"phase \(medians, ms\) +wall +cpu +runq +blocked",
        r"run start \+ first turn +-?\d+\.\d +-?\d+\.\d +-?\d+\.\d +-?\d+\.\d",
        r"exit +\d+\.\d",
        r"whole process +\d+\.\d",
    )


def test_bench_overhead() -> None:
    import bench_overhead

    out = table(bench_overhead.main, "--runs", "2", "--warm-up", "0", "--long", "60")
    lines_match(
        out,
        rf" +50 deltas +ours +wall +{MS}",
        rf" +60 deltas +ours +cpu +{MS}",
        r"ours \(cpu\): added per run \(50 deltas\): ",
    )


def test_bench_pg_store(pg_server_url: str) -> None:
    import bench_pg_store

    args = ["--events", "14", "--resume-events", "50", "--sessions", "2"]
    out = table(bench_pg_store.main, *args, "--url", schema_url(pg_server_url))
    lines_match(
        out,
        r"append_7_postgres: \d+\.\d+",
        r"resume_postgres: \d+\.\d+",
        "export_equal: True",
        '  "completed": 2,',
    )


def test_bench_socket_reads() -> None:
    import bench_socket_reads

    out = table(bench_socket_reads.main, "--runs", "1", "--reads", "20")
    lines_match(out, r"protocol +\d+\.\d+ µs", r"streams +\d+\.\d+ µs", r"anyio +\d+\.\d+ µs")


def test_bench_pool() -> None:
    import bench_pool

    out = table(bench_pool.main, "--runs", "1", "--idle", "1")
    lines_match(out, r" +lean pool, 1 idle connections: +\d+ µs", r" httpcore pool, ")


def test_bench_resume() -> None:
    import bench_resume

    args = ["--sizes", "100", "--repeat", "1", "--appends", "10"]
    out = table(bench_resume.main, *args, "--rounds", "5", "--slow-rounds", "1")
    lines_match(
        out,
        r" +100 +\d+\.\d+ +\d+\.\d+ +\d+$",
        r" +file: +\d+\.\d us/event",
        r" +0ms +5 .*\(\d+ events\)",
        r" +20ms +1 .*\(\d+ events\)",
    )


def test_bench_run_phases() -> None:
    import bench_run_phases

    out = table(bench_run_phases.main, "--runs", "2", "--warm-up", "0")
    lines_match(out, r"new Session +\d+ µs", r"tool_start -> tool_end +\d+ µs", r"whole run")


def test_bench_server() -> None:
    import bench_server

    out = table(bench_server.main, "--sessions", "1")
    lines_match(out, " +completed: 1$", r" +first_event_p50_ms: \d+\.\d", " +server_rss_mib")


def test_bench_server_list() -> None:
    import bench_server_list

    out = table(bench_server_list.main, "5")
    lines_match(out, r"first: \d+ ms", r"poll: \d+ ms", r"poll, limit 100: \d+ ms")


def test_bench_sessions() -> None:
    import bench_sessions

    args = ["--runs", "1", "--warm-up", "0", "--sessions", "2", "--idle-seconds", "0.1"]
    out = table(bench_sessions.main, *args)
    lines_match(
        out,
        rf"new Session per run, LocalExecutor: {MS} = ",
        r"2 idle open file-backed sessions: \d+\.\d KiB RSS each",
        "2 sessions at once, in memory: 2 completed",
        "2 sessions at once, file-backed: 2 completed",
        r"  the collector, file-backed: longest pause \d+ ms, \d+ full passes",
        r"  two adjacent turns at most, file-backed \(.*\): wall \d+\.\d, CPU \d+\.\d",
    )
    # a bisect's measure: the file-backed run alone, no idle sessions, no in-memory run
    only = table(bench_sessions.main, "--runs", "0", "--sessions", "1", "--file-backed-only")
    lines_match(only, r"1 sessions at once, file-backed: 1 completed in \d+\.\d s; threads")
    assert "in memory" not in only
    assert "idle" not in only


def test_bench_stalls() -> None:
    import bench_stalls

    out = table(bench_stalls.main, "--sessions", "2", "--no-freeze")
    lines_match(
        out,
        r"2 sessions \(memory\): \d+\.\d s, longest loop stall \d+ ms",
        r"  turns of the loop: \d+; CPU per turn p50 \d+\.\d\d, p99 \d+\.\d",
        r"  a turn of \d+\.\d ms CPU \(\d+\.\d ms wall\): \d+ callbacks",
        r"    held \d+\.\d ms: \d+ x \S+ -> ",
        r"  the steps that cost most CPU",
        r"    +\d+ ms, +\d+ x +\d+ us  \S+ -> ",
    )


def test_bench_secrets() -> None:
    import bench_secrets

    out = table(bench_secrets.main, "--runs", "1", "--repeats", "1")
    lines_match(
        out,
        r"load average \d+\.\d -> \d+\.\d; 1 rounds",
        r"\| import rho_domain\.secrets \| \d+\.\d\d ms \(",
        r"\| first refusal \| \d+\.\d\d ms \(",
        r"\| judge, per ordinary path \(12\) \| \d+\.\d\d µs \(",
        r"\| judge, per secret path \(8\) \| \d+\.\d\d µs \(",
    )


def test_bench_sql_check() -> None:
    import bench_sql_check

    out = table(bench_sql_check.main, "--sizes", "10", "--runs", "1")
    lines_match(out, "case +N +KB +tokens +ms", r"calls +10 ", r"when +10 ", r"in-list +10 ")


def test_bench_store_session() -> None:
    import os

    import bench_store_session

    fsync = os.fsync
    out = table(bench_store_session.main, "--sessions", "2")
    lines_match(out, r"per session: CPU \d+\.\d+ ms, wall \d+\.\d ms; fsyncs: meta.json \d")
    assert os.fsync is fsync  # counted while it ran, given back after


def test_bench_tool_spawn() -> None:
    import bench_tool_spawn

    out = table(bench_tool_spawn.main, "--runs", "1")
    lines_match(out, rf"unrestricted `echo hi`: median {MS}", rf"restricted echo hi: median {MS}")
    out = table(bench_tool_spawn.main, "--runs", "1", "--guard")
    lines_match(out, rf"guarded /bin/true: CPU {MS}")
