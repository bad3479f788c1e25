"""A file a program opens by a path it builds itself is judged like a word that names it.

``diff FILE DIR`` compares FILE with ``DIR/FILE``'s basename (and ``diff DIR FILE`` the other
way round): no word of the command names that file. With an ordinary ``credentials.toml``
beside ``dot/.cargo``, ``diff credentials.toml dot/.cargo`` printed the secret
``dot/.cargo/credentials.toml`` (a location rule: the name alone is no secret) without
bubblewrap and on Daytona, and ``diff notes.txt dot`` a hard link to ``.env`` named
``dot/notes.txt``; under bubblewrap the mask held and diff said "Permission denied". Each
target exists.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from shell_backends import BACKENDS, run_restricted

SECRETS = ("SECRET-CARGO", "SECRET-DOCKER", "SECRET-ENV")


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
async def test_diff_never_reads_the_file_it_names_by_itself(
    ws: Path, backend: str, command: str
) -> None:
    out = await run_restricted(str(ws), command, backend)
    assert [s for s in SECRETS if s in out] == [], out
    assert "may not be read" in out, out


@pytest.mark.parametrize("backend", BACKENDS)
async def test_diff_of_a_file_with_a_directory_still_runs(ws: Path, backend: str) -> None:
    out = await run_restricted(str(ws), "diff src/a.txt b", backend)
    assert "< one" in out, out
    assert "> two" in out, out
