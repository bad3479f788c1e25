"""What the run's collection imported, kept for ``tests/test_collection_costs.py``: loaded by
``tests/conftest.py`` (``pytest_plugins``). Every xdist worker collects the whole suite, so a
package a test module imports at its top is paid by each of them, whether or not it runs that
module's tests (SQLAlchemy 0.2 s, openpyxl 0.15 s of each worker's CPU)."""

from __future__ import annotations

import sys

import pytest

COLLECTION_IMPORTS = pytest.StashKey[frozenset[str]]()


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    """The top-level packages in ``sys.modules`` once every test module is imported."""
    names = frozenset(name.partition(".")[0] for name in list(sys.modules))
    session.config.stash[COLLECTION_IMPORTS] = names
