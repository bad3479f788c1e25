"""``rho-agent --server URL``: a terminal drives an agent that runs in ``rho-agent serve``."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from server_support import Serve, place, rho_cli, serve_env

from rho_adapters.fakes.loopback import LoopbackServer
from rho_adapters.fakes.wire import call, text_reply, tool_reply


def _cli(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return rho_cli(*args, cwd=cwd, env=env)


def test_a_task_runs_on_the_server_and_approvals_stop_it_without_a_terminal(
    tmp_path: Path,
) -> None:
    where = place(tmp_path)
    write = call("write", {"path": "out.txt", "content": "hi\n"}, call_id="c1")
    replies = [
        tool_reply(call("list", {"path": "."})),
        text_reply("Two files here."),
        tool_reply(write),
    ]
    with LoopbackServer(replies) as model:
        env = serve_env(where.home, model.base_url, RHO_AGENT_SERVER_PROFILES="readonly,developer")
        serve = Serve(where.work, env)
        client_dir = tmp_path / "elsewhere"
        client_dir.mkdir()
        # the same user's config directory: the client finds the token serve wrote there
        client_env = {
            **{k: v for k, v in env.items() if k == "PYTHONPATH"},
            "PATH": env["PATH"],
            "HOME": str(tmp_path),
            "RHO_AGENT_HOME": str(where.home),
            "NO_COLOR": "1",
        }
        try:
            done = _cli("--server", serve.url, "what is here?", cwd=client_dir, env=client_env)
            assert done.returncode == 0, done.stderr
            assert "Two files here." in done.stdout
            assert "session" in done.stderr
            asked = _cli(
                "--server",
                serve.url,
                "--profile",
                "developer",
                "write out.txt",
                cwd=client_dir,
                env=client_env,
            )
            assert asked.returncode == 4, asked.stderr
            assert "--resume" in asked.stderr
            listed = _cli("--server", serve.url, "--list", cwd=client_dir, env=client_env)
            assert listed.returncode == 0
            assert len(listed.stdout.splitlines()) == 3  # the header, two sessions
            assert "awaiting_approval" in listed.stdout
        finally:
            assert serve.stop() == 0
    assert not (where.work / "out.txt").exists()


def test_an_unreachable_server_is_named(tmp_path: Path) -> None:
    # PYTHONPATH: the sources under test, not the venv's editable install (another checkout)
    env = {"PATH": "/usr/bin:/bin", **{k: v for k, v in os.environ.items() if k == "PYTHONPATH"}}
    done = _cli("--server", "http://127.0.0.1:9", "hi", cwd=tmp_path, env=env)
    assert done.returncode == 1
    assert "http://127.0.0.1:9" in done.stderr
