"""Attacks on how the harness builds argvs, on real processes (issue 32, items 1, 3 and 5).

The workspace holds a real ``.env`` and ``credentials.json`` (committed to git, then changed)
and an executable ``evil.sh`` that prints ``EVIL-RAN`` and leaves a ``PWNED`` file. Every
command runs through the bash tool on a real ``LocalExecutor`` with bubblewrap and without,
and on a ``DaytonaExecutor`` over ``FakeDaytona`` (real bash, real programs). No secret may
reach the output, ``evil.sh`` may never run, and legit work keeps working. The pure checks of
the same classes are in ``test_shell_argv_construction.py``.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from shell_backends import call_tool, restricted_bash

from rho_adapters.daytona import DaytonaExecutor
from rho_adapters.fakes.daytona import FakeDaytona
from rho_adapters.local import LocalExecutor
from rho_adapters.local.executor import sandbox_available
from rho_domain.permissions import FileWriteMode
from rho_domain.ports.executor import Executor

SECRETS = ("SECRET-ENV", "SECRET-CRED")
EVIL = "EVIL-RAN"
SANDBOX_REFUSAL = "e/r/w commands disabled in sandbox mode"

# 1. Forced flags defeated by position: the model's "--sandbox" after "--" is a file name.
POSITION = [
    "sed -n -- '1e cat .en?' --sandbox README.md",
    "sed -n -- '1e sh evil.sh' --sandbox README.md",
    "sed -n -e '1e sh evil.sh' -- --sandbox",
    "sed -n '1e sh evil.sh' README.md -- --sandbox",
    "sed -n --expression='1e ./evil.sh' -- README.md --sandbox",
    "sed -nE -- '1e sh evil.sh' --sandbox README.md",
    "sed -n -s -- '1e cat cred*' README.md --sandbox --",
    "sed -n -- '1r .en?' --sandbox README.md",
    "sed -n -- 's/.*/cat .en?/e' --sandbox README.md",
    "sed -n -- '1w PWNED' --sandbox README.md",
    "sed -- '1e sh evil.sh' --sandbox < README.md",
    "cat README.md | sed -n -- '1e sh evil.sh' --sandbox -",
]
# 3. Options hidden in the items xargs appends (stdin items starting with "-", "--" itself,
# option values that are "--"), glued or not, in combined short flags.
ITEMS = [
    "xargs file -F -- README.md <<< '-m.env'",
    "xargs file -F -- README.md <<< '-f.env'",
    "xargs file -F-- README.md <<< '-fcredentials.json'",
    "xargs file --separator=-- README.md <<< '-f.env'",
    "xargs file --separator -- README.md <<< '--files-from=.env'",
    "xargs file -bF -- <<< '-f.env'",
    "xargs file <<< '-f.env'",
    "xargs file <<< '--magic-file=.env README.md'",
    "xargs -n1 file -F -- <<< '-f.env README.md'",
    "printf -- '-f.env\\n' | xargs file",
    "printf -- '--\\n-f.env\\n' | xargs file",
    "printf -- '-m.env\\0README.md\\0' | xargs -0 file",
    "xargs wc -- README.md <<< '--files0-from=.env'",
    "xargs wc -l <<< '--files0-from=credentials.json'",
    "xargs du <<< '--files0-from=.env'",
    "xargs grep -e -- <<< '-f.env README.md'",
    "xargs grep --regexp -- -h <<< '--file=.env .env'",
    "xargs grep -ce -- <<< '-r --include=.env API .'",
    "xargs head -n 1 <<< '--zero-terminated .env'",
    "xargs stat -c %n <<< '--printf=%n'",
    "echo '--pre=./evil.sh' | xargs rg -e -- x",
    "echo '--pre=sh' | xargs rg x README.md",
    "xargs rg -e -- README.md <<< '--pre=./evil.sh'",
]
# Options after "--" where the harness once judged a flag by its presence among the words:
# git's "--follow"/"--no-index" as paths switched the secret exclusions off.
SEPARATED = [
    "git diff HEAD -- --no-index '*.env'",
    "git diff HEAD -- --no-index '.e*'",
    "git log -p -- --follow '.e*'",
    "git log -p -- --follow 'cred*'",
    "git show HEAD -- --follow",
    "git diff --word-diff-regex --no-index HEAD",
]
# Arguments read from a file the harness never saw as a word (binutils' @file).
RESPONSE_FILES = ["strings @list.txt", "strings -- @list.txt", "strings -a @list.txt README.md"]
ATTACKS = [*POSITION, *ITEMS, *SEPARATED, *RESPONSE_FILES]

# 5. Refused before anything runs, by name: (command, the start of the message).
REFUSED = [
    ("sed --sand -n '1e sh evil.sh' README.md", "sed: option '--sand' is not allowed"),
    ("sed --sandbo -n 1p README.md", "sed: option '--sandbo' is not allowed"),
    ("rg --no-conf x", "rg: option '--no-conf' is not allowed"),
    ("rg --pre=./evil.sh x", "rg: option '--pre=./evil.sh' is not allowed"),
    ("file -m .env README.md", "file: option '-m' is not allowed"),
    ("xargs -a .env cat", "xargs: option '-a' is not allowed"),
    ("xargs --arg-file=.env cat", "xargs: option '--arg-file=.env' is not allowed"),
    ("xargs grep --pre=sh x", "grep: option '--pre=sh' is not allowed"),
    ("find . -exec sh evil.sh ';'", "find: '-exec' is not allowed"),
    ("find . -execdir ./evil.sh '{}' +", "find: '-execdir' is not allowed"),
    ("find . -name '*.md' -exec cat .env '{}' +", "find: '-exec' is not allowed"),
    ("find . '(' -ok sh evil.sh ';' ')'", "find: '-ok' is not allowed"),
    ("echo -- -n", "echo: echo has no '--'"),
]

# Legit work: (command, text the output must contain).
LEGIT = [
    ("wc -l src/*.py", "src/a.py"),
    ("sed -n 1,20p README.md", "# readme"),
    ("sed --sandbox -n 1p README.md", "# readme"),
    ("find . -name '*.py' | xargs grep -n TODO", "1:x = 1  # TODO foo"),
    ("sort data.csv | uniq -c", "1 a,1"),
    ("grep -rn foo -- src", "src/a.py:1:"),
    ("grep -c -e , -- data.csv", "2"),
    ("grep -e -x -e a -- data.csv", "a,1"),
    ("head -1 README.md", "# readme"),
    ("tail -n 1 data.csv", "b,2"),
    ("cut -d, -f2 data.csv", "2"),
    ("awk -F, '{print $2 \"!\"}' data.csv", "2!"),
    ("jq -r --arg k name '.[$k]' data.json", "widget"),
    ("printf -- '%s\\n' -x", "-x"),
    ("seq -- -2 0", "-1"),
    ("echo hello world", "hello world"),
    ("xargs -n1 wc -l <<< 'README.md data.csv'", "data.csv"),
    ("ls -a -- src", "a.py"),
    ("git log --oneline -n 1 -- README.md", "first"),
    ("git log -p -- README.md", "+# readme"),  # --follow is refused: it follows a rename to .env
    ("git diff HEAD --stat", ""),
    ("file README.md", "README.md: ASCII text"),
    ("ps -eo pid,comm --sort=-pid", "COMMAND"),
    ("ps -p 1 -o pid=", "1"),
    ("git log --oneline HEAD --not HEAD~0", ""),
]


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    ws = tmp_path_factory.mktemp("argv") / "ws"
    (ws / "src").mkdir(parents=True)
    files = {
        ".env": "API_KEY=SECRET-ENV-1",
        "credentials.json": '{"token": "SECRET-CRED-1"}',
        "README.md": "# readme",
        "data.csv": "a,1\nb,2",
        "data.json": '{"name": "widget"}',
        "src/a.py": "x = 1  # TODO foo",
        "evil.sh": f'#!/bin/sh\necho {EVIL}\n: > "$(dirname "$0")/PWNED"',
        "list.txt": ".env\ncredentials.json",
    }
    for rel, text in files.items():
        (ws / rel).write_text(text + "\n")
    (ws / "evil.sh").chmod(0o755)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(ws.parent), "GIT_CONFIG_GLOBAL": "/dev/null"}
    for args in (
        ["init", "-q"],
        ["add", "-f", ".env", "credentials.json", "README.md", "src/a.py"],
        ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "first"],
    ):
        subprocess.run(["git", *args], cwd=ws, env=env, check=True)
    (ws / ".env").write_text("API_KEY=SECRET-ENV-2\n")  # tracked, then changed
    (ws / "credentials.json").write_text('{"token": "SECRET-CRED-2"}\n')
    return ws


MODES = [
    pytest.param(
        "bwrap",
        marks=pytest.mark.skipif(not sandbox_available(), reason="bubblewrap not installed"),
    ),
    pytest.param("no-bwrap"),
    pytest.param("daytona"),
]


# One executor per backend for the module, on the module's event loop: a new one per case
# cost a Daytona sandbox's creation and set-up scripts (about 20 ms of CPU) and a loop per test.
# Each case still runs its own command, with every check the executor makes per command.
@pytest_asyncio.fixture(params=MODES, scope="module", loop_scope="module")
async def executor(request: pytest.FixtureRequest, workspace: Path) -> AsyncIterator[Executor]:
    if request.param == "daytona":
        fake = FakeDaytona(polls_until_started=1)
        daytona = DaytonaExecutor(
            fake.settings(working_dir=str(workspace)),
            file_write=FileWriteMode.OFF,
            transport=fake.transport,
        )
        try:
            yield daytona
        finally:
            await daytona.aclose()
        return
    yield LocalExecutor(str(workspace), sandbox=request.param == "bwrap")


async def _run(executor: Executor, command: str) -> str:
    return await call_tool(*restricted_bash(command), executor)


def _needs(command: str) -> None:
    for program in ("rg", "tree"):
        if f"{program} " in command and shutil.which(program) is None:
            pytest.skip(f"{program} is not installed")


@pytest.mark.parametrize("command", ATTACKS)
@pytest.mark.asyncio(loop_scope="module")
async def test_no_secret_and_no_program_through_argv_construction(
    executor: Executor, workspace: Path, command: str
) -> None:
    _needs(command)
    (workspace / "PWNED").unlink(missing_ok=True)  # each attack is judged on its own
    output = await _run(executor, command)
    assert [s for s in SECRETS if s in output] == [], output
    assert EVIL not in output, output
    assert not (workspace / "PWNED").exists(), output
    if command in POSITION and "refused" not in output.lower():
        # The harness's --sandbox is there: sed itself refuses e/r/w.
        assert SANDBOX_REFUSAL in output, output


@pytest.mark.parametrize(("command", "message"), REFUSED, ids=[c for c, _ in REFUSED])
@pytest.mark.asyncio(loop_scope="module")
async def test_an_unlisted_option_is_refused_before_anything_runs(
    executor: Executor, workspace: Path, command: str, message: str
) -> None:
    output = await _run(executor, command)
    assert output.startswith(f"Command refused: {message}"), output
    assert not (workspace / "PWNED").exists()


@pytest.mark.parametrize(("command", "expected"), LEGIT, ids=[c for c, _ in LEGIT])
@pytest.mark.asyncio(loop_scope="module")
async def test_legit_work_still_runs(executor: Executor, command: str, expected: str) -> None:
    output = await _run(executor, command)
    assert "[exit code 0" in output, output
    assert expected in output, output
    assert [s for s in SECRETS if s in output] == [], output
