"""The argument parser class of ``rho-agent`` and every subcommand: usage errors exit 1.

Standard library only, and a leaf: the CLI's parser, ``monitor``, ``export``, ``stats``,
``fork`` and ``serve`` import it without importing each other.
"""

from __future__ import annotations

import argparse
import math
import sys
from typing import NoReturn

USAGE_ERROR = 1  # exit_codes.USAGE: argparse's own code, 2, means "model error" here


class UsageParser(argparse.ArgumentParser):
    """argparse exits 2 on usage errors; rho-agent's documented code for them is 1. Every
    parser of rho-agent and its subcommands is one (subparsers inherit the class)."""

    def error(self, message: str) -> NoReturn:
        """Print the usage and ``message``, then exit 1."""
        self.print_usage(sys.stderr)
        self.exit(USAGE_ERROR, f"{self.prog}: error: {message}\n")


def seconds(text: str) -> float:
    """An argparse ``type``: a positive, finite number of seconds (a poll, a heartbeat, a
    window). Zero would spin a loop against the database; a negative or NaN window would take
    every live peer for dead."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (value > 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text!r}")
    return value
