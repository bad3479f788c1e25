"""The secrets policy in the Daytona backend: the same tools, the same attacks, the same answer.

FakeDaytona runs real bash and real programs, so every attack below really executes; the
executor resolves paths inside the "sandbox" (here, this machine) and judges them with the same
``rho_domain.secrets`` policy as the local executor.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from rho_adapters.clock import SystemClock
from rho_adapters.daytona import DaytonaExecutor
from rho_adapters.fakes.daytona import FakeDaytona
from rho_adapters.local.line_search import ProcessLineSearcher
from rho_domain.errors import PathOutsideWorkspace, SensitivePath, ToolError
from rho_domain.messages import ToolCall
from rho_domain.permissions import FileWriteMode, readonly_profile
from rho_domain.reach import OutsideReads
from rho_domain.tools.base import ToolContext, ToolOutput
from rho_domain.tools.factory import build_registry

MARKS = ("MARK-ENV", "MARK-SSH", "MARK-AWS", "MARK-KEY")
ATTACKS = [
    "cat HOME/.aws/credentials",
    "grep -r PRIVATE HOME/.ssh",
    "grep -rh MARK HOME",
    "cat docs/key.txt",
    "cat notes.txt",
    "cat c1",
    "cat sshdir/id_rsa",
    "cat < notes.txt",
    "head a.txt notes.txt",
    "grep -R MARK .",
    "grep -rh API_KEY .",
    "grep -r --include=*.env MARK .",
    "rg -L MARK",
    "git grep --no-index -h API_KEY",
    "find . -name '.en?' | xargs cat",
    "find . -type f | xargs grep MARK",
    "printf 'notes.txt\\n' | xargs cat",
    "cat .ENV",
    "cat deploy/SERVER.KEY",
    "cat /dev/fd/../environ",
    "cat /proc/self/environ",
    "cat /proc/self/root/HOME/.ssh/id_rsa",
    "diff -r d1 d2",
    "jq -n --rawfile k notes.txt '$k'",
    "awk 'BEGIN{ARGV[1]=\"notes.txt\"; ARGC=2}{print}'",
    "cat *",
    "cat n*",
    "cat docs/*",
    "grep -h API d1/*",
    "cat .[eE]*",
    "cat ss*/*",
]


def _executor(tmp_path: Path) -> dict[str, Any]:
    home, ws = tmp_path / "home", tmp_path / "ws"
    for rel, text in {
        ".ssh/id_rsa": "PRIVATE MARK-SSH",
        ".aws/credentials": "MARK-AWS",
    }.items():
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        (home / rel).write_text(text + "\n")
    for d in ("docs", "deploy", "d1", "d2", "src"):
        (ws / d).mkdir(parents=True)
    for rel, text in {
        ".env": "API_KEY=MARK-ENV-1",
        ".ENV": "API_KEY=MARK-ENV-2",
        "deploy/SERVER.KEY": "MARK-KEY",
        "a.txt": "plain",
        "d2/x": "other",
        "src/app.py": "# TODO",
    }.items():
        (ws / rel).write_text(text + "\n")
    os.symlink(home / ".ssh" / "id_rsa", ws / "docs" / "key.txt")
    os.symlink(".env", ws / "notes.txt")
    os.symlink("notes.txt", ws / "c1")
    os.symlink(home / ".ssh", ws / "sshdir")
    os.symlink("../.env", ws / "d1" / "x")
    (tmp_path / "ws-evil").write_text("a sibling that merely shares the prefix\n")
    fake = FakeDaytona(polls_until_started=1)
    executor = DaytonaExecutor(
        fake.settings(working_dir=str(ws)),
        file_write=FileWriteMode.OFF,
        extra_read_roots=(str(home),),
        transport=fake.transport,
        homes=(str(home),),
        # The widest reach: secrets must be refused where the rest of the machine is
        # readable (/etc/hostname is, in the legit reads); test_read_reach.py covers deny.
        read_outside=OutsideReads.ALLOW,
    )
    return {"executor": executor, "home": home, "ws": ws}


# The attack families share one rig and its executor (a sandbox, as a session has one) on
# the module's event loop: a rig per case paid the sandbox's creation and set-up scripts
# first. Nothing here writes to the workspace but the git test, which makes its own rig.
@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def rig(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[dict[str, Any]]:
    made = _executor(tmp_path_factory.mktemp("daytona-secrets"))
    try:
        yield made
    finally:
        await made["executor"].aclose()


@pytest.fixture
async def own_rig(tmp_path: Path) -> AsyncIterator[dict[str, Any]]:
    made = _executor(tmp_path)
    try:
        yield made
    finally:
        await made["executor"].aclose()


async def _call(rig: dict[str, Any], tool: str, **args: Any) -> ToolOutput:
    profile = readonly_profile()
    ctx = ToolContext(
        session_id="s",
        call_id="c",
        executor=rig["executor"],
        profile=profile,
        clock=SystemClock(),
    )
    call = ToolCall(id="c", name=tool, arguments=json.dumps(args))
    registry = build_registry(profile, line_searcher=ProcessLineSearcher())
    return await registry.dispatch(call, ctx)


@pytest.mark.parametrize("command", ATTACKS)
@pytest.mark.asyncio(loop_scope="module")
async def test_daytona_shell_never_leaks_a_secret(rig: dict[str, Any], command: str) -> None:
    out = await _call(rig, "bash", command=command.replace("HOME", str(rig["home"])))
    assert [m for m in MARKS if m in out.content] == [], out.content


@pytest.mark.parametrize(
    ("path", "error"),
    [
        (".env", SensitivePath),
        ("notes.txt", SensitivePath),
        ("c1", SensitivePath),
        (".ENV", SensitivePath),
        ("deploy/SERVER.KEY", SensitivePath),
        ("HOME/.ssh/id_rsa", SensitivePath),
        ("HOME/.aws/credentials", SensitivePath),
        ("docs/key.txt", SensitivePath),
        ("sshdir/id_rsa", SensitivePath),
        ("../home/.ssh/id_rsa", SensitivePath),
        ("../ws-evil", PathOutsideWorkspace),
        ("notes/", ToolError),
    ],
)
@pytest.mark.asyncio(loop_scope="module")
async def test_daytona_read_refuses_secrets_by_real_path(
    rig: dict[str, Any], path: str, error: type[ToolError]
) -> None:
    with pytest.raises(error, match=r"secret|outside|names a directory"):
        await rig["executor"].read(path.replace("HOME", str(rig["home"])))


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        ("cat n*", "'notes.txt' (really WS/.env) may not be read"),
        ("cat docs/*", "'docs/key.txt' (really HOME/.ssh/id_rsa) may not be read"),
        ("grep -h API d1/*", "'d1/x' (really WS/.env) may not be read"),
        ("cat .[eE]*", "after glob expansion: '.ENV' names a secrets file"),
    ],
)
@pytest.mark.asyncio(loop_scope="module")
async def test_daytona_glob_matches_are_judged_like_typed_words(
    rig: dict[str, Any], command: str, reason: str
) -> None:
    """Matches expanded inside the sandbox meet the same real-path policy as typed words."""
    expected = reason.replace("WS", str(rig["ws"])).replace("HOME", str(rig["home"]))
    out = await _call(rig, "bash", command=command)
    assert out.is_error, out.content
    assert expected in out.content, out.content
    assert [m for m in MARKS if m in out.content] == [], out.content


async def test_daytona_git_never_shows_a_secret_blob(own_rig: dict[str, Any]) -> None:
    rig = own_rig
    ws = rig["ws"]
    env = {"PATH": "/usr/bin:/bin", "HOME": str(ws.parent), "GIT_CONFIG_GLOBAL": "/dev/null"}
    for args in (
        ["init", "-q"],
        ["add", "-f", ".env", "a.txt"],
        ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "first"],
    ):
        subprocess.run(["git", *args], cwd=ws, env=env, check=True)
    blob = subprocess.run(
        ["git", "rev-parse", "HEAD:.env"], cwd=ws, env=env, capture_output=True, text=True
    ).stdout.strip()
    for command in (
        f"git show {blob}",
        f"git cat-file -p {blob}",
        "git show HEAD",
        "git log -p",
        "cd src && git show HEAD",
        "cd src && git log -p -- ..",
    ):
        out = await _call(rig, "bash", command=command)
        assert "MARK-ENV" not in out.content, (command, out.content)
    legit = await _call(rig, "bash", command="git show HEAD:a.txt")
    assert "plain" in legit.content, legit.content


@pytest.mark.asyncio(loop_scope="module")
async def test_daytona_legit_reads_still_work(rig: dict[str, Any]) -> None:
    out = await _call(rig, "bash", command="grep -rn TODO . && cat a.txt && cat /etc/hostname")
    assert not out.is_error, out.content
    assert "src/app.py:1:# TODO" in out.content
    assert "plain" in out.content
    found = await _call(rig, "bash", command="find . -type f | xargs grep -l TODO")
    assert "./src/app.py" in found.content, found.content
    assert await rig["executor"].read("a.txt") == b"plain\n"
