"""The CLI's last resort tells an exception whose message cannot be read, and its code.

A bug of ours (or of code we call) that raises an exception whose ``__str__`` raises reaches
``cli.app.run``'s last ``except``: it must still end with a line that says what happened and
how to see more, and exit code 1, never a traceback of the telling itself.
"""

from __future__ import annotations

import argparse

import pytest

from rho_entry.cli import exit_codes
from rho_entry.cli.app import run


class Unreadable(Exception):
    def __str__(self) -> str:
        raise ValueError("no message")


class _Args(argparse.Namespace):
    """An invocation whose first reading fails with ``Unreadable``."""

    @property
    def server(self) -> str | None:
        raise Unreadable


def test_the_last_resort_tells_an_unreadable_error_and_its_traceback_on_verbose(
    capsys: pytest.CaptureFixture[str],
) -> None:
    unread = "Unreadable: (its message could not be read: ValueError in __str__)"
    assert run(_Args(verbose=False)) == exit_codes.USAGE
    assert capsys.readouterr().err == (
        f"rho-agent: internal error: {unread} (--verbose shows the traceback)\n"
    )
    assert run(_Args(verbose=True)) == exit_codes.USAGE
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err
    assert err.endswith(f"rho-agent: internal error: {unread}\n")
