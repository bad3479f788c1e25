"""config.yaml as the file store writes it (``yaml_emit.emit``) is, byte for byte, what
``yaml.dump(..., Dumper=CSafeDumper, sort_keys=False)`` wrote before: for every built-in
profile, the configs of the docs (README's databases, a profile file, hooks, MCP servers) and
the store tests' configs; a value it cannot write is refused, naming where it is.
tests/properties/test_properties_yaml_emit.py compares the two on generated trees."""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path
from typing import Any

import pytest
import yaml

from rho_adapters.codec import config_to_dict
from rho_adapters.store import FileSessionStore
from rho_adapters.store.meta import stored_config
from rho_adapters.store.yaml_emit import emit
from rho_domain.config import AgentConfig, Budget, DatabaseConfig, HookConfig
from rho_domain.errors import StoreError
from rho_domain.mcp_config import McpServerConfig
from rho_domain.permissions import BUILTIN_PROFILES
from rho_domain.ports.store import SessionRecord
from rho_entry.config.config_files import load_agent_config, load_profile_file
from rho_entry.config.databases_config import load_databases_file

ROOT = Path(__file__).parents[2]
# the text before was libyaml's emitter's, as PyYAML's wheels bundle it
pytestmark = pytest.mark.skipif(not yaml.__with_libyaml__, reason="PyYAML without libyaml")


def _docs_blocks(name: str) -> list[str]:
    return re.findall(r"```yaml[^\n]*\n(.*?)```", (ROOT / name).read_text(), re.S)


def _docs_configs(tmp: Path) -> list[AgentConfig]:
    """The configs the docs show, loaded as rho-agent loads them."""
    readme = tmp / "databases.yaml"
    readme.write_text(_docs_blocks("README.md")[0])
    profile = tmp / "ops.yaml"
    profile.write_text(_docs_blocks("docs/extending.md")[0])
    hooks, mcp = tmp / "hooks.yaml", tmp / "mcp.yaml"
    hooks.write_text(_docs_blocks("docs/hooks.md")[0])
    mcp.write_text(_docs_blocks("docs/mcp.md")[0])
    return [
        AgentConfig(databases=load_databases_file(readme, {"PROD_DB_PASSWORD": "x"})),
        AgentConfig(profile=load_profile_file(profile)),
        load_agent_config(hooks),
        load_agent_config(mcp),
    ]


CONFIGS = [
    *(AgentConfig(profile=build()) for build in BUILTIN_PROFILES.values()),
    AgentConfig(profile="developer", system_prompt="Review {{ repo }}.\n\nBe brief: it's late."),
    AgentConfig(
        system_prompt="You are a careful agent. " * 20,
        vars={"team": "sre", "on": "yes", "when": "2001-12-14", "n": "017", "empty": ""},
        model="claude-sonnet-4-5",
        base_url="http://127.0.0.1:8080/v1",
        databases={
            "prod": DatabaseConfig(
                engine="postgres",
                dsn="postgresql://app:hunter2@db.internal:5432/prod",
                port=5432,
                password_env="PGPASSWORD",
                options={"ssl": True, "sslmode": "require", "timeout": 1.5, "password": "x"},
            )
        },
        mcp_servers={
            "tickets": McpServerConfig(command=("python", "tickets server.py"), call_timeout=30),
            "web": McpServerConfig(url="https://mcp.example.com/mcp", read_only_tools=("get",)),
        },
        hooks=HookConfig(before_tool=("myhooks:guard",), timeout=3.0),
        budget=Budget(max_cost_usd=1.5, max_wall_seconds=1e300, session_max_turns=7),
        response_format={"type": "json_schema", "json_schema": {"name": "a: b", "strict": True}},
        output_schema={"type": "object", "properties": {"é": {"type": ["string", "null"]}}},
        temperature=0.0,
        stream=False,
        tool_timeout=0.5,
        store="postgresql://u:p@h/db",
    ),
]


def _both(config: AgentConfig) -> tuple[str, str]:
    data = stored_config(config_to_dict(config))
    return emit(data), yaml.dump(data, Dumper=yaml.CSafeDumper, sort_keys=False)


@pytest.mark.parametrize("config", CONFIGS, ids=range(len(CONFIGS)))
def test_a_config_is_written_as_csafedumper_wrote_it(config: AgentConfig) -> None:
    ours, theirs = _both(config)
    assert ours == theirs


def test_the_docs_configs_are_written_as_csafedumper_wrote_them(tmp_path: Path) -> None:
    for config in _docs_configs(tmp_path):
        ours, theirs = _both(config)
        assert ours == theirs


async def test_the_store_writes_it_and_reads_it_back(tmp_path: Path) -> None:
    store = FileSessionStore(tmp_path)
    config = CONFIGS[-1]
    await store.create(SessionRecord(id="s1", created_at=1.0, config=config))
    await store.release("s1")
    assert (tmp_path / "s1" / "config.yaml").read_text() == _both(config)[1]
    reopened, _ = await store.open("s1")
    await store.release("s1")
    assert reopened.config.mcp_servers == config.mcp_servers
    assert reopened.config.vars == config.vars  # "yes", "017", "" stay strings


async def test_a_config_it_cannot_write_is_refused_before_the_session_is_made(
    tmp_path: Path,
) -> None:
    since = DatabaseConfig(engine="sqlite", path="a.db", options={"since": date(2001, 12, 14)})
    store = FileSessionStore(tmp_path)
    record = SessionRecord(id="s1", created_at=1.0, config=AgentConfig(databases={"a": since}))
    with pytest.raises(StoreError, match=r"a date value .* at databases\.a\.options\.since"):
        await store.create(record)
    assert list(tmp_path.iterdir()) == []


class _Name(str):
    pass


@pytest.mark.parametrize(
    ("data", "where", "what"),
    [
        ({"a": {"b": [1, {"c": b"x"}]}}, "a.b[1].c", "a bytes"),
        ({"a": [1, 2, {"x": object()}]}, "a[2].x", "an object"),
        ({"profile": {"name": "\ud800"}}, "profile.name", "lone surrogate"),
        ({"k": {(1, 2): 3}}, "k[(1, 2)]", "a tuple"),
        ({"n": _Name("x")}, "n", "a _Name"),
        ({1: {"when": date(2001, 12, 14)}}, "[1].when", "a date"),
    ],
)
def test_a_value_it_cannot_write_is_refused_naming_where(data: Any, where: str, what: str) -> None:
    with pytest.raises(StoreError, match=re.escape(f"at {where}")) as refused:
        emit(data)
    assert what.split()[-1] in str(refused.value)
