"""``rho-agent --server URL --list`` prints what the server lists with terminal controls
shown, not obeyed, as the local ``--list`` does: a session's status comes from its stored
``meta.json`` (whoever can write the server's store writes it), and the server lists it as
text. Before, the remote listing printed it raw: an OSC sequence retitled the terminal and
a CSI cleared the screen of whoever listed the server's sessions."""

from __future__ import annotations

import json
import os
from pathlib import Path

from server_support import UvicornThread, app_for, http, place, rho_cli, wait_for

from rho_adapters.fakes import ScriptedModel, text

CONTROLS = "\x1b]0;owned\x07\x1b[2J\u009b31m\u202e"


def test_the_remote_listing_shows_stored_text_escaped(tmp_path: Path) -> None:
    where = place(tmp_path)
    with UvicornThread(app_for(where, ScriptedModel([text("Hello.")]))) as server:
        created = http().post(
            f"{server.url}/api/sessions", json={"prompt": "hi"}, headers=server.auth
        )
        sid = created.json()["id"]
        meta = where.home / "sessions" / sid / "meta.json"
        wait_for(lambda: _let_go(meta), "the run's end, and its session let go")
        stored = json.loads(meta.read_text())
        stored["status"] = "completed" + CONTROLS
        meta.write_text(json.dumps(stored))
        env = {
            "PATH": os.environ["PATH"],
            "HOME": str(tmp_path),
            "RHO_AGENT_SERVER_TOKEN": server.token,
            "NO_COLOR": "1",
            **({"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {}),
        }
        listed = rho_cli("--server", server.url, "--list", env=env, cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert sid in listed.stdout
    assert not any(ch in listed.stdout for ch in "\x1b\x07\u009b\u202e"), ascii(listed.stdout)
    assert "completed\\x1b]0;owned\\x07\\x1b[2J\\x9b31m\\u202e" in listed.stdout


def _let_go(meta: Path) -> bool:
    """The run ended and no process holds its session: meta.json is its holder's to rewrite
    (a heartbeat, the close) until then, which wrote over the forged status."""
    stored = json.loads(meta.read_text())
    return bool(stored["status"] == "completed" and stored.get("pid") is None)
