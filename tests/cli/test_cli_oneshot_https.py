"""A one-shot against an https endpoint (every cloud provider) imports no httpx either: the
pooled model client is ``CoreClient`` and the SSL context is ``tls_context``'s (before the
twenty-first round's second step, ``httpx.create_ssl_context`` made it: ~90 M instructions
of a one-shot for ``import httpx``). The server is the loopback one behind TLS, trusted
through ``SSL_CERT_FILE`` as httpx would read it.

The CA certificates load in a thread started once the CLI's settings name the https
endpoint (``model_wiring.load_certificates_ahead``), beside the rest of start-up; the model
client's ``shared_ssl_context()`` waits for that one context."""

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

# Which threads made the verifying context (a profile on threads ``threading`` starts, so
# the main thread runs unobserved), and how many contexts the process made, after ``_RUN``'s
# line
_WATCH = """
import threading
made_in = []
threading.setprofile(
    lambda frame, event, arg: event == "call" and frame.f_code.co_name == "verifying_context"
    and made_in.append(threading.current_thread().name)
)
"""
_REPORT = """
from rho_adapters.model.tls_context import ssl_contexts_created
print(json.dumps({"made_in": made_in, "created": ssl_contexts_created()}))
"""


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
        child = [sys.executable, "-c", _WATCH + _RUN + _REPORT, *args]
        done = subprocess.run(child, cwd=work, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    line, made = done.stdout.splitlines()
    run = json.loads(line)
    assert run["code"] == 0, run["err"]
    assert run["out"] == "Here: notes.txt.\n"
    assert "notes.txt" in server.requests[1]["messages"][-1]["content"]  # the real listing
    assert set(server.alpn) == {"http/1.1"}  # every connection was TLS
    assert _loaded(run["modules"], ("ssl", "certifi")) == ["certifi", "certifi.core", "ssl"]
    assert _loaded(run["modules"], NOT_IN_A_ONE_SHOT) == []
    # the certificates loaded beside start-up, in the thread the CLI started, once
    assert json.loads(made) == {"made_in": ["rho-agent-ssl-context"], "created": 1}
