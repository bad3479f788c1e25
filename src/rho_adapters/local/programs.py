"""Where restricted programs come from on this machine, and whether bubblewrap guards them.

``LocalExecutor`` resolves every restricted program against a fixed search path outside the
workspace (``default_search_path``, less any directory inside the workspace:
``programs_outside``); the server and the CLI say at start what commands lose when
bubblewrap is missing or cannot run (``sandbox_notice``), and tests skip the sandbox's own
checks where it is not installed (``sandbox_available``).
"""

from __future__ import annotations

import functools
import os
import shutil
import sys
from collections.abc import Sequence

from rho_adapters.local.runner import CommandRunner
from rho_domain.paths import components, is_within


@functools.lru_cache(maxsize=64)
def programs_outside(path: tuple[str, ...], root: tuple[str, ...]) -> tuple[str, ...]:
    """The absolute directories of ``path`` outside ``root`` (components): a program directory
    inside the workspace would let files there pose as programs. A pure function of its
    strings, remembered per process (every Session's executor asks it)."""
    return tuple(p for p in path if p.startswith("/") and not is_within(components(p), root))


def default_search_path() -> tuple[str, ...]:
    """Where restricted programs come from: system directories and this Python's bin (rg)."""
    return ("/usr/local/bin", "/usr/bin", "/bin", os.path.dirname(sys.executable))


def sandbox_notice(search_path: Sequence[str] | None = None) -> str | None:
    """What restricted commands on this machine lose because bubblewrap is missing or cannot
    run (programs from ``search_path``, default ``default_search_path()``), or None."""
    path = default_search_path() if search_path is None else tuple(search_path)
    return CommandRunner(path, {}, sandbox=None).unprotected()


def sandbox_available() -> bool:
    """Whether the bubblewrap binary is installed (it still has to work: see CommandRunner)."""
    return shutil.which("bwrap") is not None
