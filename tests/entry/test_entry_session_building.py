"""What a new Session builds that a service pays for each request (issue 33: a Session per
request, 1,000 at once): the agent's config is not copied when the endpoint check runs on a
config that names its own base URL (an ``attrs.evolve`` of ``AgentConfig``, its validators
run again, about 65 µs a Session); the environment's base URL still reaches the check."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from types import FrameType

from rho_domain.config import AgentConfig
from rho_entry import Agent, Session
from rho_entry.config.endpoint_checks import missing_endpoint

_CONFIG_INIT = "<attrs generated methods rho_domain.config.AgentConfig>"


def configs_built(work: Callable[[], object]) -> int:
    """How many ``AgentConfig``s ``work()`` built (a profile hook on attrs' own generated
    ``__init__`` of the class: what ran, not a stand-in for it)."""
    built = 0

    def hook(frame: FrameType, event: str, _arg: object) -> None:
        nonlocal built
        code = frame.f_code
        if event == "call" and code.co_name == "__init__" and code.co_filename == _CONFIG_INIT:
            built += 1

    sys.setprofile(hook)
    try:
        work()
    finally:
        sys.setprofile(None)
    return built


def test_a_session_of_a_config_with_its_base_url_copies_no_config(tmp_path: Path) -> None:
    config = AgentConfig(
        model="fake-model", base_url="http://127.0.0.1:9/v1", working_dir=str(tmp_path)
    )
    agent = Agent(config, environ={})
    assert configs_built(lambda: Session(agent)) == 0  # was 1: missing_endpoint's evolve
    assert configs_built(lambda: missing_endpoint(config, {})) == 0
    assert configs_built(lambda: AgentConfig(model="m", working_dir=str(tmp_path))) == 1


def test_the_environment_s_base_url_is_still_the_one_checked(tmp_path: Path) -> None:
    config = AgentConfig(model="gpt-5-mini", working_dir=str(tmp_path))
    env = {"OPENAI_BASE_URL": "https://api.openai.com/v1"}
    missing = missing_endpoint(config, env)
    assert missing is not None
    assert missing.startswith("no API key for https://api.openai.com/v1, the openai API")
    assert missing_endpoint(config, {**env, "OPENAI_API_KEY": "sk-test"}) is None
    assert missing_endpoint(config, {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}) is None
