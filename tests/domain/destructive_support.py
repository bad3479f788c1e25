"""What the destructive-command check's case tables ask of it (``shell.destructive``).

A table maps a command to a fragment of the reason it must give (``missed``), or lists the
ordinary work beside it that must run unasked (``asking``); each returns what went wrong,
so one assertion (``== []``) shows every failing row at once. The check is a pure function:
a whole table runs in one process.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from rho_domain.shell.destructive import destructive_reason


def missed(cases: Mapping[str, str]) -> list[tuple[str, str]]:
    """The cases whose reason is missing or lacks its fragment (expected: none)."""
    return [(c, r) for c, f in cases.items() if f not in (r := destructive_reason(c)) or not r]


def asking(commands: Iterable[str]) -> list[tuple[str, str]]:
    """The ordinary commands that ask (expected: none)."""
    return [(c, r) for c in commands if (r := destructive_reason(c))]
