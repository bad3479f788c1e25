"""A base URL the environment gives the library (``OPENAI_BASE_URL``, ``RHO_AGENT_BASE_URL``)
is refused naming that variable, as the CLI names it: before, the library checked it as the
config's ``base_url`` and its error named a key the user never wrote."""

from __future__ import annotations

from pathlib import Path

import pytest

from rho_domain.errors import ConfigError
from rho_entry import Agent, AgentConfig, Session

BAD = [
    ("localhost:8000/v1", "did you mean http://localhost:8000/v1?"),
    ("http://localhost:0/v1", "the port must be a number from 1 to 65535"),
    ("http://localhost:8000/v1\n", "a line break"),
    ("http://[::1:8000/v1", "a bracket left open"),
]


@pytest.mark.parametrize("variable", ["OPENAI_BASE_URL", "RHO_AGENT_BASE_URL"])
@pytest.mark.parametrize(("url", "hint"), BAD)
def test_a_bad_base_url_variable_is_named_by_the_library(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, variable: str, url: str, hint: str
) -> None:
    for name in ("RHO_AGENT_BASE_URL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv(variable, url)
    config = AgentConfig(model="gpt-5-mini", working_dir=str(tmp_path))
    with pytest.raises(ConfigError) as caught:
        Session(Agent(config, environ={}))
    message = str(caught.value)
    assert message.startswith(f"{variable} "), message
    assert "base_url" not in message
    assert hint in message


def test_the_config_s_own_base_url_is_still_named_base_url(tmp_path: Path) -> None:
    config_error = pytest.raises(ConfigError, match=r"^base_url 'localhost:1/v1' is not an")
    with config_error:
        AgentConfig(model="m", base_url="localhost:1/v1", working_dir=str(tmp_path))
