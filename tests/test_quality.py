"""The strict gates run with the tests: ruff (lint and format) and mypy --strict.

mypy checks ``src/``, ``tests/`` and ``bench/`` (pyproject's ``[tool.mypy] files``), so a type
error in a test or a benchmark fails the gate as one in the product does;
``test_mypy_covers_src_tests_and_bench`` pins that.
Versions are pinned in the ``dev`` extra so a new release cannot change the verdict. Outside
CI a missing tool skips with a reason; under CI=true it fails.

mypy's cache (``.mypy_cache``) is the checkout's own; a checkout without one (a fresh clone)
starts from the last one a run on this machine left (``mypy_snapshot``): a cold
``mypy --strict`` costs 20-40 s of CPU, a warm one about a second.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import subprocess
import sys
import tarfile
import tomllib
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(module: str, *args: str) -> subprocess.CompletedProcess[str]:
    if importlib.util.find_spec(module) is None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{module} is not installed: install the dev extra")
        pytest.skip(f"{module} is not installed (pip install -e '.[dev]')")
    return subprocess.run(
        [sys.executable, "-m", module, *args], cwd=ROOT, capture_output=True, text=True, check=False
    )


def test_ruff_lint() -> None:
    result = _run("ruff", "check", "--output-format", "concise", "src", "tests", "bench")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format() -> None:
    result = _run("ruff", "format", "--check", "src", "tests", "bench")
    assert result.returncode == 0, result.stdout + result.stderr


def mypy_snapshot(machine_cache: Path | None) -> Path | None:
    """Where a run leaves a copy of the checkout's mypy cache for the next checkout without
    one, in the machine's test cache (``machine_cache``), named by mypy's and Python's
    versions (a cache of another version is of no use to mypy)."""
    if machine_cache is None or importlib.util.find_spec("mypy") is None:
        return None
    version = importlib.metadata.version("mypy")
    python = f"{sys.version_info[0]}.{sys.version_info[1]}"
    return machine_cache / f"mypy-{version}-py{python}.tar"


def seed_mypy_cache(cache: Path, snapshot: Path | None) -> bool:
    """Unpack ``snapshot`` as ``cache`` when the checkout has none; whether it did. Safe to
    share: mypy trusts no entry blindly (one whose file's path or mtime differs is kept only
    if the file's hash matches; its version, options and dependencies' interfaces are
    checked too), and each run writes only its own checkout's cache (SQLite, one writer)."""
    if cache.exists() or snapshot is None or not snapshot.is_file():
        return False
    try:
        with tarfile.open(snapshot) as archive:
            archive.extractall(cache.parent, filter="data")
    except (OSError, tarfile.TarError):  # a snapshot half gone or not ours: start cold
        return False
    return cache.is_dir()


def publish_mypy_cache(cache: Path, snapshot: Path | None) -> None:
    """Leave ``cache`` as ``snapshot`` for the next checkout: written beside it and renamed
    over it, so a reader opens the old archive or the new one, never half of one."""
    if snapshot is None or not cache.is_dir():
        return
    partial = snapshot.with_name(f"{snapshot.name}.{uuid.uuid4().hex}")
    try:
        snapshot.parent.mkdir(parents=True, exist_ok=True)
        with tarfile.open(partial, "w") as archive:
            archive.add(cache, arcname=cache.name)
        partial.replace(snapshot)
    except OSError:  # a read-only or full home: the next fresh checkout starts cold
        partial.unlink(missing_ok=True)


def test_mypy_strict(machine_cache: Path | None) -> None:
    cache = ROOT / ".mypy_cache"  # mypy's default, as pyproject sets no cache_dir
    snapshot = mypy_snapshot(machine_cache)
    seed_mypy_cache(cache, snapshot)
    result = _run("mypy")
    if result.returncode in (0, 1):  # checked (passed or found errors), not crashed
        publish_mypy_cache(cache, snapshot)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_mypy_snapshot_is_seeded_once_and_published_whole(tmp_path: Path) -> None:
    cache = tmp_path / "one" / ".mypy_cache"
    (cache / "3.11").mkdir(parents=True)
    (cache / "3.11" / "cache.0.db").write_bytes(b"kept")
    snapshot = tmp_path / "home" / "mypy.tar"
    publish_mypy_cache(cache, snapshot)
    assert [p.name for p in snapshot.parent.iterdir()] == ["mypy.tar"]  # no partial left
    fresh = tmp_path / "two" / ".mypy_cache"
    fresh.parent.mkdir()
    assert seed_mypy_cache(fresh, snapshot)
    assert (fresh / "3.11" / "cache.0.db").read_bytes() == b"kept"
    (fresh / "3.11" / "cache.0.db").write_bytes(b"its own")
    assert not seed_mypy_cache(fresh, snapshot)  # a checkout's own cache is never replaced
    assert (fresh / "3.11" / "cache.0.db").read_bytes() == b"its own"
    assert not seed_mypy_cache(tmp_path / "three" / ".mypy_cache", None)
    with tarfile.open(snapshot, "w") as archive:  # a member outside: refused, run cold
        archive.add(cache / "3.11" / "cache.0.db", arcname="../outside")
    (tmp_path / "four").mkdir()
    assert not seed_mypy_cache(tmp_path / "four" / ".mypy_cache", snapshot)
    assert not (tmp_path / "outside").exists()


def test_mypy_covers_src_tests_and_bench() -> None:
    """The gate's scope is the configuration, so the configuration is checked: the three
    trees, and ``bench`` as a base of its own (its scripts import each other by bare name,
    ``from bench_sessions import ...``, as ``python bench/x.py`` runs them)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
    assert config["strict"] is True
    assert set(config["files"]) >= {"src", "tests", "bench"}
    assert "bench" in config["mypy_path"]
