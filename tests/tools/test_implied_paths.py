"""A file a program opens by a path it builds itself is judged like a word that names it.

``diff FILE DIR`` compares FILE with ``DIR/FILE``'s basename (and ``diff DIR FILE`` the other
way round): no word of the command names that file. With an ordinary ``credentials.toml``
beside ``dot/.cargo``, ``diff credentials.toml dot/.cargo`` printed the secret
``dot/.cargo/credentials.toml`` (a location rule: the name alone is no secret) without
bubblewrap and on Daytona, and ``diff notes.txt dot`` a hard link to ``.env`` named
``dot/notes.txt``; under bubblewrap the mask held and diff said "Permission denied". Each
target exists.

``zcat NAME``, when NAME names nothing, opens ``NAME.gz`` (or ``.z``, ``-z``, ``.Z``): before
redshell17, ``zcat ../outside/data`` printed ``../outside/data.gz``, out of reach, and
``zcat -f a`` printed ``.env`` through a link ``a.gz -> .env`` (``zcat -f b`` through a hard
link ``b.Z``), without bubblewrap and on Daytona (the sandbox hid or masked both).
"""

from __future__ import annotations

import gzip
import os
import subprocess
from pathlib import Path

import pytest
import pytest_asyncio
from shell_backends import BACKENDS, DaytonaPool, daytona_pool, run_restricted

SECRETS = ("SECRET-CARGO", "SECRET-DOCKER", "SECRET-ENV")

# The tests on the module's workspace, which no command changes, share one event loop and, on
# Daytona, one sandbox (``daytonas``): a sandbox per command paid its creation and set-up
# scripts (about 90 ms of CPU) each time. Each case still runs its own command.
daytonas = pytest_asyncio.fixture(scope="module", loop_scope="module")(daytona_pool)


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("implied") / "ws"
    for rel, text in {
        "dot/.cargo/credentials.toml": "token = SECRET-CARGO\n",
        "dot/.docker/config.json": '{"auths": "SECRET-DOCKER"}\n',
        ".env": "API_KEY=SECRET-ENV\n",
        "credentials.toml": "plain\n",
        "config.json": "{}\n",
        "notes.txt": "mine\n",
        "src/a.txt": "one\n",
        "b/a.txt": "two\n",
    }.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    os.link(root / ".env", root / "dot/notes.txt")
    outside = root.parent / "outside"
    outside.mkdir()
    (outside / "data.gz").write_bytes(gzip.compress(b"OUTSIDE-GZ\n"))
    (outside / "more-z").write_bytes(gzip.compress(b"OUTSIDE-Z\n"))
    (root / "a.gz").symlink_to(".env")
    os.link(root / ".env", root / "b.Z")
    (root / "logs").mkdir()
    (root / "logs/app.log.gz").write_bytes(gzip.compress(b"LOG-LINE\n"))
    return root


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    "command",
    [
        "diff credentials.toml dot/.cargo",
        "diff -N dot/.cargo credentials.toml",
        "diff -u config.json dot/.docker",
        "diff --brief config.json dot/.docker",
        "diff notes.txt dot",
        "diff dot notes.txt",
        "cd dot && diff ../credentials.toml .cargo",
    ],
)
@pytest.mark.asyncio(loop_scope="module")
async def test_diff_never_reads_the_file_it_names_by_itself(
    ws: Path, backend: str, command: str, daytonas: DaytonaPool
) -> None:
    out = await run_restricted(str(ws), command, backend, daytonas)
    assert [s for s in SECRETS if s in out] == [], out
    assert "may not be read" in out, out


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.asyncio(loop_scope="module")
async def test_diff_of_a_file_with_a_directory_still_runs(
    ws: Path, backend: str, daytonas: DaytonaPool
) -> None:
    out = await run_restricted(str(ws), "diff src/a.txt b", backend, daytonas)
    assert "< one" in out, out
    assert "> two" in out, out


# zcat NAME opens NAME.gz, NAME.z, NAME-z or NAME.Z when NAME names nothing.
ZCAT = {
    "zcat ../outside/data": "is outside the workspace",
    "zcat -l ../outside/more": "is outside the workspace",
    "zcat -f a": "is a secrets file (.env)",
    "zcat --force b": "another name (a hard link) of a secrets file",
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.asyncio(loop_scope="module")
async def test_zcat_never_reads_the_compressed_name_it_tries_by_itself(
    ws: Path, backend: str, daytonas: DaytonaPool
) -> None:
    marks = ("OUTSIDE-GZ", "OUTSIDE-Z", "SECRET-ENV")
    plain = [
        subprocess.run(c, shell=True, cwd=ws, capture_output=True, text=True).stdout
        for c in ("zcat ../outside/data ../outside/more", "zcat -f a b")
    ]
    assert all(m in "".join(plain) for m in marks), plain  # each attack reaches its mark
    for command, refusal in ZCAT.items():
        out = await run_restricted(str(ws), command, backend, daytonas)
        assert refusal in out, (command, out)
        assert [m for m in marks if m in out] == [], (command, out)
    out = await run_restricted(str(ws), "zcat logs/app.log", backend, daytonas)
    assert "LOG-LINE" in out, out
