"""Bytecode for the test run when the environment turns it off.

With ``PYTHONDONTWRITEBYTECODE=1`` (as in sessions that keep checkouts free of
``__pycache__``) pytest cannot keep the assert-rewritten test modules, so every worker of
every run rewrites about 230 modules again (about half of each worker's 9 s of collection),
and every ``rho-agent`` or helper process a test starts compiles the sources again (0.4 s of
CPU for the CLI's imports against 0.2 s from bytecode). The run then keeps bytecode in
pytest's own cache directory (``.pytest_cache/d/pycache``, ignored by git) instead of beside
the sources: ``sys.pycache_prefix`` here, ``PYTHONPYCACHEPREFIX`` for the processes tests
start. The first run fills it; ``-p no:cacheprovider`` (no cache directory) turns this off.
"""

from __future__ import annotations

import contextlib
import fcntl
import gc
import importlib.util
import os
import re
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

pytest_plugins = (  # modules of tests/
    "hung_watchdog",
    "collection_imports",
    "rewritten_tests",
    "asyncio_items",
)


def pytest_runtest_setup(item: pytest.Item) -> None:
    # Each test starts as a new process would: without what the shared client pool remembers
    # about servers. A loopback server bound to a port an earlier test's server had would
    # otherwise be taken for that server for REMEMBER_SECONDS, and never probed.
    pool = sys.modules.get("rho_adapters.model.pool")
    if pool is not None:
        pool.SHARED_POOL.forget()


def hypothesis_profiles() -> None:
    """Hypothesis settings for every property in the suite, loaded before any test module.

    The default profile ("rho") draws few, fixed examples, so CI is deterministic and the
    properties run in seconds. ``HYPOTHESIS_PROFILE=deep`` draws many random ones, for a
    search after a change to the rules; ``mutation`` fewer, for scripts/mutation.sh (see
    docs/testing.md). No profile judges time: a deadline or the "input generation is slow"
    health check fails a correct test on a loaded machine (one draw read 8.7 s at load 25).
    """
    from hypothesis import HealthCheck, settings

    untimed: dict[str, Any] = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}
    fixed: dict[str, Any] = {"derandomize": True, "database": None}
    settings.register_profile("rho", max_examples=100, print_blob=True, **fixed, **untimed)
    settings.register_profile("deep", max_examples=3000, database=None, **untimed)
    # scripts/mutation.sh: every mutant reruns the properties, so fewer (still fixed) examples.
    settings.register_profile("mutation", max_examples=25, **fixed, **untimed)
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "rho"))


def pytest_configure(config: pytest.Config) -> None:
    hypothesis_profiles()
    if not hasattr(config, "workerinput"):  # before any worker starts
        unicode_tables(machine_cache_dir(), keep=False)
    if hasattr(config, "workerinput") and config.option.basetemp:
        # an xdist worker: its basetemp is in the run's, where the workers share the program
        # zygotes (tests/cli/program_zygote.py) instead of each starting its own
        run = os.path.dirname(config.option.basetemp)
        os.environ["RHO_TEST_ZYGOTES"] = os.path.join(run, "zygotes")
        config.pluginmanager.register(FirstCollectsAlone(run), "rho-first-collects-alone")
    keep_bytecode(config)
    if not hasattr(config, "workerinput"):  # where the bytecode goes is known now
        rewritten(config).seed(machine_cache_dir(), config, Path(__file__).parent)


def rewritten(config: pytest.Config) -> Any:
    """``tests/rewritten_tests.py`` as pytest loaded it (a second import would be another
    module, and mypy would not find it: tests/ is no package base)."""
    return config.pluginmanager.get_plugin("rewritten_tests")


def keep_bytecode(config: pytest.Config) -> None:
    """Under ``PYTHONDONTWRITEBYTECODE``: bytecode in the pycache prefix, for this process and
    (the environment) those its tests start. Not for xdist workers' start: Python reads only
    the prefix then, so each recompiled pytest, its plugins and the standard library into a
    fresh clone's (2 s of CPU), which their ``__pycache__`` has; a worker sets it here."""
    cache = getattr(config, "cache", None)
    if cache is None or not sys.dont_write_bytecode or sys.pycache_prefix:
        return
    prefix = str(cache.mkdir("pycache"))
    sys.pycache_prefix = prefix
    sys.dont_write_bytecode = False
    if not hasattr(config, "workerinput") and config.getoption("numprocesses", None):
        return
    os.environ["PYTHONPYCACHEPREFIX"] = prefix
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)


def bytecode_cold() -> bool:
    """Whether this checkout's bytecode is still to be written: ``rho_domain/errors.py``,
    which every run's collection imports, has none (as in a fresh clone, or a new pycache
    prefix). Never true where no bytecode is written (nothing would be gained by waiting)."""
    spec = importlib.util.find_spec("rho_domain")
    if sys.dont_write_bytecode or spec is None or not spec.submodule_search_locations:
        return False
    source = os.path.join(spec.submodule_search_locations[0], "errors.py")
    return not os.path.exists(importlib.util.cache_from_source(source))


class FirstCollectsAlone:
    """On a cold bytecode cache, one xdist worker collects first and the others after it.

    Bytecode is written by whichever process compiles a module first. The workers start
    together and import the same ~1,200 modules in the same order (the tests, rewritten for
    their asserts; ``src``; under ``PYTHONDONTWRITEBYTECODE`` the libraries too, into the
    pycache prefix above), so on a fresh clone each of them compiled all of them: 7-8 s of
    CPU a worker, where a warm collection costs 3. The first worker to take the run's
    ``collect.lock`` keeps it while it collects if the bytecode is cold (``bytecode_cold``);
    each other worker takes it in turn, finds the bytecode written (or the lock's file
    written by the first), lets it go and collects at once. With the bytecode warm no worker
    waits for another. A worker that dies while
    it holds the lock releases it (the kernel closes its file). The test modules' rewritten
    code comes from the machine's test cache where it has them (``tests/rewritten_tests.py``),
    so a fresh clone's first worker mostly compiles ``src`` and the libraries."""

    def __init__(self, run: str) -> None:
        self.lock = os.path.join(run, "collect.lock")

    @pytest.hookimpl(wrapper=True)
    def pytest_collection(self, session: pytest.Session) -> Any:
        del session
        lock = os.open(self.lock, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX)
            # a worker collected alone already (a run whose tests never import errors.py
            # would find it cold again): collect at once
            alone = os.fstat(lock).st_size == 0 and bytecode_cold()
            if not alone:
                fcntl.flock(lock, fcntl.LOCK_UN)
            result = yield
            if alone:
                os.write(lock, b"collected\n")
            return result
        finally:
            os.close(lock)


def machine_cache_dir() -> Path | None:
    """A directory every checkout on this machine shares for what tests build at a cost and
    that depends only on what they name: ``$RHO_TEST_CACHE``, else ``rho-agent-tests`` under
    ``$XDG_CACHE_HOME`` (``~/.cache``); None when ``RHO_TEST_CACHE`` is set empty or the
    directory cannot be made. A fresh clone's first run otherwise pays what the last run
    already built (mypy's cache, the spreadsheet workbooks, the database servers' templates,
    the architecture findings). Each entry is named by a digest of its inputs or checked by
    its reader, and is written beside its name and renamed or finished under a lock, since
    other checkouts' runs read it at the same time."""
    chosen = os.environ.get("RHO_TEST_CACHE")
    if chosen == "":
        return None
    home = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    shared = Path(chosen or os.path.join(home, "rho-agent-tests"))
    try:
        shared.mkdir(parents=True, exist_ok=True)
    except OSError:  # a read-only or missing home: each run builds its own, as without it
        return None
    return shared


machine_cache = pytest.fixture(machine_cache_dir, scope="session", name="machine_cache")


def unicode_tables(shared: Path | None, *, keep: bool) -> None:
    """Hypothesis builds its Unicode tables once per checkout, into ``.hypothesis`` (1.9 s of
    CPU for ``st.text()``'s UTF-8 one), so each xdist worker of a fresh clone built them: they
    are copied from ``shared`` before the workers start, and (``keep``) into it after a run
    that built them. A table Hypothesis cannot read, it builds again. So are the constants
    it reads from ``src``'s modules at collection (``_get_local_constants``, every worker: 5.0
    s of CPU where none is kept, 0.7 s with them), each file named by its module's hash."""
    try:
        import hypothesis
        from hypothesis.configuration import storage_directory
    except ImportError:
        return
    if shared is None:
        return
    kept = shared / f"hypothesis-{hypothesis.__version__}"
    for here, there, pattern in (
        (storage_directory("unicode_data", intent_to_write=False).path, kept, "*/*.json.gz"),
        (storage_directory("constants", intent_to_write=False).path, kept / "constants", "[!.]*"),
    ):
        _copy_new(*((here, there) if keep else (there, here)), pattern)


def _copy_new(source: Path, target: Path, pattern: str) -> None:
    """The files of ``source`` matching ``pattern`` that ``target`` lacks, copied there."""
    for table in source.glob(pattern):  # <Unicode version>/<table>, or <module hash>
        made = target / table.relative_to(source)
        if made.exists():
            continue
        partial = made.with_name(f".{made.name}.{os.getpid()}")
        with contextlib.suppress(OSError):  # a cache it cannot write: as without one
            made.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(table, partial)
            os.replace(partial, made)  # renamed whole: another run may be reading it


# Collection builds every test's item and fixture closure (10,700 of them, in each xdist
# worker) and keeps nearly all of it, so the collector's full passes over that growing heap
# (six, at 0.07 s each) find little to free. While the suite collects, only the young
# generations are collected (what dies young still goes at once); then one full pass frees
# what is left over and the rest is frozen: it lives as long as the run, so no later pass
# walks it again. The tests run with the collector's usual thresholds.
@pytest.hookimpl(wrapper=True)
def pytest_collection(session: pytest.Session) -> Any:
    thresholds = gc.get_threshold()
    gc.set_threshold(thresholds[0], thresholds[1], 1 << 30)  # no full pass while collecting
    try:
        return (yield)
    finally:
        gc.set_threshold(*thresholds)
        if gc.isenabled():
            gc.collect()
            gc.freeze()


# The tests that take longest (wall seconds in the run of 2026-11-26 22:23 UTC, main at
# 054e4be, caches warm, load 2-6, `--durations=40`; two added and one dropped after the run of
# 2026-11-27 07:00, 1b4c4af, load 2.4-7.8; three dropped after the waits14 round's cuts, out of
# the top 40 of its run of 09:45, load 0.4-11.7), longest first. A run ends when its last
# worker does, so a long test that starts late is the run's tail: these start first, one at
# the head of each worker's first batch, and the rest keep their order. A name here that no
# longer matches is ignored (the test only loses its head start); refresh the list from
# `--durations=40`.
def _docs_block(document: str, anchor: str, lang: str) -> str:
    """The docs test of ``document``'s first ``lang`` block after the line holding ``anchor``:
    its id names the fence's line, which moves with every edit above it (README.md:618, 744,
    760, 762 and 766 in two rounds), the anchor's text does not. A block not found gives a
    name test_scheduling's existence check refuses."""
    lines = (Path(__file__).parents[1] / document).read_text(encoding="utf-8").splitlines()
    start = next((n for n, line in enumerate(lines) if anchor in line), len(lines))
    opens = re.compile(rf"(`{{3,}}|~{{3,}})\s*{lang}\b")
    fence = next((n for n in range(start, len(lines)) if opens.match(lines[n])), None)
    line = 0 if fence is None else fence + 1
    return f"docs/test_docs.py::test_block[{document}:{line}-{lang}]"


LONG_TESTS = (
    "server/test_server_durable.py::test_a_run_created_on_a_killed_server_completes_on_the",
    "durable/test_durable_postgres.py::test_two_workers_200_runs_one_killed_all_complete",
    # 1 s of CPU with mypy's cache warm or seeded (machine_cache); 28 s cold, 60-260 s of wall
    "test_quality.py::test_mypy_strict",
    "durable/test_durable_eval.py::test_a_killed_worker_loses_no_question_and_grades_none",
    "tools/test_spreadsheet_bounds.py::test_allowed_shared_strings_cost_a_measured_bound",
    "server/test_server_shared_store.py::test_two_servers_share_sessions_approvals_cancels",
    "tools/test_tool_resources.py::test_the_worker_s_memory_is_bounded",
    "durable/test_durable_sqlite.py::test_a_read_the_worker_died_in_is_run_again_and_no_model",
    # 4.5-8.6 s of CPU a policy, 16-63 s of wall (round 20's and suite21's profiles, load 8-25)
    "properties/test_properties_secrets.py::test_the_policy_at_every_patterns_edges",
    "server/test_server_dashboard_list.py::test_no_overflow_with_0_1_and_50_sessions",
    "tools/test_shell_oracle.py::test_shell_allowed_commands_change_nothing",
    # the MCP SDK's server started cold by the library's example (1.8 s of CPU to import)
    "docs/test_docs.py::test_block[docs/mcp.md:97-python]",
    "store/test_pgstore.py::test_a_host_killed_mid_tool_shows_stale_in_bound_and_resumes",
    "mcp_tools/test_mcp_session.py::test_a_server_that_dies_mid_call_is_started_again",
    "db/test_db_byte_budget.py::test_two_huge_postgres_values_arrive_cut_and_cost_little",
    "tools/test_shell_languages.py::test_check_jq_refuses_every_program_that_reaches_a_module",
    "bench/test_bench_smoke.py::test_bench_pg_store",
    "bench/test_bench_smoke.py::test_bench_oneshot",
    "bench/test_bench_smoke.py::test_bench_overhead",
    _docs_block("README.md", "it is a regression test in three lines", "python"),
    "server/test_server_serve.py::test_a_pending_approval_survives_a_restart",
)


@pytest.hookimpl(optionalhook=True)  # an xdist hook: the controller tells its workers
def pytest_configure_node(node: Any) -> None:
    """Each worker's ``--dist`` is "no" (xdist resets it): pass the run's on."""
    node.workerinput["rho_dist"] = node.config.getoption("dist")


@pytest.hookimpl(trylast=True)  # after deselection (-k, -m), so the batches below are exact
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under ``-n N --dist worksteal`` (``scripts/test.sh``): ``long_first``'s order. Every
    worker computes the same order from the same collection, as xdist requires. Other runs
    keep the collection's order."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0"))
    worker_input = getattr(config, "workerinput", {})
    if workers >= 2 and worker_input.get("rho_dist") == "worksteal":
        order = long_first([item.nodeid for item in items], workers)
        items[:] = [items[i] for i in order]


def long_first(nodeids: Sequence[str], workers: int) -> list[int]:
    """The collection's indexes in the order that starts the known-long tests (``LONG_TESTS``,
    longest first) at once: xdist's worksteal gives worker i the next ``len(rest) // (N - i)``
    tests of the collection, in order, and later moves tests only from the tails of busy
    workers' queues, so each long test goes to the head of one of those N first batches (the
    longest at the heads, the next ones behind them), and the rest keep their order."""
    rank = {prefix: i for i, prefix in enumerate(LONG_TESTS)}
    long: list[tuple[int, int]] = []
    rest: list[int] = []
    for index, nodeid in enumerate(nodeids):
        name = nodeid.removeprefix("tests/")
        found = next((rank[p] for p in LONG_TESTS if name.startswith(p)), None)
        if found is None:
            rest.append(index)
        else:
            long.append((found, index))
    long.sort()
    heads: list[list[int]] = [[] for _ in range(workers)]
    for i, (_, index) in enumerate(long):
        heads[i % workers].append(index)
    ordered: list[int] = []
    remaining = len(nodeids)
    for i in range(workers):
        size = remaining // (workers - i)  # what xdist's first round gives worker i
        remaining -= size
        fill = max(0, size - len(heads[i]))
        ordered += heads[i] + rest[:fill]
        del rest[:fill]
    return ordered + rest


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    """The program zygotes (``tests/cli/program_zygote.py``) end with the session, not at the
    interpreter's exit: what their programs used then counts in the session's CPU, as when
    each program was a process the test reaped."""
    zygotes = sys.modules.get("program_zygote")
    if zygotes is not None:
        zygotes.close_all()
    if not hasattr(session.config, "workerinput"):
        unicode_tables(machine_cache_dir(), keep=True)
        rewritten(session.config).keep(machine_cache_dir(), session.config, Path(__file__).parent)
