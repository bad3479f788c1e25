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

import os
import sys

import pytest


def pytest_configure(config: pytest.Config) -> None:
    cache = getattr(config, "cache", None)
    if cache is None or not sys.dont_write_bytecode or sys.pycache_prefix:
        return
    prefix = str(cache.mkdir("pycache"))
    sys.pycache_prefix = prefix
    sys.dont_write_bytecode = False
    os.environ["PYTHONPYCACHEPREFIX"] = prefix
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
