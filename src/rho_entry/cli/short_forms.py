"""The seeds' short commands: ``rho-agent ps [DIR]`` is ``monitor ps``, ``rho-agent kill ID``
(or ``--all``) is ``monitor cancel``, and so is ``rho-agent cancel``, the reference
implementation's name for it. Same options, same exit codes, same output; each also takes the
sessions directory as ``-d/--dir DIR`` (``monitor DIR ...``)."""

from __future__ import annotations

from collections.abc import Sequence

from rho_entry.cli import monitor


def ps(args: Sequence[str]) -> int:
    """``rho-agent ps [DIR] [--json] [--limit N]``: list sessions (``monitor ps``)."""
    return monitor.main(args, command="ps", prog="rho-agent ps")


def kill(args: Sequence[str]) -> int:
    """``rho-agent kill ID|--all``: stop sessions at their next checkpoint (``monitor cancel``)."""
    return monitor.main(args, command="cancel", prog="rho-agent kill")


def cancel(args: Sequence[str]) -> int:
    """``rho-agent cancel ID|--all``: ``kill``'s other name."""
    return monitor.main(args, command="cancel", prog="rho-agent cancel")
