"""Entry point: parse (stdlib only), then import and run the rest.

``rho-agent --help`` and ``--version`` never import httpx, yaml, cattrs or a driver: the parser
is built from the standard library and everything else is imported after parsing.
"""

from __future__ import annotations

import gc
import sys
import warnings
from collections.abc import Callable, Sequence
from typing import TextIO, TypeVar

from rho_entry import stop_signals
from rho_entry.cli import collector, exit_codes


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``rho-agent`` with ``argv`` (default: ``sys.argv[1:]``); return the exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    # What main() changes of the process it puts back, so that it can be called again in the
    # same process (an embedding program, the in-process CLI tests).
    show_warning = warnings.showwarning
    warnings.showwarning = _show_warning
    exit_codes.forget()  # the signals an earlier main([...]) in this process heard
    if argv is None:
        collector.pause()  # until a run's session is open (rho_entry/cli/collector.py)
        _no_bytecode_under_a_file_size_limit()
    try:
        from rho_entry.cli.pipes import standard_streams

        # Both streams: `rho-agent ... 2>&1 | head -1` closes the progress stream too, and a
        # reader going away must not end the agent's work as an error (cli/pipes.py).
        with standard_streams(process=argv is None) as (out, err):
            try:
                code = _dispatch(args, process=argv is None)
            except KeyboardInterrupt:
                # Ctrl+C before a command listens for it (while it imports, reads a config,
                # starts): said as a cancelled run is, not as a traceback.
                err.write("rho-agent: cancelled\n")
                code = exit_codes.cancelled()
            out.flush()
            if out.failure is not None:
                # The output is lost, not the work: a run's answer is in its session.
                err.write(
                    f"rho-agent: could not write to standard output ({out.failure}); what it "
                    "should have shown is lost (a run's answer is kept in its session: "
                    "rho-agent export ID)\n"
                )
                code = code or exit_codes.USAGE
        if argv is None:  # a signal from here on cannot change what the process ends with
            stop_signals.end_as_returned(code)
        return code
    finally:
        collector.resume()  # a run that never began (an error, a listing)
        warnings.showwarning = show_warning
        if argv is None:
            # The process's own command line (the console script, python -m rho_entry):
            # the process ends now. Frozen objects are left out of the collections the
            # interpreter's teardown makes, ~60 ms of a one-shot on 2 busy cores for a heap
            # that is about to go anyway. Never for main([...]) in a process that goes on.
            gc.freeze()


_Given = TypeVar("_Given")


def _dispatch(args: list[str], *, process: bool = False) -> int:
    subcommand = SUBCOMMANDS.get(args[0]) if args else None
    if subcommand is not None:
        collector.resume()  # a subcommand (a server, a worker, a monitor) collects as usual
        if process:
            # SIGHUP killed `monitor connect` waiting for an export (its request left in the
            # source), `queue wait`, `ps`...; serve, worker and eval replace this with their own
            _sigterm_cancels()
        return _with_log_lines(subcommand, args[1:])
    # Parsed before the run's modules are imported: --help, --version and a usage error
    # answer without loading the loop, the adapters or httpx.
    from rho_entry.cli.parser import parse_words

    namespace = parse_words(args, commands=tuple(SUBCOMMANDS))
    if isinstance(namespace, int):
        return namespace
    if process and (namespace.task is not None or not sys.stdin.isatty()):
        _sigterm_cancels()  # a REPL sets its own (cli/repl.py: it leaves, history saved)
    from rho_entry.cli.app import run

    return _with_log_lines(run, namespace)


def _with_log_lines(command: Callable[[_Given], int], given: _Given) -> int:
    """``command(given)`` with the log records it causes shown as warning lines
    (``log_lines``), imported only by a command that runs, not by ``--help``."""
    from rho_entry.cli import log_lines

    line = log_lines.install()
    try:
        return command(given)
    finally:
        log_lines.remove(line)


def _sigterm_cancels() -> None:
    """SIGTERM, SIGHUP (the terminal gone) or another ending signal (SIGQUIT, SIGUSR1, ...:
    ``exit_codes.ending_signals``), before the run listens for them (importing,
    reading the config, opening the store) ends as Ctrl+C does there: 'cancelled', exit 143 or
    129 (``exit_codes.cancelled``); before, they killed the process. Each is left alone
    when ignored (``nohup``, a supervisor's choice). The run's own handler replaces this one
    while it runs."""
    import signal

    for signum in exit_codes.ending_signals():  # SIGQUIT, SIGUSR1, ... too
        if signal.getsignal(signum) is signal.SIG_DFL:
            signal.signal(signum, exit_codes.interrupt_at_start)  # exits 128 + signum


# Each subcommand imports its module when it runs (a plain import the architecture test sees,
# never a string), so ``rho-agent --help`` loads none of them.


def _monitor(args: list[str]) -> int:
    from rho_entry.cli.monitor import main as monitor

    return monitor(args)


def _export(args: list[str]) -> int:
    from rho_entry.cli.export import main as export

    return export(args)


def _eval(args: list[str]) -> int:
    from rho_entry.cli.eval import main as evaluate

    return evaluate(args)


def _continuum(args: list[str]) -> int:
    from rho_entry.cli.continuum import main as continuum

    return continuum(args)


def _ps(args: list[str]) -> int:
    from rho_entry.cli.short_forms import ps

    return ps(args)


def _kill(args: list[str]) -> int:
    from rho_entry.cli.short_forms import kill

    return kill(args)


def _cancel(args: list[str]) -> int:
    from rho_entry.cli.short_forms import cancel

    return cancel(args)


def _fork(args: list[str]) -> int:
    from rho_entry.cli.fork import main as fork

    return fork(args)


def _stats(args: list[str]) -> int:
    from rho_entry.cli.stats import main as stats

    return stats(args)


def _serve(args: list[str]) -> int:
    from rho_entry.server.serve import main as serve

    return serve(args)


def _worker(args: list[str]) -> int:
    from rho_entry.cli.worker import main as worker

    return worker(args)


def _queue(args: list[str]) -> int:
    from rho_entry.cli.queue import main as queue

    return queue(args)


def _mcp(args: list[str]) -> int:
    from rho_entry.cli.mcp_list import main as mcp

    return mcp(args)


SUBCOMMANDS: dict[str, Callable[[list[str]], int]] = {
    "monitor": _monitor,
    "export": _export,
    "eval": _eval,
    "continuum": _continuum,
    "ps": _ps,
    "kill": _kill,
    "cancel": _cancel,
    "fork": _fork,
    "stats": _stats,
    "serve": _serve,
    "worker": _worker,
    "queue": _queue,
    "mcp": _mcp,
}


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
    from rho_entry.cli.terminal_text import visible

    # a warning names a session's file, and a session directory's name is data
    (file or sys.stderr).write(f"rho-agent: warning: {visible(str(message))}\n")


def _no_bytecode_under_a_file_size_limit() -> None:
    """Write no ``.pyc`` in a process with a file size limit (``ulimit -f``): CPython writes
    one with a single ``write`` and renames it in place whatever that wrote, so a limit below
    a module's bytecode left it cut short, and every later ``rho-agent`` (the limit lifted
    too) died importing it: "EOFError: marshal data too short", until ``__pycache__`` was
    removed. Modules imported before this (the CLI's first few) are small."""
    import resource

    if resource.getrlimit(resource.RLIMIT_FSIZE)[0] != resource.RLIM_INFINITY:
        sys.dont_write_bytecode = True
