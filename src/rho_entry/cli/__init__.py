"""The ``rho-agent`` command. ``main(argv)`` returns the exit code (see ``exit_codes``)."""

from rho_entry.cli.main import main

__all__ = ["main"]
