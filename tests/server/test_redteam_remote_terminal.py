"""Red team of the remote client's terminal (issue 32): ``rho-agent --server URL`` prints the
server's and the model's text escaped on a terminal, as the local CLI does.

A real ``rho-agent serve`` runs a model (the loopback fake) whose answer carries cursor moves,
a window-title command and a bidi override; the client runs on a pseudo-terminal with
``--quiet`` (before the fix it wrote the answer raw) and ``--list``.
"""

from __future__ import annotations

import os
import pty
import select
import subprocess
import time
from pathlib import Path

from server_support import Serve, place, rho_popen, serve_env

import rho_entry
from rho_adapters.fakes.loopback import LoopbackServer
from rho_adapters.fakes.wire import text_reply

ANSWER = "done\x1b[1A\x1b[2K\x1b]0;OWNED\x07fine\u202egnp.exe"


def _on_a_terminal(*args: str, cwd: Path, env: dict[str, str]) -> bytes:
    """Run the client with its stdout and stderr on a pseudo-terminal; every byte it wrote."""
    master, slave = pty.openpty()
    proc = rho_popen(
        *args,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=slave,
        stderr=slave,
        close_fds=True,
    )
    os.close(slave)
    raw = b""
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.5)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # the child closed the terminal
                    break
                if not chunk:
                    break
                raw += chunk
            elif proc.poll() is not None:
                break
        proc.wait(timeout=10)
    finally:
        os.close(master)
    return raw


def test_the_remote_answer_and_list_are_escaped_on_a_terminal(tmp_path: Path) -> None:
    where = place(tmp_path)
    sources = str(Path(rho_entry.__file__).parents[1])
    with LoopbackServer([text_reply(ANSWER)]) as model:
        # both processes run these sources; the client finds the server's token (if it
        # writes one) in the same configuration directory
        env = serve_env(where.home, model.base_url, PYTHONPATH=sources)
        serve = Serve(where.work, env)
        client_env = {
            "PATH": env["PATH"],
            "HOME": str(tmp_path),
            "RHO_AGENT_HOME": env["RHO_AGENT_HOME"],
            "NO_COLOR": "1",
            "PYTHONPATH": sources,
            "TERM": "xterm",
        }
        try:
            answer = _on_a_terminal(
                "--server", serve.url, "--quiet", "hi", cwd=tmp_path, env=client_env
            )
            listed = _on_a_terminal("--server", serve.url, "--list", cwd=tmp_path, env=client_env)
        finally:
            assert serve.stop() == 0
    text = answer.decode(errors="replace")
    assert "done\\x1b[1A\\x1b[2K\\x1b]0;OWNED\\x07fine\\u202egnp.exe" in text, text
    for raw in (answer, listed):
        assert b"\x1b" not in raw, raw
        assert "\u202e".encode() not in raw, raw
