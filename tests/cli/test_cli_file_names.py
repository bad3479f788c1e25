"""A workspace holding a file whose name is not UTF-8 (``caf\\xe9.txt``, written by a Latin-1
system): the tools show the name with the byte escaped, and nothing downstream breaks. Before,
the ``list`` result carried the lone surrogate Python decodes such a byte to: the answer on a
strict terminal ended in 'internal error', the trace append failed, ``stats`` crashed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from cli_support import clean_env


def _rho(*args: str, cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rho_entry", *args],
        cwd=cwd,
        env=clean_env(home),  # PYTHONIOENCODING=utf-8: strict, as most terminals' locales
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_a_file_name_that_is_not_utf8_is_shown_escaped_everywhere(tmp_path: Path) -> None:
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    with open(os.path.join(os.fsencode(work), b"caf\xe9.txt"), "wb") as handle:
        handle.write(b"x")
    run = _rho("--model", "demo", "-q", "what is here?", cwd=work, home=home)
    assert run.returncode == 0, run.stderr
    assert "caf\\xe9.txt" in run.stdout
    assert "Traceback" not in run.stderr
    (session,) = (home / "rho" / "sessions").iterdir()
    results = [
        event["message"]["content"]
        for event in map(json.loads, (session / "trace.jsonl").read_text().splitlines())
        if event["kind"] == "message" and event["message"]["role"] == "tool"
    ]
    assert any("caf\\xe9.txt" in result for result in results)  # what the model read
    stats = _rho("stats", "latest", cwd=work, home=home)
    assert stats.returncode == 0, stats.stderr
    assert "list" in stats.stdout
