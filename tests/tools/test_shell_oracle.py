"""Execution oracle: every legitimate command of the adversarial suite really runs through the
bash tool (restricted, LocalExecutor) in a fixture repository and changes nothing on disk."""

from __future__ import annotations

import gzip
import hashlib
import os
import subprocess
from pathlib import Path

import pytest
from test_shell_adversarial import ALLOWED

from rho_adapters.clock import SystemClock
from rho_adapters.local import LocalExecutor
from rho_domain.permissions import readonly_profile
from rho_domain.tools.base import ToolContext
from rho_domain.tools.bash import BashHandler


def _snapshot(root: Path) -> dict[str, str]:
    out = {}
    for dirpath, _, files in os.walk(root):
        for name in files:
            path = Path(dirpath) / name
            out[str(path.relative_to(root))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("oracle")
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("def main():\n    return 'foo'  # TODO\n")
    (root / "README.md").write_text("# readme\nfoo\n")
    (root / "app.log").write_text("ok\nerror: x\nwarn: y\n")
    (root / "data.csv").write_text("a,2\nb,1\n")
    (root / "data.json").write_text('{"items": [{"name": "n"}], "v": 1}\n')
    (root / "a.txt").write_text("1\n2\n")
    (root / "b.txt").write_text("1\n3\n")
    (root / ".env.example").write_text("K=\n")
    (root / "logs").mkdir()
    (root / "logs" / "app.log.1.gz").write_bytes(gzip.compress(b"ERROR a\nok\nERROR b\n"))
    (root / "users.csv").write_text("1,ann\n2,bob\n")
    (root / "orders.csv").write_text("o1,1\no2,2\n")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(root), "GIT_CONFIG_GLOBAL": "/dev/null"}
    for args in (
        ["init", "-q"],
        ["add", "."],
        ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one"],
    ):
        subprocess.run(["git", *args], cwd=root, env=env, check=True)
    return root


def _ctx(repo: Path) -> ToolContext:
    return ToolContext(
        session_id="s",
        call_id="c",
        executor=LocalExecutor(str(repo)),
        profile=readonly_profile(),
        clock=SystemClock(),
    )


async def test_shell_allowed_commands_change_nothing(repo: Path) -> None:
    before = _snapshot(repo)
    ctx = _ctx(repo)
    handler = BashHandler(restricted=True, timeout=20)
    refused = []
    for command in ALLOWED:
        out = await handler.handle({"command": command}, ctx)
        if "Command refused" in out.content or "killed" in out.content:
            refused.append((command, out.content))
    assert refused == []
    assert _snapshot(repo) == before


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("zcat logs/app.log.1.gz | grep -c ERROR", "2"),
        ("join -t , -1 2 orders.csv users.csv", "1,o1,ann\n2,o2,bob"),
        ("free -m", "Mem:"),
        ("uptime -p", "up "),
    ],
)
async def test_rotated_logs_joins_and_the_machines_state_are_read(
    repo: Path, command: str, expected: str
) -> None:
    out = await BashHandler(restricted=True, timeout=20).handle({"command": command}, _ctx(repo))
    assert expected in out.content, out.content
