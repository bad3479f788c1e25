"""A config's choices that reach every model request, and its switches, are checked when the
config is built (``rho_domain.model_choices``). Before, the library's ``AgentConfig(...)``
took ``temperature="hot"``, ``nan`` or ``-3`` and ``reasoning_effort="extreme"`` (a config
file and ``RHO_AGENT_REASONING_EFFORT`` too), which reached the model request; and
``auto_approve="false"``, a string, was true, so every call ran without asking."""

from __future__ import annotations

from pathlib import Path

import pytest

from rho_domain.approval import Allowed, decide
from rho_domain.config import AgentConfig
from rho_domain.errors import ConfigError
from rho_domain.messages import ToolCall
from rho_domain.permissions import developer_profile
from rho_domain.tools.base import DANGEROUS
from rho_entry.agent import AgentConfig as FileConfig
from rho_entry.config.settings import resolve_settings

BAD = [
    ({"temperature": "hot"}, "temperature must be a number from 0 to 2 (or not set); got 'hot'"),
    ({"temperature": float("nan")}, "temperature must be a number from 0 to 2"),
    ({"temperature": -3}, "temperature must be a number from 0 to 2"),
    ({"temperature": 2.5}, "temperature must be a number from 0 to 2"),
    ({"temperature": True}, "temperature must be a number from 0 to 2"),
    ({"reasoning_effort": "extreme"}, "reasoning_effort must be one of none, minimal, low"),
    ({"reasoning_effort": "High"}, "reasoning_effort must be one of"),
    ({"reasoning_effort": ""}, "reasoning_effort must be one of"),
    ({"auto_approve": "false"}, "auto_approve must be true or false; got 'false'"),
    ({"auto_approve": 1}, "auto_approve must be true or false"),
    ({"auto_compact": "no"}, "auto_compact must be true or false"),
    ({"stream": "false"}, "stream must be true or false"),
    ({"compact_threshold": 0}, "compact_threshold must be a share of the context window"),
    ({"compact_threshold": 5}, "compact_threshold must be a share"),
    ({"compact_threshold": float("nan")}, "compact_threshold must be a share"),
    ({"service_tier": "Flex"}, "service_tier must be a tier's name in lower case, such as auto"),
    ({"service_tier": 1}, "service_tier must be a tier's name in lower case"),
    ({"service_tier": ""}, "service_tier must be a tier's name"),
    ({"service_tier": "flex\nX-Injected: 1"}, "service_tier must be a tier's name"),
]


def test_bad_choices_are_refused_when_the_config_is_built() -> None:
    for fields, message in BAD:
        with pytest.raises(ConfigError) as refused:
            AgentConfig(**fields)  # type: ignore[arg-type]
        assert message in str(refused.value), fields
    good = AgentConfig(temperature=0, reasoning_effort="xhigh", compact_threshold=1, stream=None)
    assert (good.temperature, good.reasoning_effort, good.compact_threshold) == (0, "xhigh", 1)
    assert AgentConfig(temperature=2.0, auto_approve=True).temperature == 2.0
    for tier in ("flex", "priority", "standard_only", "on_demand"):  # Groq's own too
        assert AgentConfig(service_tier=tier).service_tier == tier


def test_the_string_false_no_longer_approves_every_call() -> None:
    # what the loop did with the config's value: a string is true, so a write ran unasked
    call = ToolCall(id="c1", name="write", arguments='{"path": "x", "content": "y"}')
    profile = developer_profile()
    assert not isinstance(decide(profile, call, DANGEROUS), Allowed)  # asked by default
    unasked = decide(profile, call, DANGEROUS, auto_approve="false")  # type: ignore[arg-type]
    assert isinstance(unasked, Allowed)
    with pytest.raises(ConfigError, match="auto_approve must be true or false"):
        AgentConfig(auto_approve="false")  # type: ignore[arg-type]


def test_each_origin_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="RHO_AGENT_REASONING_EFFORT: reasoning_effort must"):
        resolve_settings({}, {"RHO_AGENT_REASONING_EFFORT": "extreme"})
    with pytest.raises(ConfigError, match="--reasoning-effort: reasoning_effort must"):
        resolve_settings({"reasoning_effort": "extreme"}, {})
    assert resolve_settings({}, {"RHO_AGENT_REASONING_EFFORT": "low"}).config.reasoning_effort
    for text, key in (("temperature: .nan\n", "temperature"), ("temperature: 9\n", "temperature")):
        path = tmp_path / "agent.yaml"
        path.write_text(text)
        with pytest.raises(ConfigError, match=rf"agent\.yaml: config\.{key} must be a number"):
            FileConfig.from_file(path)
