"""The reference implementation lost the configured databases on two CLI paths (its bug 17):
``--shell-mode`` rebuilt the registry without them, and ``--config FILE`` never read the
global ``databases.yaml``. Here both keep them: the model is offered the database tool."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from cli_support import rho

from rho_adapters.fakes.loopback import LoopbackServer
from rho_adapters.fakes.wire import text_reply


def test_shell_mode_and_a_config_file_keep_the_global_databases(tmp_path: Path) -> None:
    home = tmp_path
    (home / "rho").mkdir()
    db = tmp_path / "d.sqlite"
    with sqlite3.connect(db) as connection:
        connection.execute("CREATE TABLE t (a)")
    (home / "rho" / "databases.yaml").write_text(
        f"databases:\n  main:\n    type: sqlite\n    path: {db}\n"
    )
    (tmp_path / "c.yaml").write_text("profile: readonly\n")
    forms: tuple[tuple[str, ...], ...] = (
        ("--shell-mode", "unrestricted"),
        ("-c", str(tmp_path / "c.yaml")),
        ("--profile", "developer", "--shell-mode", "restricted"),
    )
    replies = [text_reply("ok") for _ in forms]
    with LoopbackServer(replies) as server:
        for form in forms:
            done = rho(
                "--base-url", server.base_url, "-m", "m", "-q", *form, "hi",
                cwd=tmp_path, home=home, OPENAI_API_KEY="sk-test",
            )  # fmt: skip
            assert done.returncode == 0, (form, done.stderr)
    offered = [{t["function"]["name"] for t in r["tools"]} for r in server.requests]
    assert len(offered) == len(forms)
    for form, names in zip(forms, offered, strict=True):
        assert {"sqlite", "bash", "read"} <= names, form
