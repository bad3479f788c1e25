"""The log records ``rho-agent`` shows while a command runs: each as one warning line.

Installed by ``main`` around a run or a subcommand, never for ``--help``, ``--version`` or a
usage error: ``logging`` (with the ``traceback`` and ``string`` modules it imports) is ~10 ms
of a start that only prints text.
"""

from __future__ import annotations

import logging
import sys


class WarningLine(logging.Handler):
    """A log record as a ``rho-agent: warning:`` line on the stderr of the moment."""

    def emit(self, record: logging.LogRecord) -> None:
        """Write ``record``'s message as one warning line."""
        from rho_entry.cli.terminal_text import visible  # rare: not at every start

        # a record may quote a trace or a model (a refused answer shows the call held)
        sys.stderr.write(f"rho-agent: warning: {visible(record.getMessage())}\n")


def install() -> WarningLine:
    """Show what restricted commands lose without bubblewrap (``wiring.say_unprotected``) as
    one warning line, until ``remove`` is given the handler returned. The store's records
    of a skipped trace line get a NullHandler for good: the store warns about it (one line)
    and, without a handler, logging would print it a second time."""
    adapters_log = logging.getLogger("rho_adapters")
    if not any(isinstance(h, logging.NullHandler) for h in adapters_log.handlers):
        adapters_log.addHandler(logging.NullHandler())
    line = WarningLine()
    logging.getLogger("rho_entry.sandbox").addHandler(line)
    return line


def remove(line: WarningLine) -> None:
    """Take back the handler ``install`` returned."""
    logging.getLogger("rho_entry.sandbox").removeHandler(line)
