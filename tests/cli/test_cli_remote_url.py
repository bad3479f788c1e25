"""A ``--server`` URL typed without its scheme (``127.0.0.1:8765``, ``localhost:8765``) is
refused before anything is sent, naming the flag and the URL meant; ``AgentClient`` refuses
it naming its argument. Before, both said httpx's words ("Request URL is missing an
'http://' or 'https://' protocol") after "cannot reach", as if nothing answered there."""

from __future__ import annotations

import argparse

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
