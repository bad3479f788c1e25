"""Commands as the real toolbox daemon runs them: ``scripts.wrap`` on both generations.

Daemons before March 2026 split ``/process/execute``'s command themselves and exec the words
(no shell); newer ones give it to a shell on stdin. FakeDaytona runs both
(``rho_adapters.fakes.daytona_process``)."""

from __future__ import annotations

import json

from rho_adapters.daytona.scripts import wrap
from rho_adapters.fakes.daytona_process import execute, parse_command

# A pipe, a list, both kinds of quotes, a redirection, a variable, stdin and an exit status:
# under the old ``sh -c "$(...)"`` on the splitting daemon this was one simple command.
_SCRIPT = """x='one "two"'
printf '%s\\n' "$x" | tr o 0 >&2; cat; echo "args=$#"
exit 3
"""


def test_parse_command_is_the_daemon_s() -> None:
    """Ported from the daemon's ``parseCommand``: quotes are dropped, the other kind is kept
    literally, nothing else is syntax (tabs and newlines stay inside words)."""
    assert parse_command(""" a  "b 'c' d"e 'f "g"'\tx\ny $(z) \\ """) == [
        "a",
        "b 'c' de",
        'f "g"\tx\ny',
        "$(z)",
        "\\",
    ]
    assert parse_command("   ") == []


async def test_wrapped_scripts_run_whole_on_both_daemons() -> None:
    """The script is parsed by sh whatever the daemon: the old wrap, split by the daemon,
    ran ``$(...)``'s text as one command (exit 127, "x='one: not found"). A script past
    Linux's 128 KiB limit on one argument still runs (its base64 goes in several words)."""
    big = "printf %s " + "y" * 150_000 + " | wc -c\n"
    for daemon in ("argv", "shell"):
        answer = await execute({"command": wrap(_SCRIPT)}, {}, daemon)
        assert json.loads(answer.content) == {"exitCode": 3, "result": '0ne "tw0"\nargs=0\n'}
        answer = await execute({"command": wrap(big)}, {}, daemon)
        assert json.loads(answer.content) == {"exitCode": 0, "result": "150000\n"}, daemon


async def test_a_missing_program_answers_as_the_daemon_does() -> None:
    answer = await execute({"command": "no-such-program-rho x"}, {}, "argv")
    assert json.loads(answer.content) == {
        "exitCode": -1,
        "result": 'exec: "no-such-program-rho": executable file not found in $PATH',
    }
