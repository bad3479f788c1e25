"""git history never shows a file below a secret location, whatever directory it sat in.

The secrets policy refuses locations wherever they are (``*/.config/gh``, ``*/.cargo/
credentials.toml``, ``*/.terraform.d/credentials.tfrc.json``, ``*/.local/share/keyrings``...):
``git show HEAD~1:dot/.config/gh/hosts.yml`` is refused. But ``git log -p``, ``git show``,
``git diff`` and ``git grep`` over history excluded only ``EXCLUDED_NAMES`` by pathspec, so a
committed and since deleted ``dot/.config/gh/hosts.yml`` printed its token in every backend,
bubblewrap included (the sandbox cannot mask blobs). The repository below holds each one in
its first commit and none in its tree.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import pytest_asyncio
from shell_backends import BACKENDS, DaytonaPool, daytona_pool, run_restricted

_ENV = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent", "GIT_CONFIG_GLOBAL": "/dev/null"}
_ID = ("-c", "user.name=t", "-c", "user.email=t@t")
SECRETS = {
    "dot/.config/gh/hosts.yml": "oauth_token: SEKRIT-GH\n",
    "dot/.config/gcloud/credentials.db": "SEKRIT-GCLOUD\n",
    "dot/.config/rho-agent/config.yaml": "api_key: SEKRIT-CFG\n",
    "dot/.cargo/credentials.toml": "token = SEKRIT-CARGO\n",
    "dot/.terraform.d/credentials.tfrc.json": '{"token": "SEKRIT-TF"}\n',
    "dot/.local/share/keyrings/login.keyring": "SEKRIT-KEYRING\n",
}
ATTACKS = [
    "git log -p",
    "git log -p --all -- dot",
    "git show HEAD~1",
    "git diff HEAD~1 HEAD",
    "git diff HEAD~2 HEAD~1 -- dot/.config",
    "git grep -e SEKRIT HEAD~1",
    "cd dot && git log -p",
    "git log --stat -p --full-diff HEAD~1",
]


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *_ID, *args], cwd=cwd, env=_ENV, check=True, capture_output=True, text=True
    )
    return done.stdout


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    ws = tmp_path_factory.mktemp("githist") / "ws"
    ws.mkdir()
    _git(ws, "init", "-q")
    (ws / "README.md").write_text("readme\n")
    _git(ws, "add", "README.md")
    _git(ws, "commit", "-qm", "zero")
    for rel, text in SECRETS.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text)
    (ws / "dot/notes.txt").write_text("LEGIT-NOTES\n")
    _git(ws, "add", "-f", ".")
    _git(ws, "commit", "-qm", "one")
    _git(ws, "rm", "-rq", "--cached", "dot")
    _git(ws, "commit", "-qm", "two")
    for rel in SECRETS:
        (ws / rel).unlink()
    assert all(text.split()[-1] in _git(ws, "log", "-p") for text in SECRETS.values())
    return ws


# The tests on the module's workspace share one event loop and, on Daytona, one sandbox per
# root (``daytonas``): a sandbox per case paid its creation and set-up scripts (about 70 ms of
# CPU) each time. Each case still runs its own command with every check the executor makes.
daytonas = pytest_asyncio.fixture(scope="module", loop_scope="module")(daytona_pool)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("command", ATTACKS)
@pytest.mark.asyncio(loop_scope="module")
async def test_history_hides_secret_locations(
    repo: Path, backend: str, command: str, daytonas: DaytonaPool
) -> None:
    out = await run_restricted(str(repo), command, backend, daytonas)
    assert [t for t in SECRETS.values() if t.split()[-1] in out] == [], out


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.asyncio(loop_scope="module")
async def test_history_beside_them_still_shows(
    repo: Path, backend: str, daytonas: DaytonaPool
) -> None:
    out = await run_restricted(str(repo), "git log -p", backend, daytonas)
    assert "+LEGIT-NOTES" in out, out
    assert "+readme" in out, out
