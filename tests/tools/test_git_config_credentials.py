"""A repository's own config is where clones keep credentials: it is a secret location.

``git clone https://user:TOKEN@host/repo`` keeps the token in ``remote.origin.url``, and CI
checkouts keep one in ``http.<url>.extraheader`` (``AUTHORIZATION: basic ...``), both in
``.git/config``. Before this suite ``cat .git/config``, the read tool, ``grep -r`` into
``.git`` and ``git remote -v`` printed them in every backend, bubblewrap included (the
policy did not name the file, so nothing masked it). git itself keeps working: the harness
reads the config (it runs no program) to build git's shadow, whose remote URLs lose their
user information; files named ``config`` elsewhere are still searched.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import pytest_asyncio
from shell_backends import (
    BACKENDS,
    DaytonaPool,
    call_tool,
    daytona_pool,
    restricted_bash,
    run_restricted,
)

from rho_adapters.daytona import DaytonaExecutor
from rho_adapters.fakes.daytona import FakeDaytona
from rho_adapters.local import LocalExecutor
from rho_domain.permissions import FileWriteMode
from rho_domain.tools.read import ReadHandler

TOKENS = ("ghp_SEKRIT1", "U0VLUklU", "SEKRIT")
_ENV = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent", "GIT_CONFIG_GLOBAL": "/dev/null"}


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("gitcreds") / "ws"
    root.mkdir()

    def git(*args: str) -> None:
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root,
                       env=_ENV, check=True, capture_output=True)  # fmt: skip

    git("init", "-q", "-b", "main")
    (root / "app").mkdir()
    (root / "app/config").write_text("LEGIT-CONFIG line\n")
    git("add", "app/config")
    git("commit", "-qm", "first")
    git("remote", "add", "origin", "https://x-access-token:ghp_SEKRIT1@github.com/o/r.git")
    git("config", "http.https://github.com/.extraheader", "AUTHORIZATION: basic U0VLUklU")
    git("config", "branch.main.remote", "origin")
    git("config", "branch.main.merge", "refs/heads/main")
    assert "ghp_SEKRIT1" in (root / ".git/config").read_text()
    return root


def _leaked(out: str) -> list[str]:
    return [t for t in TOKENS if t in out]


# The tests on the module's workspace share one event loop and, on Daytona, one sandbox per
# root (``daytonas``): a sandbox per case paid its creation and set-up scripts (about 70 ms of
# CPU) each time. Each case still runs its own command with every check the executor makes.
daytonas = pytest_asyncio.fixture(scope="module", loop_scope="module")(daytona_pool)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    "command",
    [
        "cat .git/config",
        "cd .git && cat config",
        "grep token .git/config",
        "grep -r SEKRIT .git",
        "grep -r -e SEKRIT -e basic .",
        "rg -uu SEKRIT",
        "rg -uu basic .git",
        "diff -rN .git/refs .git",
        "find .git -name config | xargs cat",
        "git remote -v",
        "cat < .git/config",
    ],
)
@pytest.mark.asyncio(loop_scope="module")
async def test_no_tool_prints_a_config_credential(
    ws: Path, backend: str, command: str, daytonas: DaytonaPool
) -> None:
    out = await run_restricted(str(ws), command, backend, daytonas)
    assert _leaked(out) == [], out


@pytest.mark.parametrize("backend", BACKENDS)
async def test_the_read_tool_refuses_the_config(ws: Path, backend: str) -> None:
    if backend == "daytona":
        fake = FakeDaytona(polls_until_started=0)
        executor: LocalExecutor | DaytonaExecutor = DaytonaExecutor(
            fake.settings(working_dir=str(ws)),
            file_write=FileWriteMode.OFF,
            transport=fake.transport,
        )
    else:
        executor = LocalExecutor(str(ws), sandbox=backend == "bwrap")
    try:
        out = await call_tool(ReadHandler(), {"path": ".git/config"}, executor)
        legit = await call_tool(*restricted_bash("git remote -v && git status -sb"), executor)
    finally:
        if isinstance(executor, DaytonaExecutor):
            await executor.aclose()
    assert _leaked(out) == [], out
    assert "secret" in out, out
    assert "https://github.com/o/r.git (fetch)" in legit, legit
    assert "## main...origin/main" in legit, legit


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.asyncio(loop_scope="module")
async def test_files_named_config_elsewhere_are_still_searched(
    ws: Path, backend: str, daytonas: DaytonaPool
) -> None:
    out = await run_restricted(
        str(ws), "grep -r LEGIT . && git log -p --oneline", backend, daytonas
    )
    assert "./app/config:LEGIT-CONFIG line" in out, out
    assert "+LEGIT-CONFIG line" in out, out
