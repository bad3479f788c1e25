"""The log records ``rho-agent`` shows while a command runs: each as one warning line.

Installed by ``main`` around a run or a subcommand, never for ``--help``, ``--version`` or a
usage error: ``logging`` (with the ``traceback`` and ``string`` modules it imports) is ~10 ms
of a start that only prints text.
"""

from __future__ import annotations

import logging
import sys


class WarningLine(logging.Handler):
    """A log record as one ``rho-agent: warning:`` line (``lead``) on the stderr of the
    moment, through ``visible``: a record quotes data (a trace's call, a stored config, a
    worker id from the queue's database), and whoever wrote it must not reach the terminal.
    The message is one line (a newline shown escaped); a record's exception, if any,
    follows it on its own lines, escaped the same way."""

    def __init__(self, lead: str = "rho-agent: warning: ") -> None:
        super().__init__()
        self.lead = lead

    def emit(self, record: logging.LogRecord) -> None:
        """Write ``record``'s message (and its exception) after ``lead``."""
        from rho_entry.cli.terminal_text import visible  # rare: not at every start

        # one line: a newline in the data would begin a warning line of its own
        text = visible(record.getMessage(), newlines=False)
        if record.exc_info:
            text += "\n" + visible(logging.Formatter().formatException(record.exc_info))
        sys.stderr.write(f"{self.lead}{text}\n")


def install() -> WarningLine:
    """Show the records of ``rho_entry``'s loggers (what restricted commands lose without
    bubblewrap, ``wiring.say_unprotected``; a server's or a worker's warnings) as warning
    lines, until ``remove`` is given the handler returned. The store's records
    of a skipped trace line get a NullHandler for good: the store warns about it (one line)
    and, without a handler, logging would print it a second time."""
    adapters_log = logging.getLogger("rho_adapters")
    if not any(isinstance(h, logging.NullHandler) for h in adapters_log.handlers):
        adapters_log.addHandler(logging.NullHandler())
    line = WarningLine()
    # every rho_entry logger (the sandbox notice, a server's and a worker's warnings): a record
    # no handler takes is written raw by logging's last resort, data and escapes included
    logging.getLogger("rho_entry").addHandler(line)
    return line


def remove(line: WarningLine) -> None:
    """Take back the handler ``install`` returned."""
    logging.getLogger("rho_entry").removeHandler(line)
