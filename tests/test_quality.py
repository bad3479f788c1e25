"""The strict gates run with the tests: ruff (lint and format) and mypy --strict.

mypy checks ``src/``, ``tests/`` and ``bench/`` (pyproject's ``[tool.mypy] files``), so a type
error in a test or a benchmark fails the gate as one in the product does;
``test_mypy_covers_src_tests_and_bench`` pins that.
Versions are pinned in the ``dev`` extra so a new release cannot change the verdict. Outside
CI a missing tool skips with a reason; under CI=true it fails.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import tomllib
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


def test_mypy_strict() -> None:
    result = _run("mypy")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_covers_src_tests_and_bench() -> None:
    """The gate's scope is the configuration, so the configuration is checked: the three
    trees, and ``bench`` as a base of its own (its scripts import each other by bare name,
    ``from bench_sessions import ...``, as ``python bench/x.py`` runs them)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
    assert config["strict"] is True
    assert set(config["files"]) >= {"src", "tests", "bench"}
    assert "bench" in config["mypy_path"]
