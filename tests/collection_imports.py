"""What the run's collection imported and compiled, kept for
``tests/test_collection_costs.py``: loaded by ``tests/conftest.py`` (``pytest_plugins``). Every
xdist worker collects the whole suite, so a package a test module imports at its top is paid
by each of them, whether or not it runs that module's tests (SQLAlchemy 0.2 s, openpyxl 0.15 s
of each worker's CPU), and so is what a module builds at import (two property modules'
1,650 regular expressions: 0.4 s)."""

from __future__ import annotations

import os
import re
import sys
from collections import Counter
from typing import Any

import pytest

COLLECTION_IMPORTS = pytest.StashKey[frozenset[str]]()
# The regular expressions each file of tests/ compiled (``re.compile``) while the suite
# collected, by the file's path.
COLLECTION_COMPILES = pytest.StashKey[Counter[str]]()


@pytest.hookimpl(wrapper=True)
def pytest_collection(session: pytest.Session) -> Any:
    """``re.compile`` counted by its caller's file while the suite collects (~250 calls: the
    count costs nothing a run would notice), as it was again afterwards."""
    counted: Counter[str] = Counter()
    compile_ = re.compile
    tests = os.path.dirname(os.path.abspath(__file__)) + os.sep

    def counting(pattern: Any, flags: Any = 0) -> Any:
        caller = sys._getframe(1).f_code.co_filename
        if caller.startswith(tests):
            counted[caller] += 1
        return compile_(pattern, flags)

    re.compile = counting
    try:
        return (yield)
    finally:
        re.compile = compile_
        session.config.stash[COLLECTION_COMPILES] = counted


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    """The top-level packages in ``sys.modules`` once every test module is imported."""
    names = frozenset(name.partition(".")[0] for name in list(sys.modules))
    session.config.stash[COLLECTION_IMPORTS] = names
