"""``rho-agent export`` shows a session's config as a store keeps one now, whatever its
config.yaml holds: a session written before the store left logins out (a base URL's password,
a keyword dsn's, a literal Authorization header) exported them to whoever reads the export."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from program_zygote import run

SRC = Path(__file__).resolve().parents[2] / "src"


def _rho(*args: str, home: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "RHO_AGENT_HOME": str(home), "PYTHONPATH": str(SRC)}
    # forked from the CLI's zygote: the interpreter's start is not what this test tests
    return run(
        "rho", [sys.executable, "-m", "rho_entry", *args], cwd=cwd, env=env, text=True, timeout=120
    )


def test_an_old_sessions_secrets_are_not_exported(tmp_path: Path) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    made = _rho("-w", str(work), "-m", "demo", "hi", home=home, cwd=work)
    assert made.returncode == 0, made.stderr
    (config,) = (home / "sessions").glob("*/config.yaml")
    text = config.read_text().replace(
        "base_url: null", "base_url: http://gw:pw-old-base-71aa@gateway.internal/v1"
    )
    text += (
        "databases:\n  app:\n    engine: postgres\n"
        "    dsn: host=db dbname=app password=pw-old-dsn-0f3c\n"
    )
    config.write_text(text)  # as a version that kept them wrote it
    exported = _rho("export", "latest", home=home, cwd=work)
    assert exported.returncode == 0, exported.stderr
    assert "pw-old-base-71aa" not in exported.stdout
    assert "pw-old-dsn-0f3c" not in exported.stdout
    document = json.loads(exported.stdout)
    assert document["config"]["base_url"] == "http://gw@gateway.internal/v1"
    assert document["config"]["databases"]["app"]["dsn"] == "host=db dbname=app"
