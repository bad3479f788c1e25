"""``rho_agent.cli``: the ``rho-agent`` command (``rho_entry.cli``)."""

from rho_entry.cli import main

__all__ = ["main"]
