"""The refusal of a bare ``--approve d1`` shows a delegate call with the sub-agent's call its
digest covers: "it waits now as delegate {...}: --approve d1@DIGEST" offered a digest that
approves the sub-agent's write, which the message did not show (the answer approves that
write; 037e49c made the digest cover it)."""

from __future__ import annotations

import json
from pathlib import Path

from cli_support import rho
from test_cli_approval_digest import DELEGATION

from rho_adapters.fakes.loopback import LoopbackServer

DEV = ("--profile", "developer")


def test_a_bare_approval_of_a_delegate_call_shows_the_sub_agents_call(tmp_path: Path) -> None:
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    with LoopbackServer(DELEGATION) as server:
        first = rho(
            *("--base-url", server.base_url, "-m", "fake", *DEV, "--json", "delegate a note"),
            cwd=work,
            home=home,
        )
        assert first.returncode == 4, first.stderr
        parent = str(json.loads(first.stdout.splitlines()[-1])["session_id"])
        bare = rho(
            *("--resume", parent, *DEV, "--base-url", server.base_url, "--approve", "d1"),
            cwd=work,
            home=home,
        )
    assert bare.returncode == 1
    assert "it waits now as delegate" in bare.stderr
    assert 'its sub-agent asks to run write {"path": "note.txt"' in bare.stderr  # not before
    assert not (work / "note.txt").exists()
