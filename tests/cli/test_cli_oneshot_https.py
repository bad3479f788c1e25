"""A one-shot against an https endpoint (every cloud provider) imports no httpx either: the
pooled model client is ``CoreClient`` and the SSL context is ``tls_context``'s (before the
twenty-first round's second step, ``httpx.create_ssl_context`` made it: ~90 M instructions
of a one-shot for ``import httpx``). The server is the loopback one behind TLS, trusted
through ``SSL_CERT_FILE`` as httpx would read it."""

from __future__ import annotations

import json
import os
import ssl
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "model"))  # tls_support

from test_cli_oneshot_imports import _RUN, NOT_IN_A_ONE_SHOT, _loaded
from tls_support import self_signed

from rho_adapters.fakes.loopback import LoopbackServer
from rho_adapters.fakes.wire import call, text_reply, tool_reply


def test_an_https_one_shot_lists_the_files_without_httpx(tmp_path: Path) -> None:
    cert, key = self_signed(tmp_path)
    serving = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    serving.load_cert_chain(cert, key)
    serving.set_alpn_protocols(["http/1.1"])
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("hello\n")
    env = {**os.environ, "HOME": str(tmp_path), "RHO_AGENT_HOME": str(tmp_path / "rho")}
    env.update(NO_COLOR="1", OPENAI_API_KEY="unused", SSL_CERT_FILE=str(cert))
    env.pop("SSL_CERT_DIR", None)
    replies = [tool_reply(call("list", {"path": "."})), text_reply("Here: notes.txt.")]
    with LoopbackServer(replies, ssl_context=serving) as server:
        assert server.base_url.startswith("https://")
        args = ["--base-url", server.base_url, "-m", "m", "-y", "list the files"]
        done = subprocess.run(
            [sys.executable, "-c", _RUN, *args], cwd=work, env=env, capture_output=True, text=True
        )
    assert done.returncode == 0, done.stderr
    run = json.loads(done.stdout)
    assert run["code"] == 0, run["err"]
    assert run["out"] == "Here: notes.txt.\n"
    assert "notes.txt" in server.requests[1]["messages"][-1]["content"]  # the real listing
    assert set(server.alpn) == {"http/1.1"}  # every connection was TLS
    assert _loaded(run["modules"], ("ssl", "certifi")) == ["certifi", "certifi.core", "ssl"]
    assert _loaded(run["modules"], NOT_IN_A_ONE_SHOT) == []
