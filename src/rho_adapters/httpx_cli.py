"""Keep httpx's command-line tool out of every process that only wants its client.

``import httpx`` runs ``from ._main import main``, which imports click and ``pygments.lexers``
(and rich, when installed) for the ``httpx`` console script, whether or not anyone calls it.
Where click is installed (uvicorn, the server extra, depends on it) that is the largest part
of importing httpx: ~20 ms of a one-shot run's start-up paid for a command line we never run.

``defer()`` registers a stand-in ``httpx._main`` before httpx is first imported; its ``main``
imports the real module on the first call, so ``httpx.main()`` still works for anyone who
calls it. It does nothing once httpx is imported (too late to matter) and is idempotent.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any

_NAME = "httpx._main"


def _real_main(*args: Any, **kwargs: Any) -> Any:
    """The real ``httpx._main.main``, imported now that someone calls it."""
    if getattr(sys.modules.get(_NAME), "__rho_deferred__", False):
        del sys.modules[_NAME]
    try:
        real = importlib.import_module(_NAME)
    except ImportError:  # what httpx's own fallback says when its CLI extra is missing
        print(
            "The httpx command line client could not run because the required "
            "dependencies were not installed.\nMake sure you've installed "
            "everything with: pip install 'httpx[cli]'"
        )
        sys.exit(1)
    return real.main(*args, **kwargs)


def defer() -> None:
    """Register the stand-in unless httpx (or its CLI) is already imported."""
    if "httpx" in sys.modules or _NAME in sys.modules:
        return
    stand_in = types.ModuleType(_NAME, "Stand-in for httpx's CLI module (rho_adapters.httpx_cli).")
    stand_in.main = _real_main  # type: ignore[attr-defined]
    stand_in.__rho_deferred__ = True  # type: ignore[attr-defined]
    sys.modules[_NAME] = stand_in
