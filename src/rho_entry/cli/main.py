"""Entry point: parse (stdlib only), then import and run the rest.

``rho-agent --help`` and ``--version`` never import httpx, yaml, cattrs or a driver: the parser
is built from the standard library and everything else is imported after parsing.
"""

from __future__ import annotations

import logging
import sys
import warnings
from collections.abc import Sequence
from typing import TextIO

# name -> "module" (its ``main(args)``) or "module:function"
SUBCOMMANDS = {
    "monitor": "rho_entry.monitor",
    "export": "rho_entry.export",
    "eval": "rho_entry.evals.cli",
    "ps": "rho_entry.cli.short_forms:ps",
    "kill": "rho_entry.cli.short_forms:kill",
    "fork": "rho_entry.cli.fork",
    "stats": "rho_entry.stats",
    "serve": "rho_entry.server.serve",
    "mcp": "rho_entry.cli.mcp_list",
}


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``rho-agent`` with ``argv`` (default: ``sys.argv[1:]``); return the exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    from rho_entry.cli.pipes import QuietPipe

    # The store reports a skipped trace line both as a warning (shown below, one line) and as a
    # log record for services; without a handler, logging would print it a second time.
    adapters_log = logging.getLogger("rho_adapters")
    if not any(isinstance(h, logging.NullHandler) for h in adapters_log.handlers):
        adapters_log.addHandler(logging.NullHandler())
    # What main() changes of the process it puts back, so that it can be called again in the
    # same process (an embedding program, the in-process CLI tests).
    show_warning, stdout, stderr = warnings.showwarning, sys.stdout, sys.stderr
    warnings.showwarning = _show_warning
    # Both streams: `rho-agent ... 2>&1 | head -1` closes the progress stream too, and a
    # reader going away must not end the agent's work as an error.
    quiet, quiet_err = QuietPipe(stdout), QuietPipe(stderr)
    sys.stdout, sys.stderr = quiet, quiet_err
    # What restricted commands lose without bubblewrap (wiring.say_unprotected): one line.
    sandbox_log, sandbox_line = logging.getLogger("rho_entry.sandbox"), _WarningLine()
    sandbox_log.addHandler(sandbox_line)
    try:
        return _dispatch(args)
    finally:
        quiet.flush()  # now, not at interpreter exit, where a broken pipe would print
        quiet_err.flush()
        sys.stdout, sys.stderr = stdout, stderr
        warnings.showwarning = show_warning
        sandbox_log.removeHandler(sandbox_line)


class _WarningLine(logging.Handler):
    """A log record as a ``rho-agent: warning:`` line on the stderr of the moment."""

    def emit(self, record: logging.LogRecord) -> None:
        sys.stderr.write(f"rho-agent: warning: {record.getMessage()}\n")


def _dispatch(args: list[str]) -> int:
    if args and args[0] in SUBCOMMANDS:
        return _subcommand(args[0], args[1:])
    from rho_entry.cli.parser import build_parser

    try:
        namespace = build_parser().parse_args(args)
    except SystemExit as exc:  # --help, --version, or a usage error (exit 1)
        return exc.code if isinstance(exc.code, int) else 1
    from rho_entry.cli.app import run

    return run(namespace)


def _subcommand(name: str, args: list[str]) -> int:
    import importlib

    module_name, _, function = SUBCOMMANDS[name].partition(":")
    module = importlib.import_module(module_name)
    code: int = getattr(module, function or "main")(args)
    return code


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    """A warning is one line for the user (``a torn trace line was skipped``), without
    Python's file name, line number and source line."""
    (file or sys.stderr).write(f"rho-agent: warning: {message}\n")
