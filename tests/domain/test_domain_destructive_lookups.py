"""Programs that look a name up say where it is or what it does, and never run it: its name
among their words is text (redapprove28 noticed ``which shutdown`` asked as shutdown)."""

from __future__ import annotations

import pytest

from rho_domain.shell.destructive import destructive_reason


@pytest.mark.parametrize(
    "command",
    [
        "which shutdown",
        "which -a reboot poweroff",
        "whereis shutdown",
        "whatis reboot",
        "apropos reboot",
        "type shutdown",
        "type -a rm mkfs",
        "help shutdown",
        "sudo which shutdown",
    ],
)
def test_a_lookup_of_a_destructive_name_runs_unasked(command: str) -> None:
    assert destructive_reason(command) == ""


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        ("which shutdown && shutdown now", "shutdown"),
        ("$(which shutdown) now", "cannot read this command line"),
        ("which shutdown | sh", "sh"),
    ],
)
def test_what_runs_after_a_lookup_still_asks(command: str, reason: str) -> None:
    assert reason in destructive_reason(command)
