"""Timeouts and retries as configuration: AgentConfig fields, --timeout/--retries, the
RHO_AGENT_TIMEOUT/RHO_AGENT_RETRIES variables, YAML, and what a stalled endpoint costs.

The stalled endpoint is a real socket that stops sending; the tests assert outcomes (which
error, how many attempts), never durations.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from rho_adapters.fakes import FakeClock, MemoryExecutor
from rho_adapters.fakes.loopback import LoopbackServer
from rho_adapters.fakes.wire import stall, text_reply
from rho_adapters.model import AnswerLimits, RetryPolicy, Timeouts
from rho_domain.errors import ConfigError
from rho_entry import Agent, AgentConfig, Session
from rho_entry.cli.parser import build_parser
from rho_entry.config.settings import resolve_settings
from rho_entry.model_wiring import calls_https
from rho_entry.wiring import transport_of


@pytest.fixture
def stalled() -> Iterator[LoopbackServer]:
    """An endpoint that sends one chunk of every answer, then nothing."""
    stalls = text_reply("partial answer", faults=(stall(after=1),))
    with LoopbackServer([], rules=[lambda exchange: stalls if exchange.is_chat else None]) as s:
        yield s


@pytest.mark.parametrize("retries", [0, 1])
async def test_a_stalled_endpoint_is_bounded_by_the_configured_timeout_and_retries(
    stalled: LoopbackServer, tmp_path: Path, retries: int
) -> None:
    config = AgentConfig(
        model="m",
        base_url=stalled.base_url,
        working_dir=str(tmp_path),
        model_timeout=0.2,
        model_retries=retries,
    )
    # FakeClock: the backoff between attempts is not slept.
    async with Session(Agent(config), executor=MemoryExecutor(), clock=FakeClock()) as session:
        result = await session.run("hello")
    assert result.status.value == "error"
    assert "ModelTimeout" in (result.error or "") or "timed out" in (result.error or "")
    assert len(stalled.requests) == retries + 1


def test_transport_settings_reach_the_adapter_defaults_stay_otherwise() -> None:
    assert transport_of(AgentConfig()) == {}
    short = transport_of(AgentConfig(model_timeout=3))
    assert short["timeouts"] == Timeouts(connect=3, idle=3, flex_idle=3)
    both = transport_of(AgentConfig(model_timeout=30, model_connect_timeout=2))
    assert both["timeouts"] == Timeouts(connect=2, idle=30, flex_idle=30)
    retry = transport_of(AgentConfig(model_retries=0, model_retry_after_cap=5))["retry"]
    assert retry == RetryPolicy(max_retries=0, max_server_delay=5)
    limits = transport_of(AgentConfig(model_answer_bytes=4096))["limits"]
    assert limits == AnswerLimits(max_bytes=4096)  # the other bounds keep their defaults
    assert transport_of(AgentConfig(model_answer_timeout=60))["limits"].max_seconds == 60


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"model_timeout": 0}, "model_timeout must be a number of seconds, more than 0"),
        ({"model_timeout": float("nan")}, "model_timeout"),
        ({"model_connect_timeout": -1}, "model_connect_timeout"),
        ({"model_retries": -1}, "model_retries must be a whole number"),
        ({"model_retries": True}, "model_retries"),
        # a typo of a million held a run on a down endpoint for days
        ({"model_retries": 1_000_000}, "model_retries must be at most 100"),
        ({"model_retry_after_cap": -0.5}, "model_retry_after_cap"),
        ({"model_answer_timeout": 0}, "model_answer_timeout"),
        ({"model_answer_bytes": 0}, "model_answer_bytes must be a whole number, 1 or more"),
        ({"model_answer_bytes": 1.5}, "model_answer_bytes"),
        # NaN and infinity failed every model request with a ValueError of the JSON encoder
        ({"temperature": float("nan")}, "temperature must be a number from 0 to 2"),
        ({"temperature": float("inf")}, "temperature"),
        ({"temperature": -0.5}, "temperature"),
        # a percentage never compacted, 0 or less compacted before every model call
        ({"compact_threshold": 80}, "compact_threshold must be a share of the context window"),
        ({"compact_threshold": 0}, "compact_threshold"),
        ({"compact_threshold": float("nan")}, "compact_threshold"),
    ],
)
def test_bad_values_are_refused_naming_the_setting(fields: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        AgentConfig(**fields)  # type: ignore[arg-type]


def test_flags_beat_the_environment_and_bad_values_name_their_origin() -> None:
    args = build_parser().parse_args(["--timeout", "7.5", "--retries", "0", "task"])
    flags = {"model_timeout": args.model_timeout, "model_retries": args.model_retries}
    env = {"RHO_AGENT_TIMEOUT": "30", "RHO_AGENT_RETRIES": "4"}
    from_env = resolve_settings({}, env).config
    assert (from_env.model_timeout, from_env.model_retries) == (30.0, 4)
    flagged = resolve_settings(flags, env)
    assert (flagged.config.model_timeout, flagged.config.model_retries) == (7.5, 0)
    assert flagged.sources["model_timeout"] == "flag"
    with pytest.raises(ConfigError, match="--timeout: model_timeout"):
        resolve_settings({"model_timeout": -1.0}, {})
    with pytest.raises(ConfigError, match="--retries: model_retries"):
        resolve_settings({"model_retries": -1}, {})
    assert AgentConfig(model_retries=100).model_retries == 100
    with pytest.raises(ConfigError, match="RHO_AGENT_TIMEOUT='soon'"):
        resolve_settings({}, {"RHO_AGENT_TIMEOUT": "soon"})
    with pytest.raises(ConfigError, match="RHO_AGENT_TIMEOUT: model_timeout"):
        resolve_settings({}, {"RHO_AGENT_TIMEOUT": "0"})
    with pytest.raises(ConfigError, match=r"RHO_AGENT_RETRIES='2\.5'"):
        resolve_settings({}, {"RHO_AGENT_RETRIES": "2.5"})


def test_a_config_file_sets_them_and_a_bad_one_names_file_and_key(tmp_path: Path) -> None:
    good = tmp_path / "agent.yaml"
    good.write_text("model: m\nmodel_timeout: 45\nmodel_retries: 1\nmodel_retry_after_cap: 10\n")
    config = AgentConfig.from_file(good)
    assert (config.model_timeout, config.model_retries, config.model_retry_after_cap) == (
        45,
        1,
        10,
    )
    bad = tmp_path / "bad.yaml"
    bad.write_text("model: m\nmodel_timeout: -3\n")
    with pytest.raises(ConfigError, match=r"bad.yaml: config.model_timeout must be .* got -3"):
        AgentConfig.from_file(bad)


def test_a_line_break_read_with_a_variable_is_refused_naming_it() -> None:
    """A variable read from a file keeps its line break. Before, RHO_AGENT_BASE_URL's was
    httpx's "InvalidURL: Invalid non-printable ASCII character in URL" at the first call, a
    session created, no setting named; RHO_AGENT_MODEL's went to the server, which answered
    that no model 'm\\n' exists."""
    url = "http://gw:pw-env-51c0@gateway.test/v1"
    with pytest.raises(ConfigError) as caught:
        resolve_settings({}, {"RHO_AGENT_BASE_URL": url + "\n"})
    said = str(caught.value)
    assert said.startswith("RHO_AGENT_BASE_URL: base_url 'http://gw:***@gateway.test/v1\\n'")
    assert "has a line break at character 38: set it again without it" in said
    with pytest.raises(ConfigError, match=r"^OPENAI_MODEL: model 'gpt-4o\\n' has a space"):
        resolve_settings({}, {"OPENAI_MODEL": "gpt-4o\n"})
    for name in (" gpt-4o", "gpt-4o ", "gpt\t4o", " "):
        with pytest.raises(ConfigError, match=r"^--model: model .* which no model's name has"):
            resolve_settings({"model": name}, {})
    assert resolve_settings({"model": "Qwen 2.5 Coder"}, {}).config.model == "Qwen 2.5 Coder"
    # pasted from a page: a zero-width space, a no-break space, a bidirectional mark, a C1
    # control were let through (only ASCII was checked), while the error said "in it"
    for name, said in (
        ("gpt-4o\u200b", "U+200B at character 7"),
        ("gpt\u00a04o", "U+00A0 at character 4"),
        ("\u202egpt-4o", "U+202E at character 1"),
        ("gpt\x854o", "U+0085 at character 4"),
    ):
        with pytest.raises(ConfigError, match=re.escape(f"invisible character in it ({said})")):
            resolve_settings({"model": name}, {})
    # -m "$MODEL" with MODEL unset: the empty name was sent to the server as it was
    with pytest.raises(ConfigError, match=r"^--model: model is empty \(an unset shell var"):
        resolve_settings({"model": ""}, {})
    # a stored session's config still loads, whatever its model is called (shown escaped)
    assert AgentConfig(model="gpt-4o\n").model == "gpt-4o\n"


def test_the_certificates_load_ahead_only_for_an_https_endpoint() -> None:
    """``calls_https`` decides whether the CLI loads the CA certificates in a thread before
    the model is built: the URL the model's calls will go to, wherever it comes from."""
    env = {"OPENAI_API_KEY": "k"}
    https = ("https://api.example.com/v1", "HTTPS://api.example.com/v1")
    assert [calls_https(AgentConfig(model="m", base_url=url), env) for url in https] == [True, True]
    assert not calls_https(AgentConfig(model="m", base_url="http://localhost:8000/v1"), env)
    from_env = {**env, "RHO_AGENT_BASE_URL": "https://gw.example.com/v1"}
    assert calls_https(AgentConfig(model="m"), from_env)  # the environment's URL
    assert calls_https(AgentConfig(model="m", provider="openai"), env)  # the provider's default
    assert not calls_https(AgentConfig(model="demo"), from_env)  # offline
    assert not calls_https(AgentConfig(model="m", provider="no-such"), env)  # refused later
