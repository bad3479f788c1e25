"""The argument parser class of ``rho-agent`` and every subcommand: usage errors exit 1.

Standard library only, and a leaf: the CLI's parser, ``monitor``, ``export``, ``stats``,
``fork`` and ``serve`` import it without importing each other.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from typing import NoReturn

USAGE_ERROR = 1  # exit_codes.USAGE: argparse's own code, 2, means "model error" here


class UsageParser(argparse.ArgumentParser):
    """argparse exits 2 on usage errors; rho-agent's documented code for them is 1. Every
    parser of rho-agent and its subcommands is one (subparsers inherit the class)."""

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        """argparse's, after refusing a word that is not UTF-8 text (Python hands such bytes
        on as lone surrogates, which fail later, wherever the word is first written: the
        trace, config.yaml, a request)."""
        words = sys.argv[1:] if args is None else list(args)
        for word in words:
            problem = not_utf8(word)
            if problem is not None:
                shown = word.encode("utf-8", "surrogateescape")
                self.error(
                    f"argument {shown!r} is not UTF-8 text ({problem}); rho-agent reads its "
                    "arguments, paths included, as UTF-8"
                )
        return super().parse_known_args(words, namespace)

    def error(self, message: str) -> NoReturn:
        """Print the usage and ``message``, then exit 1."""
        self.print_usage(sys.stderr)
        self.exit(USAGE_ERROR, f"{self.prog}: error: {message}\n")


def not_utf8(text: str) -> str | None:
    """None when ``text`` (a command-line word, standard input) is UTF-8 text; else which
    byte is not (``"byte 0xff at offset 3"``). Python decodes such bytes to lone surrogates
    (``surrogateescape``), which no UTF-8 writer accepts."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        pass
    else:
        return None
    try:
        data = text.encode("utf-8", "surrogateescape")
        data.decode("utf-8")
    except UnicodeEncodeError as exc:  # a surrogate that stands for no byte
        return f"character {exc.object[exc.start]!r} at {exc.start}"
    except UnicodeDecodeError as exc:
        return f"byte 0x{data[exc.start]:02x} at offset {exc.start}"
    return None  # pragma: no cover - escaped bytes that decode were never escaped


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
