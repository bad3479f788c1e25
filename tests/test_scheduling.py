"""The suite's order under ``-n N --dist worksteal`` (``tests/conftest.py``, ``long_first``):
each known-long test starts at once, at the head of one worker's first batch, as xdist's own
work-stealing scheduler hands the batches out. And the workers' start: on a cold bytecode
cache one collects alone first (``FirstCollectsAlone``); Hypothesis's Unicode tables come
from the machine's test cache (``unicode_tables``)."""

from __future__ import annotations

import fcntl
import os
import py_compile
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from xdist.scheduler.worksteal import WorkStealingScheduling  # type: ignore[import-untyped]

from rho_domain import errors


def _conftest(config: pytest.Config) -> Any:
    """The root conftest, as pytest loaded it (a second import would be another module)."""
    path = str(Path(__file__).with_name("conftest.py"))
    return next(p for p in config.pluginmanager.get_plugins() if getattr(p, "__file__", "") == path)


class _Config:
    def __init__(self, workers: int) -> None:
        self.workers = workers

    def getvalue(self, name: str) -> Any:
        return [f"{self.workers}*popen"] if name == "tx" else None


class _Node:
    """A worker as the scheduler sees it: what it was sent, in order."""

    def __init__(self, name: str) -> None:
        self.gateway = type("Gateway", (), {"id": name})()
        self.shutting_down = False
        self.sent: list[int] = []

    def send_runtest_some(self, indices: list[int]) -> None:
        self.sent += indices


def _first_batches(collection: list[str], workers: int) -> list[list[str]]:
    """What xdist's work-stealing scheduler sends each worker first, for ``collection``."""
    scheduler = WorkStealingScheduling(_Config(workers))
    nodes = [_Node(f"gw{i}") for i in range(workers)]
    for node in nodes:
        scheduler.add_node(node)
    for node in nodes:
        scheduler.add_node_collection(node, collection)
    scheduler.schedule()
    return [[collection[i] for i in node.sent] for node in nodes]


@pytest.mark.parametrize(("workers", "size"), [(4, 10_000), (4, 1_003), (3, 500), (2, 41)])
def test_every_worker_starts_with_a_long_test_and_all_long_ones_come_first(
    request: pytest.FixtureRequest, workers: int, size: int
) -> None:
    conftest = _conftest(request.config)
    long_names = [f"tests/{prefix}[case]" for prefix in conftest.LONG_TESTS]
    # As collected: the long tests spread through the files, most of them near the end.
    collection = [f"tests/a/test_{i:05d}.py::test_it" for i in range(size - len(long_names))]
    for i, name in enumerate(long_names):
        collection.insert(len(collection) * (i + 2) // (len(long_names) + 2), name)
    order = conftest.long_first(collection, workers)
    assert sorted(order) == list(range(size))  # a permutation: nothing lost, nothing twice
    batches = _first_batches([collection[i] for i in order], workers)
    assert sum(len(batch) for batch in batches) == size
    per_worker = -(-len(long_names) // workers)
    for batch in batches:
        assert batch[0] in long_names
        heads = batch[:per_worker]
        assert all(name in long_names for name in heads[: len(heads) - 1]), heads
    started_first = {batch[j] for batch in batches for j in range(per_worker - 1)}
    assert started_first <= set(long_names)
    # The longest go first: the first round of heads is the list's first N.
    assert {batch[0] for batch in batches} == set(long_names[:workers])
    # The others keep the collection's order.
    rest = [name for batch in batches for name in batch if name not in long_names]
    assert rest == [name for name in collection if name not in long_names]


def test_a_run_without_known_long_tests_keeps_its_order(request: pytest.FixtureRequest) -> None:
    collection = [f"tests/a/test_{i}.py::test_it" for i in range(100)]
    assert _conftest(request.config).long_first(collection, 4) == list(range(100))


def test_every_known_long_test_still_exists(request: pytest.FixtureRequest) -> None:
    """A renamed or moved test would silently lose its head start: each entry names a test
    file that exists and a test function (or a docs block) in it that the name begins."""
    tests = Path(__file__).parent
    for prefix in _conftest(request.config).LONG_TESTS:
        path, name = prefix.split("::", 1)
        source = tests / path
        assert source.is_file(), prefix
        if name.startswith("test_block["):  # a docs block: tests/docs/test_docs.py
            # its id is DOC:LINE-LANG, LINE the opening fence's: a document edited above the
            # block moves it, and the old name matched nothing (mcp.md:34 and :76, round 22)
            block = re.fullmatch(r"test_block\[(.+):(\d+)-(\w+)\]", name)
            assert block is not None, prefix
            document, line, lang = block.group(1), int(block.group(2)), block.group(3)
            lines = (tests.parent / document).read_text(encoding="utf-8").splitlines()
            fence = lines[line - 1] if 0 < line <= len(lines) else ""
            assert re.match(rf"(`{{3,}}|~{{3,}})\s*{lang}\b", fence), f"{prefix}: {fence!r}"
            continue
        assert f"def {name}" in source.read_text(), prefix


def _taken(path: Path) -> bool:
    """Whether another open file description holds ``path``'s lock now."""
    fd = os.open(path, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


@pytest.mark.parametrize("cold", [True, False])
def test_a_cold_worker_collects_alone_and_a_warm_one_waits_for_none(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cold: bool
) -> None:
    """``FirstCollectsAlone``: the worker that finds the bytecode cold keeps the run's
    ``collect.lock`` while it collects (the others wait to take it); a warm one lets it go
    before collecting; either way it is free once collection ends, failed or not. A worker
    that comes after one collected alone never holds it."""
    conftest = _conftest(request.config)
    monkeypatch.setattr(conftest, "bytecode_cold", lambda: cold)
    first = conftest.FirstCollectsAlone(str(tmp_path))
    wrapper = first.pytest_collection(None)
    next(wrapper)  # collection is under way
    assert _taken(tmp_path / "collect.lock") is cold
    with pytest.raises(RuntimeError, match="a module failed"):
        wrapper.throw(RuntimeError("a module failed to import"))
    assert not _taken(tmp_path / "collect.lock")
    wrapper = first.pytest_collection(None)
    next(wrapper)
    assert _taken(tmp_path / "collect.lock") is cold
    with pytest.raises(StopIteration):
        wrapper.send([])
    # a worker that finds the bytecode cold after these: after one that collected alone it
    # collects at once; after warm ones it is the first to find it cold, and holds the lock
    monkeypatch.setattr(conftest, "bytecode_cold", lambda: True)
    wrapper = conftest.FirstCollectsAlone(str(tmp_path)).pytest_collection(None)
    next(wrapper)
    assert _taken(tmp_path / "collect.lock") is not cold
    with pytest.raises(StopIteration):
        wrapper.send([])


def test_the_bytecode_is_cold_until_errors_py_is_compiled(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``bytecode_cold`` looks for ``rho_domain/errors.py``'s compiled file where this run
    keeps bytecode (``sys.pycache_prefix`` or ``__pycache__``); where none is written, never."""
    conftest = _conftest(request.config)
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    monkeypatch.setattr(sys, "pycache_prefix", str(tmp_path))
    assert conftest.bytecode_cold()
    py_compile.compile(str(Path(errors.__file__)))  # where the prefix says
    assert not conftest.bytecode_cold()
    monkeypatch.setattr(sys, "pycache_prefix", str(tmp_path / "elsewhere"))
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    assert not conftest.bytecode_cold()


def test_hypothesis_s_tables_and_constants_go_from_one_checkout_to_the_next(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """A run keeps the tables its checkout built in the shared cache; a fresh checkout gets
    them before its workers start (each worker built them: 1.9 s of CPU), and a table the
    checkout has already is left as it is; so are the constants Hypothesis reads from the
    local modules at each worker's collection (5.0 s of CPU a worker without them)."""
    import hypothesis
    from hypothesis import configuration

    conftest = _conftest(request.config)
    shared, first, fresh = tmp_path / "shared", tmp_path / "first", tmp_path / "fresh"
    (first / "unicode_data" / "14.0.0").mkdir(parents=True)
    (first / "unicode_data" / "14.0.0" / "codec-v2-utf-8.json.gz").write_bytes(b"utf-8 table")
    (fresh / "unicode_data" / "14.0.0").mkdir(parents=True)
    (fresh / "unicode_data" / "14.0.0" / "charmap.json.gz").write_bytes(b"its own")
    # the constants of src's modules, by their hashes (a write in progress is no file's)
    (first / "constants").mkdir()
    (first / "constants" / "0123456789abcdef").write_text("# file: a.py\n'x'\n")
    (first / "constants" / ".tmp-half").write_text("# file: a")
    home = configuration.storage_directory(intent_to_write=False).path
    try:
        configuration.set_hypothesis_home_dir(first)
        conftest.unicode_tables(shared, keep=True)
        configuration.set_hypothesis_home_dir(fresh)
        conftest.unicode_tables(shared, keep=False)
    finally:
        configuration.set_hypothesis_home_dir(home)
    kept = shared / f"hypothesis-{hypothesis.__version__}" / "14.0.0"
    assert sorted(p.name for p in kept.iterdir()) == ["codec-v2-utf-8.json.gz"]
    tables = fresh / "unicode_data" / "14.0.0"
    assert (tables / "codec-v2-utf-8.json.gz").read_bytes() == b"utf-8 table"
    assert (tables / "charmap.json.gz").read_bytes() == b"its own"
    assert sorted(p.name for p in tables.iterdir()) == ["charmap.json.gz", "codec-v2-utf-8.json.gz"]
    assert [p.name for p in (fresh / "constants").iterdir()] == ["0123456789abcdef"]
    assert (fresh / "constants" / "0123456789abcdef").read_text() == "# file: a.py\n'x'\n"


class _Cache:
    def __init__(self, root: Path) -> None:
        self.root = root

    def mkdir(self, name: str) -> Path:
        (self.root / name).mkdir(exist_ok=True)
        return self.root / name


@pytest.mark.parametrize("process", ["starts workers", "worker", "alone"])
def test_workers_start_on_the_libraries_bytecode_and_then_keep_their_own(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, process: str
) -> None:
    """``keep_bytecode`` under ``PYTHONDONTWRITEBYTECODE``: every process keeps bytecode in
    the prefix, but the one that starts xdist workers leaves the environment alone, so that
    the workers start on the ``__pycache__`` beside pytest and the libraries (a fresh clone's
    empty prefix cost each worker 2 s of CPU to compile them); a worker, or a run without
    workers, passes the prefix on to the processes its tests start."""
    conftest = _conftest(request.config)
    config = type("Config", (), {"cache": _Cache(tmp_path)})()
    config.getoption = lambda name, default=None: 2 if process != "alone" else None
    if process == "worker":
        config.workerinput = {}
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    monkeypatch.setattr(sys, "pycache_prefix", None)
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    monkeypatch.delenv("PYTHONPYCACHEPREFIX", raising=False)
    conftest.keep_bytecode(config)
    assert sys.pycache_prefix == str(tmp_path / "pycache")
    assert not sys.dont_write_bytecode
    if process == "starts workers":
        assert os.environ.get("PYTHONDONTWRITEBYTECODE") == "1"
        assert "PYTHONPYCACHEPREFIX" not in os.environ
    else:
        assert os.environ.get("PYTHONPYCACHEPREFIX") == str(tmp_path / "pycache")
        assert "PYTHONDONTWRITEBYTECODE" not in os.environ


def test_a_fresh_checkout_starts_with_the_test_modules_another_one_rewrote(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``tests/rewritten_tests.py``: a run keeps the pycs pytest wrote for its test modules
    in the shared cache, by their sources' hashes; a fresh checkout gets those of its sources
    where pytest looks, and pytest loads each as the fresh checkout's own rewritten code (a
    cold collection rewrote ~660 modules: 7-16 s of CPU). A source that differs gets none,
    and a current pyc is left as it is."""
    from _pytest.assertion.rewrite import (
        PYC_TAIL,
        _read_pyc,
        _rewrite_test,
        _write_pyc_fp,
        get_cache_dir,
    )

    plugin = _conftest(request.config).rewritten(request.config)
    monkeypatch.setattr(sys, "pycache_prefix", str(tmp_path / "prefix"))
    shared, first, fresh = tmp_path / "shared", tmp_path / "a" / "tests", tmp_path / "b" / "tests"
    source = "def test_it() -> None:\n    two = 2\n    assert two == 3\n"
    for checkout in (first, fresh):
        (checkout / "sub").mkdir(parents=True)
        (checkout / "sub" / "test_same.py").write_text(source)
        (checkout / "test_changed.py").write_text(f"{source}# {checkout.parent.name}\n")

    def pyc(fn: Path) -> Path:
        return get_cache_dir(fn) / (fn.name[:-3] + PYC_TAIL)

    for fn in (first / "sub" / "test_same.py", first / "test_changed.py"):  # as pytest writes
        digest, written = _rewrite_test(fn, request.config)
        pyc(fn).parent.mkdir(parents=True, exist_ok=True)
        with pyc(fn).open("wb") as file:
            _write_pyc_fp(file, digest, written)
    plugin.keep(shared, request.config, first)
    assert plugin.seed(shared, request.config, fresh) == 1
    same = fresh / "sub" / "test_same.py"
    code = _read_pyc(same, pyc(same))
    assert code is not None
    assert code.co_filename == str(same)  # its tracebacks name the fresh checkout's file
    namespace: dict[str, Any] = {}
    exec(code, namespace)  # noqa: S102 - the test module pytest would import
    with pytest.raises(AssertionError, match="assert 2 == 3"):  # rewritten: the value shown
        namespace["test_it"]()
    assert _read_pyc(fresh / "test_changed.py", pyc(fresh / "test_changed.py")) is None
    assert plugin.seed(shared, request.config, fresh) == 0
