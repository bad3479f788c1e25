"""A server's client cancels only what the server may drive: a session whose stored profile
grants more than the server allows "cannot be driven (403)" (docs/server.md), and stopping its
run is driving it. Before, ``POST .../cancel`` checked only that the session lies in the
roots, so a client of a readonly server stopped a developer's run that a ``rho-agent`` in
the same directory was driving (``cancel requested``, the run ended ``cancelled``)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from server_support import UvicornThread, app_for, http, place, rho_popen, wait_for

from rho_adapters.fakes import ScriptedModel
from rho_adapters.fakes.loopback import LoopbackServer
from rho_adapters.fakes.wire import stall, text_reply


def _running(server: UvicornThread) -> str | None:
    """The id of a session the server lists as running, if any."""
    rows = http().get(f"{server.url}/api/sessions", headers=server.auth).json()["sessions"]
    return next((r["id"] for r in rows if r["liveness"] == "running"), None)


def test_a_client_cannot_cancel_a_run_the_server_may_not_drive(tmp_path: Path) -> None:
    where = place(tmp_path)
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "RHO_AGENT_HOME": str(where.home),
        "OPENAI_API_KEY": "sk-test",
        "NO_COLOR": "1",
        **({"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {}),
    }
    with LoopbackServer([text_reply("late", faults=(stall(seconds=60),))]) as model:
        cli = rho_popen(
            *("--profile", "developer", "--base-url", model.base_url, "-m", "m", "a task"),
            cwd=where.work,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            app = app_for(where, ScriptedModel([]), profiles=("readonly",))
            with UvicornThread(app) as server:
                sid = wait_for(lambda: _running(server), "the CLI's run")
                cancelled = http().post(
                    f"{server.url}/api/sessions/{sid}/cancel", headers=server.auth
                )
                assert cancelled.status_code == 403, cancelled.text  # 202 before
                assert cancelled.json()["error"]["field"] == "profile"
                assert "grants more than readonly" in cancelled.json()["error"]["message"]
            assert cli.poll() is None  # still running: not cancelled
        finally:
            cli.kill()
            cli.wait(10)
