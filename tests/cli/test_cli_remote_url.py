"""A ``--server`` URL typed without its scheme (``127.0.0.1:8765``, ``localhost:8765``) is
refused before anything is sent, naming the flag and the URL meant; ``AgentClient`` refuses
it naming its argument. Before, both said httpx's words ("Request URL is missing an
'http://' or 'https://' protocol") after "cannot reach", as if nothing answered there.
And a token the server refuses is said to be ``RHO_AGENT_SERVER_TOKEN``'s when it was."""

from __future__ import annotations

import argparse
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from rho_domain.errors import ConfigError
from rho_entry.cli import exit_codes
from rho_entry.cli.remote import run_remote
from rho_entry.client import AgentClient

BARE = [
    ("127.0.0.1:8765", "(did you mean http://127.0.0.1:8765?)"),
    ("localhost:8765", "(did you mean http://localhost:8765?)"),  # "localhost" read as a scheme
    ("http://127.0.0.1:99999", "the port must be a number from 1 to 65535"),
    ("http://127.0.0.1:8765\n", "a line break"),
]


@pytest.mark.parametrize(("url", "hint"), BARE)
def test_the_flag_is_named_before_anything_is_sent(
    url: str, hint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    args = argparse.Namespace(server=url, list=True)
    assert run_remote(args, {}) == exit_codes.USAGE
    said = capsys.readouterr().err
    assert said.startswith("rho-agent: --server "), said
    assert hint in said
    assert "cannot reach" not in said
    assert "protocol" not in said


@pytest.mark.parametrize(("url", "hint"), BARE)
def test_the_client_names_its_argument(url: str, hint: str) -> None:
    with pytest.raises(ConfigError, match=r"^AgentClient base_url ") as caught:
        AgentClient(url, token="t", environ={})
    assert hint in str(caught.value)


class _Refuses(BaseHTTPRequestHandler):
    """Answers every request as ``rho-agent serve`` answers a wrong token."""

    def do_GET(self) -> None:
        body = json.dumps({"error": {"code": "unauthorized", "message": "not this token"}})
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def refusing_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Refuses)
    # shutdown() waits for the loop's next poll: 0.5 s by default, a teardown's whole cost
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_a_refused_token_from_the_variable_is_said_to_be_the_variable_s(
    refusing_server: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The server's words cannot know where the client took its token from: a stale
    ``RHO_AGENT_SERVER_TOKEN`` (another server's) wins over the file the server wrote."""
    args = argparse.Namespace(server=refusing_server, list=True)
    env = {"RHO_AGENT_SERVER_TOKEN": "old", "RHO_AGENT_HOME": str(tmp_path)}
    assert run_remote(args, env) == exit_codes.USAGE
    said = capsys.readouterr().err
    assert "not this token (this command sent RHO_AGENT_SERVER_TOKEN, which wins over" in said
    assert run_remote(args, {"RHO_AGENT_HOME": str(tmp_path)}) == exit_codes.USAGE
    assert "RHO_AGENT_SERVER_TOKEN" not in capsys.readouterr().err  # no token was sent
