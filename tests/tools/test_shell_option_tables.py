"""The option tables (programs.py) against the programs installed on this machine.

The harness rebuilds every argv from its own reading of the command (shell/rebuild.py), so a
table that disagrees with the program is a hole of its own: a letter listed as a flag that the
program reads as taking a value would swallow the harness's ``--`` (column -n did), and a long
name the program does not have would be read by getopt_long as an abbreviation of one it has.
Each program is asked directly; a program that is not installed is skipped.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest

from rho_domain.shell.programs import SPECS

# Programs with their own parsers (no getopt messages to read), or nothing to ask.
_OWN_PARSER = frozenset({"echo", "printf", "true", "false", "ps", "jq", "tree", "rg", "xxd"})
# getopt's "::" options: the value only glued (-w16), which is how the harness writes it.
_OPTIONAL = {"od": {"w"}}
# Long options newer versions have (wc --total=WHEN, coreutils 9.2): refused by older ones.
_NEWER = {"wc": {"total"}}
_REQUIRED = ("requires an argument", "missing argument")


def _ask(program: str, *args: str) -> str:
    done = subprocess.run(
        [program, *SPECS[program].forced, *args],
        capture_output=True,
        text=True,
        timeout=10,
        stdin=subprocess.DEVNULL,
        env={"PATH": "/usr/bin:/bin", "LC_ALL": "C"},
        check=False,
    )
    return (done.stdout + done.stderr).lower()


_ASKED = sorted(p for p in SPECS if p not in _OWN_PARSER)


@pytest.mark.parametrize("program", _ASKED)
def test_each_letter_is_a_flag_or_takes_a_value_as_the_table_says(program: str) -> None:
    if shutil.which(program) is None:
        pytest.skip(f"{program} is not installed")
    table = SPECS[program]
    for letter in table.flags:
        if letter.isdigit():
            continue
        said = _ask(program, f"-{letter}")
        assert not any(r in said for r in _REQUIRED), f"{program} -{letter} takes a value: {said}"
    for letter in set(table.valued) - _OPTIONAL.get(program, set()):
        said = _ask(program, f"-{letter}")
        assert any(r in said for r in _REQUIRED), f"{program} -{letter} is a flag: {said}"


@pytest.mark.parametrize("program", _ASKED)
def test_each_long_name_is_the_program_own(program: str) -> None:
    """A listed name the program lacks would be an abbreviation to getopt_long."""
    if shutil.which(program) is None:
        pytest.skip(f"{program} is not installed")
    table = SPECS[program]
    names = table.long_flags | table.long_valued | table.long_optional | table.long_pairs
    help_text = _ask(program, "--help")
    missing = sorted(n for n in names - _NEWER.get(program, set()) if f"--{n}" not in help_text)
    assert missing == [], f"{program} --help names none of {missing}"


_SEPARATED = sorted(p for p in SPECS if SPECS[p].spelling.dashdash == "first")


@pytest.mark.parametrize("program", _SEPARATED)
def test_each_program_given_a_separator_honours_it(program: str) -> None:
    """The harness's ``--`` must end the options: an operand after it that looks like an
    option is read as an operand (a missing file), never as an unknown option."""
    if shutil.which(program) is None:
        pytest.skip(f"{program} is not installed")
    if SPECS[program].max_operands == 0:
        return  # no operands: the harness writes no "--"
    said = _ask(program, "--", "--no-such-option-zz")
    assert "unrecognized option" not in said, said
    assert "invalid option" not in said, said
