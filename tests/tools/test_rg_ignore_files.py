"""rg never prints the lines of the ignore files it reads by itself.

rg reads ``.ignore``, ``.rgignore`` and ``.gitignore`` in every directory it walks (and in the
directories above it) without any word of the command naming them, and prints each line it
cannot parse as a glob: "./.ignore: line 1: error parsing glob 'API_KEY=SECRET[x': ...". An
ignore file that is a symbolic link to the workspace's ``.env`` or a key of the home, or a hard
link of ``.env``, printed the secret's lines holding an unclosed ``[`` or ``{`` without
bubblewrap and on Daytona (the sandbox masks them). The walker's exclusions keep rg from
*searching* those files, not from reading them as ignore files.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import pytest_asyncio
from shell_backends import (
    BACKENDS,
    DaytonaPool,
    call_tool,
    daytona_pool,
    restricted_bash,
)

from rho_adapters.daytona import DaytonaExecutor
from rho_adapters.fakes.daytona import FakeDaytona
from rho_adapters.local import LocalExecutor
from rho_domain.permissions import FileWriteMode

# Lines rg cannot parse as globs (a JSON key file's "{", a password with "[").
SECRET = "API_KEY=SECRET-ENV[1\n{SECRET-JSON\n"


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("rgignore")
    ssh = root / "home/.ssh"
    ssh.mkdir(parents=True)
    (ssh / "id_rsa").write_text("SECRET-SSH[1\n")
    ws = root / "ws"
    (ws / "src/deep").mkdir(parents=True)
    (ws / ".env").write_text(SECRET)
    (ws / "notes.txt").write_text("needle\n")
    (ws / "src/deep/app.py").write_text("needle = 1\n")
    (ws / ".ignore").symlink_to(ws / ".env")
    os.link(ws / ".env", ws / "src/.rgignore")
    (ws / "src/deep/.gitignore").symlink_to(ssh / "id_rsa")
    # Only below where rg starts: its walk reads them (--no-ignore-messages silences them).
    below = root / "ws-below"
    (below / "src/deep").mkdir(parents=True)
    (below / ".env").write_text(SECRET)
    (below / "src/deep/app.py").write_text("needle = 1\n")
    os.link(below / ".env", below / "src/.rgignore")
    (below / "src/deep/.gitignore").symlink_to(ssh / "id_rsa")
    return root


# The tests on the module's workspaces share one event loop and, on Daytona, one sandbox per
# workspace (``daytonas``): a sandbox per case paid its creation and set-up scripts (about 70
# ms of CPU) each time. Each case still runs its own command with every check the executor
# makes.
daytonas = pytest_asyncio.fixture(scope="module", loop_scope="module")(daytona_pool)


async def _run(
    base: Path, command: str, backend: str, ws: str = "ws", pool: DaytonaPool | None = None
) -> str:
    """``command``'s answer in ``base/ws`` on ``backend``; on Daytona in ``pool``'s sandbox
    for that workspace when a pool is given, else in a new one."""
    root, homes = str(base / ws), (str(base / "home"),)
    if backend == "daytona" and pool is not None:
        return await call_tool(*restricted_bash(command), pool.get(root, homes))
    if backend == "daytona":
        fake = FakeDaytona(polls_until_started=0)
        daytona = DaytonaExecutor(
            fake.settings(working_dir=root),
            file_write=FileWriteMode.OFF,
            transport=fake.transport,
            homes=homes,
        )
        try:
            return await call_tool(*restricted_bash(command), daytona)
        finally:
            await daytona.aclose()
    local = LocalExecutor(root, sandbox=backend == "bwrap", homes=list(homes))
    return await call_tool(*restricted_bash(command), local)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    "command",
    [
        "rg needle",
        "rg --files",
        "rg -uu --files-without-match needle",
        "rg --no-require-git -l needle src",
        "cd src/deep && rg needle",
        "rg needle 2>&1 | cat",
        "echo src/deep | xargs rg needle",
        "echo src | xargs rg --files",
    ],
)
@pytest.mark.asyncio(loop_scope="module")
async def test_rg_never_prints_an_ignore_file_linked_to_a_secret(
    base: Path, backend: str, command: str, daytonas: DaytonaPool
) -> None:
    out = await _run(base, command, backend, pool=daytonas)
    assert "SECRET-" not in out, out


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("command", ["rg needle", "rg --files", "rg -l needle ."])
@pytest.mark.asyncio(loop_scope="module")
async def test_rg_never_prints_an_ignore_file_it_meets_below_where_it_starts(
    base: Path, backend: str, command: str, daytonas: DaytonaPool
) -> None:
    out = await _run(base, command, backend, "ws-below", daytonas)
    assert "SECRET-" not in out, out
    assert "deep/app.py" in out, out  # it ran


@pytest.mark.parametrize("backend", BACKENDS)
async def test_rg_still_searches_and_still_respects_ignore_files(
    tmp_path: Path, backend: str
) -> None:
    ws = tmp_path / "ws"
    (ws / "build").mkdir(parents=True)
    (ws / "app.py").write_text("needle = 1\n")
    (ws / "build/out.py").write_text("needle = 2\n")
    (ws / ".ignore").write_text("build/\n")
    out = await _run(tmp_path, "rg -n needle", backend)
    assert "app.py:1:needle = 1" in out, out
    assert "out.py" not in out, out


@pytest.mark.parametrize("backend", ["no-bwrap", "daytona"])
@pytest.mark.parametrize(
    "command", ["cd src/deep && rg needle", "rg needle src/deep", "cd src && rg needle"]
)
@pytest.mark.asyncio(loop_scope="module")
async def test_an_ignore_file_linked_to_a_secret_is_refused_by_name(
    base: Path, backend: str, command: str, daytonas: DaytonaPool
) -> None:
    out = await _run(base, command, backend, pool=daytonas)
    assert out.startswith("SensitivePath: rg: "), out
    named = ("/ws/.ignore'", "/ws/src/.rgignore may", "/ws/src/deep/.gitignore'")
    assert any(n in out for n in named), out
