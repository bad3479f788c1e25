"""The test modules as pytest rewrote them for their asserts, kept in the machine's test
cache (``tests/conftest.py``'s ``machine_cache_dir``) from one checkout to the next: loaded by
``tests/conftest.py`` (``pytest_plugins``), which calls ``seed`` before any worker starts and
``keep`` after the run.

pytest compiles each test module and conftest with its asserts rewritten and keeps the code in
a pyc of its own (``<name>.cpython-311-pytest-<version>.pyc`` in ``__pycache__``, or under the
pycache prefix ``keep_bytecode`` sets), checked by a hash of the source, not its time, and
loaded with the file name set to where the source is now. So a pyc another checkout wrote for
the same source is the one this checkout would write. A fresh clone has none: its first
worker rewrote all ~660 modules while the others waited for it (``FirstCollectsAlone``),
three quarters of a cold collection's CPU (24.1 s against 6.1 s warm, load 1-2).
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

try:  # where pytest keeps a rewritten module: without these, nothing is kept or seeded
    from _pytest.assertion.rewrite import PYC_TAIL, PYTEST_TAG, get_cache_dir
except ImportError:  # pragma: no cover - a pytest that moved them: each run rewrites
    PYC_TAIL = PYTEST_TAG = ""

# A rewritten pyc's header as pytest writes and checks it: Python's magic number, the flags of
# a checked-hash pyc (PEP 552), then the source's hash (``importlib.util.source_hash``).
_FLAGS = b"\x03\x00\x00\x00"


def kept_in(shared: Path, config: pytest.Config) -> Path | None:
    """The cache's directory for this pytest and Python (``PYTEST_TAG``) and the one setting
    that changes the rewritten code (``enable_assertion_pass_hook``); None when the run does
    not rewrite asserts (``--assert=plain``) or this pytest keeps its pycs elsewhere."""
    if not PYC_TAIL or config.getoption("assertmode") != "rewrite":
        return None
    hook = "pass-hook" if config.getini("enable_assertion_pass_hook") else "plain"
    return shared / f"pytest-rewrites-{PYTEST_TAG}-{hook}"


def _rewritable(tests: Path) -> Iterator[tuple[Path, bytes]]:
    """Each Python file under ``tests``: where pytest keeps its rewritten pyc, and the hash
    of the source that pyc must carry."""
    for source in sorted(tests.rglob("*.py")):
        with contextlib.suppress(OSError):  # removed meanwhile: nothing to seed or keep
            digest = importlib.util.source_hash(source.read_bytes())[:8]
            yield get_cache_dir(source) / (source.name[:-3] + PYC_TAIL), digest


def _current(pyc: Path, digest: bytes) -> bool:
    """Whether ``pyc`` is a rewritten module pytest would take for a source of ``digest``."""
    try:
        with pyc.open("rb") as file:
            header = file.read(16)
    except OSError:
        return False
    return header == importlib.util.MAGIC_NUMBER + _FLAGS + digest


def _copy(source: Path, target: Path) -> None:
    """``source`` to ``target``, renamed there whole (other runs read the same files)."""
    partial = target.with_name(f".{target.name}.{os.getpid()}")
    with contextlib.suppress(OSError):  # a directory it cannot write: as without the cache
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, partial)
        os.replace(partial, target)


def seed(shared: Path | None, config: pytest.Config, tests: Path) -> int:
    """Put each rewritten module the cache has for a source of ``tests`` where pytest looks
    for it, where no current one is; how many were put. pytest still checks each against its
    source, so a wrong or damaged one is rewritten as before."""
    kept = None if shared is None else kept_in(shared, config)
    if kept is None or not kept.is_dir():
        return 0
    put = 0
    for pyc, digest in _rewritable(tests):
        cached = kept / digest.hex()
        if not _current(pyc, digest) and _current(cached, digest):
            _copy(cached, pyc)
            put += 1
    return put


def keep(shared: Path | None, config: pytest.Config, tests: Path) -> None:
    """Put each current rewritten module of ``tests`` that the cache lacks into it, named by
    its source's hash."""
    kept = None if shared is None else kept_in(shared, config)
    if kept is None:
        return
    for pyc, digest in _rewritable(tests):
        cached = kept / digest.hex()
        if _current(pyc, digest) and not cached.exists():
            _copy(pyc, cached)
