"""``rho-agent serve --model demo``, a newcomer's first try (the main command takes
``--model``), answered "--model: did you mean --poll?". serve takes the endpoint from the
environment: the main command's endpoint options now name their variable, and one it knows
under another name (``--profile``) still gets the nearest option."""

from __future__ import annotations

import pytest

from rho_entry.config.settings import ENV_VARS
from rho_entry.server import serve


def _never(*_: object) -> object:
    raise AssertionError("the command went on past its flags")


def test_serve_names_the_variable_of_an_endpoint_option(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("rho_entry.server.serve.listen", _never)
    given = ["--port=0", "--model", "demo", "--base-url=http://127.0.0.1:8080/v1", "--profile=x"]
    assert serve.main(given) == 1
    err = capsys.readouterr().err
    assert "--model: rho-agent serve takes it from the environment, not as an option: " in err
    assert "RHO_AGENT_MODEL=demo rho-agent serve" in err
    assert "RHO_AGENT_BASE_URL=http://127.0.0.1:8080/v1 rho-agent serve" in err
    assert "did you mean --poll" not in err
    assert "--profile=x: did you mean --allow-profile?" in err
    # each variable named is one the settings read (rho_entry.config.settings)
    read = {variables[0] for variables in ENV_VARS.values()}
    assert set(serve.FROM_ENVIRONMENT.values()) <= read
