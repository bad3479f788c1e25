"""Settings precedence: flags > environment > template suggestions > config file."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest

from rho_domain.config import AgentConfig
from rho_domain.errors import ConfigError
from rho_domain.permissions import ShellMode, builtin_profile
from rho_entry.config.home import config_dir
from rho_entry.config.settings import api_key_variable, check_endpoint, resolve_settings


def test_flag_beats_env_beats_file(tmp_path: Path) -> None:
    base = AgentConfig(model="from-file", max_turns=3, working_dir=str(tmp_path))
    env = {"OPENAI_MODEL": "from-openai-env", "RHO_AGENT_MAX_TURNS": "9"}
    settings = resolve_settings({}, env, base=base)
    assert settings.config.model == "from-openai-env"
    assert settings.config.max_turns == 9
    env["RHO_AGENT_MODEL"] = "from-rho-env"
    assert resolve_settings({}, env, base=base).config.model == "from-rho-env"
    flagged = resolve_settings({"model": "from-flag"}, env, base=base)
    assert flagged.config.model == "from-flag"
    assert flagged.sources["model"] == "flag"


def test_template_suggestion_is_below_env() -> None:
    settings = resolve_settings({}, {}, suggested={"model": "suggested"})
    assert settings.config.model == "suggested"
    env = {"OPENAI_MODEL": "env"}
    assert resolve_settings({}, env, suggested={"model": "suggested"}).config.model == "env"


def test_bad_env_values_name_the_variable() -> None:
    with pytest.raises(ConfigError, match="RHO_AGENT_MAX_TURNS"):
        resolve_settings({}, {"RHO_AGENT_MAX_TURNS": "many"})
    with pytest.raises(ConfigError, match="RHO_AGENT_AUTO_APPROVE"):
        resolve_settings({}, {"RHO_AGENT_AUTO_APPROVE": "perhaps"})
    # 5,000 digits (past what int reads): quoted by its start, not a screen of nines
    with pytest.raises(ConfigError) as caught:
        resolve_settings({}, {"RHO_AGENT_CONTEXT_WINDOW": "9" * 5000})
    assert str(caught.value) == (
        f"RHO_AGENT_CONTEXT_WINDOW={'9' * 40!r}... (5,000 characters): expected an integer"
    )


def test_an_env_value_that_is_not_utf8_names_the_variable_and_the_byte() -> None:
    # Python hands such bytes on as lone surrogates: OPENAI_BASE_URL's failed as the session
    # was stored ("config.yaml cannot hold a string with a lone surrogate ... at base_url"),
    # RHO_AGENT_PROFILE's as "unknown profile 'read\udcffonly'".
    for variable, raw in (
        ("OPENAI_BASE_URL", b"http://127.0.0.1:9/v\xff"),
        ("RHO_AGENT_PROFILE", b"read\xffonly"),
        ("RHO_AGENT_MODEL", b"caf\xe9"),  # Latin-1, not UTF-8
    ):
        value = raw.decode("utf-8", "surrogateescape")
        offset = raw.index(b"\xff") if b"\xff" in raw else 3
        with pytest.raises(ConfigError) as refused:
            resolve_settings({}, {variable: value})
        assert str(refused.value) == (
            f"{variable} is not UTF-8 text (byte 0x{raw[offset]:02x} at offset {offset}); "
            "rho-agent reads its settings from the environment as UTF-8"
        )
    assert resolve_settings({}, {"RHO_AGENT_MODEL": "café"}).config.model == "café"


@pytest.mark.parametrize(
    ("flags", "env", "origin"),
    [
        ({"max_turns": -3}, {}, "--max-turns: max_turns must be a whole number >= 0"),
        ({}, {"RHO_AGENT_MAX_TURNS": "-1"}, "RHO_AGENT_MAX_TURNS: max_turns must be"),
        ({"context_window": 0}, {}, "--context-window: context_window must be a positive"),
        ({}, {"RHO_AGENT_CONTEXT_WINDOW": "-5"}, "RHO_AGENT_CONTEXT_WINDOW: context_window"),
    ],
)
def test_out_of_range_counts_are_refused_naming_their_origin(
    flags: dict[str, int], env: dict[str, str], origin: str
) -> None:
    with pytest.raises(ConfigError, match=origin):
        resolve_settings(flags, env)


def test_out_of_range_counts_are_refused_for_library_users_and_config_files(
    tmp_path: Path,
) -> None:
    from rho_entry.config.config_files import load_agent_config

    with pytest.raises(ConfigError, match="max_turns must be a whole number >= 0"):
        AgentConfig(max_turns=-1)
    with pytest.raises(ConfigError, match="context_window must be a positive integer"):
        AgentConfig(context_window=0)
    assert AgentConfig(max_turns=0).max_turns == 0  # 0 and None: no limit
    assert AgentConfig(max_turns=None).max_turns is None
    path = tmp_path / "agent.yaml"
    path.write_text("max_turns: -4\n")
    with pytest.raises(ConfigError, match=rf"{path}: config\.max_turns must be a whole number"):
        load_agent_config(path)


def test_shell_mode_changes_only_the_shell() -> None:
    settings = resolve_settings({"profile": "readonly", "shell_mode": "unrestricted"}, {})
    profile = settings.config.profile
    assert not isinstance(profile, str)
    assert profile.shell is ShellMode.UNRESTRICTED
    assert profile.name == "readonly"
    assert attrs.evolve(profile, shell=ShellMode.RESTRICTED) == builtin_profile("readonly")


def test_working_dir_is_made_absolute_and_checked(tmp_path: Path) -> None:
    settings = resolve_settings({"working_dir": str(tmp_path)}, {})
    assert settings.config.working_dir == str(tmp_path.resolve())
    with pytest.raises(ConfigError, match="does not exist"):
        resolve_settings({"working_dir": str(tmp_path / "missing")}, {})


def test_a_working_dir_that_is_a_file_says_so_and_names_its_origin(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("x\n")
    readme = str(tmp_path / "README.md")
    with pytest.raises(ConfigError, match=r"^--working-dir: .* is a file, not a directory$"):
        resolve_settings({"working_dir": readme}, {})
    with pytest.raises(ConfigError, match=r"^RHO_AGENT_WORKING_DIR: .*missing' does not exist$"):
        resolve_settings({}, {"RHO_AGENT_WORKING_DIR": str(tmp_path / "missing")})


def test_an_unknown_profile_names_the_flag_or_variable_it_came_from() -> None:
    with pytest.raises(ConfigError, match=r"^RHO_AGENT_PROFILE: unknown profile 'nope'"):
        resolve_settings({}, {"RHO_AGENT_PROFILE": "nope"})
    with pytest.raises(ConfigError, match=r"^--profile: unknown profile 'nope'"):
        resolve_settings({"profile": "nope"}, {"RHO_AGENT_PROFILE": "readonly"})
    with pytest.raises(ConfigError, match=r"^the template's profile: unknown profile 'nope'"):
        resolve_settings({}, {}, suggested={"profile": "nope"})
    with pytest.raises(ConfigError, match=r"^ops\.yaml: profile: unknown profile 'nope'"):
        resolve_settings({}, {}, base=AgentConfig(profile="nope"), base_origin="ops.yaml")
    with pytest.raises(ConfigError, match=r"^unknown profile 'nope'"):  # a config of no file
        resolve_settings({}, {}, base=AgentConfig(profile="nope"))


def test_config_dir_precedence() -> None:
    assert config_dir({"RHO_AGENT_HOME": "/a", "XDG_CONFIG_HOME": "/b"}) == Path("/a")
    assert config_dir({"XDG_CONFIG_HOME": "/b"}) == Path("/b/rho-agent")


def test_no_endpoint_says_how_to_set_one() -> None:
    settings = resolve_settings({}, {})
    with pytest.raises(ConfigError) as info:
        check_endpoint(settings, {})
    message = str(info.value)
    assert "export OPENAI_API_KEY" in message
    assert "--model demo" in message
    check_endpoint(settings, {"OPENAI_API_KEY": "k"})
    check_endpoint(resolve_settings({"model": "demo"}, {}), {})
    anthropic = resolve_settings({"provider": "anthropic"}, {})
    with pytest.raises(ConfigError, match="ANTHROPIC_API_KEY"):
        check_endpoint(anthropic, {"OPENAI_API_KEY": "k"})


def test_the_key_variable_comes_from_the_provider_table() -> None:
    config = AgentConfig(base_url="https://api.anthropic.com")
    assert api_key_variable(config) == "ANTHROPIC_API_KEY"  # guessed from the URL
    assert api_key_variable(AgentConfig(provider="ollama")) == "OPENAI_API_KEY"
    assert api_key_variable(AgentConfig(provider="ollama", api_key_env="MY_KEY")) == "MY_KEY"


def test_a_claude_model_or_the_anthropic_key_alone_selects_anthropic() -> None:
    """Issue 16: ``--model claude-*`` with ANTHROPIC_API_KEY set said OPENAI_API_KEY is not
    set. The model name (the table's ``model_prefixes``) or the only key set decides."""
    anthropic_key = {"ANTHROPIC_API_KEY": "k"}
    claude = resolve_settings({"model": "claude-sonnet-4-5"}, anthropic_key)
    assert api_key_variable(claude.config, anthropic_key) == "ANTHROPIC_API_KEY"
    check_endpoint(claude, anthropic_key)  # no error: the key is there
    with pytest.raises(ConfigError) as info:
        check_endpoint(claude, {"OPENAI_API_KEY": "k"})
    assert "export ANTHROPIC_API_KEY" in str(info.value)
    assert "'claude-sonnet-4-5' selects the anthropic provider" in str(info.value)
    other = AgentConfig(model="some-model")
    assert api_key_variable(other, anthropic_key) == "ANTHROPIC_API_KEY"
    both = {"ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "k"}
    assert api_key_variable(other, both) == "OPENAI_API_KEY"
    assert api_key_variable(AgentConfig(model="gpt-5-mini"), anthropic_key) == "OPENAI_API_KEY"
    local = AgentConfig(model="claude-like", base_url="http://127.0.0.1:8080/v1")
    assert api_key_variable(local, anthropic_key) == "OPENAI_API_KEY"  # the URL decides


def test_the_guessed_anthropic_provider_reaches_the_model() -> None:
    from rho_adapters.fakes import FakeClock
    from rho_adapters.model.anthropic import AnthropicModel
    from rho_entry.wiring import build_model

    model = build_model(
        AgentConfig(model="claude-haiku-4-5"), {"ANTHROPIC_API_KEY": "k"}, FakeClock()
    )
    assert isinstance(model, AnthropicModel)


@pytest.mark.parametrize(
    ("name", "value", "flag", "variable", "said"),
    [
        ("backend", "moon", "--backend", "RHO_AGENT_BACKEND", "backend must be local or daytona"),
        ("provider", "zz", "--provider", "RHO_AGENT_PROVIDER", "unknown provider 'zz': expected"),
    ],
)
def test_an_unknown_backend_or_provider_names_the_flag_or_variable(
    name: str, value: str, flag: str, variable: str, said: str
) -> None:
    """Both were refused when the session was built, naming neither."""
    with pytest.raises(ConfigError, match=f"^{flag}: {said}"):
        resolve_settings({name: value}, {})
    with pytest.raises(ConfigError, match=f"^{variable}: {said}"):
        resolve_settings({}, {variable: value})


def test_an_unknown_backend_in_a_config_file_names_the_key(tmp_path: Path) -> None:
    from rho_entry.config.config_files import load_agent_config

    (tmp_path / "c.yaml").write_text("backend: moon\n")
    with pytest.raises(ConfigError, match=r"c\.yaml: config\.backend must be local or daytona"):
        load_agent_config(tmp_path / "c.yaml")
