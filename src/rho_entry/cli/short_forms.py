"""The seeds' short commands: ``rho-agent ps`` is ``monitor ps``, ``rho-agent kill ID`` (or
``--all``) is ``monitor cancel``. Same options, same exit codes, same output."""

from __future__ import annotations

from collections.abc import Sequence

from rho_entry.cli import monitor


def ps(args: Sequence[str]) -> int:
    """``rho-agent ps [--json] [--limit N]``: list sessions (``monitor ps``)."""
    return monitor.main(args, command="ps", prog="rho-agent ps")


def kill(args: Sequence[str]) -> int:
    """``rho-agent kill ID|--all``: stop sessions at their next checkpoint (``monitor cancel``)."""
    return monitor.main(args, command="cancel", prog="rho-agent kill")
