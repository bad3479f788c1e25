"""Keep httpx's command-line tool out of every process that only wants its client.

``import httpx`` runs ``from ._main import main``, which imports click and ``pygments.lexers``
(and rich, when installed) for the ``httpx`` console script, whether or not anyone calls it.
Where click is installed (uvicorn, the server extra, depends on it) that is the largest part
of importing httpx: ~20 ms of a one-shot run's start-up paid for a command line we never run.

``defer()`` puts a finder on ``sys.meta_path`` that answers for ``httpx._main`` only: when
httpx imports it, it gets a stand-in whose ``main`` imports the real module on the first call
(the finder leaves ``sys.meta_path`` once it has served that import, so later imports do
not ask it), and ``httpx.main()`` still works for anyone who
calls it. Nothing is in ``sys.modules`` until httpx itself is imported. ``defer`` does nothing
once httpx is imported (too late to matter) and is idempotent.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.machinery
import sys
import types
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from importlib.abc import Loader

_NAME = "httpx._main"


class _DeferredCli:
    """A meta path finder and loader for ``httpx._main`` alone, until someone calls main."""

    active = True

    def find_spec(
        self, fullname: str, path: Any = None, target: Any = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != _NAME or not self.active:
            return None
        # a Loader by its two methods; importlib.abc is not imported for it
        return importlib.machinery.ModuleSpec(fullname, cast("Loader", self))

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return None  # the default module

    def exec_module(self, module: types.ModuleType) -> None:
        module.main = _real_main  # type: ignore[attr-defined]
        # Its work is done: httpx imports its CLI once, so every later import of the process
        # need not ask this finder first (a one-shot makes ~200 more).
        with contextlib.suppress(ValueError):
            sys.meta_path.remove(self)


_FINDER = _DeferredCli()


def _real_main(*args: Any, **kwargs: Any) -> Any:
    """The real ``httpx._main.main``, imported now that someone calls it."""
    _FINDER.active = False
    stand_in = sys.modules.pop(_NAME, None)
    try:
        real = importlib.import_module(_NAME)
    except ImportError:  # what httpx's own fallback says when its CLI extra is missing
        if stand_in is not None:
            sys.modules[_NAME] = stand_in
        print(
            "The httpx command line client could not run because the required "
            "dependencies were not installed.\nMake sure you've installed "
            "everything with: pip install 'httpx[cli]'"
        )
        sys.exit(1)
    return real.main(*args, **kwargs)


def defer() -> None:
    """Put the finder first on ``sys.meta_path`` unless httpx is already imported."""
    if "httpx" in sys.modules or _FINDER in sys.meta_path:
        return
    sys.meta_path.insert(0, _FINDER)
