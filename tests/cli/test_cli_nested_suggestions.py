"""A misspelt word one level down is answered with what was meant, as one at the top is: a
sub-subcommand (``monitor wach``, ``mcp lst``, ``queue stauts``) got argparse's "invalid
choice" alone, and an option of a sub-subcommand (``monitor ps --jsn``) "unrecognized
arguments" alone, since the parser that reports it knew only its own options. ``eval brid``
and ``eval bird --wrokers`` said nothing more after that: eval's parser was not a
``UsageParser``."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_support import rho


@pytest.mark.parametrize(
    ("args", "hint"),
    [
        (["monitor", "wach", "latest"], "'wach' is not a command here: did you mean 'watch'?"),
        (["mcp", "lst"], "'lst' is not a command here: did you mean 'list'?"),
        (["queue", "stauts", "x"], "'stauts' is not a command here: did you mean 'status'?"),
        (["monitor", "ps", "--jsn"], "--jsn: did you mean --json?"),
        # eval's parser was argparse's own, with exit 1 and no suggestion
        (["eval", "brid"], "'brid' is not a command here: did you mean 'bird'?"),
        (["eval", "bird", "--data", "d", "--wrokers", "2"], "--wrokers: did you mean --workers?"),
    ],
    ids=["monitor", "mcp", "queue", "nested-flag", "eval", "eval-flag"],
)
def test_a_misspelt_word_below_a_subcommand_is_answered(
    tmp_path: Path, args: list[str], hint: str
) -> None:
    result = rho(*args, cwd=tmp_path, home=tmp_path)
    assert result.returncode == 1
    assert result.stderr.endswith(f"\n  {hint}\n"), result.stderr
