"""AgentConfig and permission profile YAML: strict validation, round trip, lookup."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rho_domain.config import AgentConfig, Budget
from rho_domain.errors import ConfigError
from rho_domain.permissions import ApprovalMode, FileWriteMode, PermissionProfile, ShellMode
from rho_entry.config.config_files import (
    load_agent_config,
    load_profile_file,
    resolve_profile,
    save_agent_config,
)


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_unknown_key_names_file_and_path(tmp_path: Path) -> None:
    path = write(tmp_path / "a.yaml", "model: m\nbudget:\n  max_cost: 1\n")
    with pytest.raises(ConfigError) as info:
        load_agent_config(path)
    message = str(info.value)
    assert str(path) in message
    assert "budget" in message
    assert "max_cost" in message


def test_wrong_type_names_key_and_expected_type(tmp_path: Path) -> None:
    path = write(tmp_path / "a.yaml", "max_turns: five\n")
    with pytest.raises(ConfigError, match=r"max_turns") as info:
        load_agent_config(path)
    assert "int" in str(info.value)


def test_not_a_mapping_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="mapping"):
        load_agent_config(write(tmp_path / "a.yaml", "- a\n- b\n"))


def test_round_trip_keeps_every_setting(tmp_path: Path) -> None:
    config = AgentConfig(
        model="m",
        max_turns=7,
        budget=Budget(max_cost_usd=1.5),
        vars={"a": "b"},
        profile=PermissionProfile(name="p", shell=ShellMode.UNRESTRICTED),
    )
    save_agent_config(config, tmp_path / "sub" / "c.yaml")
    assert load_agent_config(tmp_path / "sub" / "c.yaml") == config


def test_profile_file_nested_forms_and_base(tmp_path: Path) -> None:
    path = write(
        tmp_path / "ops.yaml",
        "base: developer\nshell: {mode: restricted}\nfile_write: off\napproval: {mode: all}\n",
    )
    profile = load_profile_file(path)
    assert profile.name == "ops"
    assert profile.shell is ShellMode.RESTRICTED
    assert profile.file_write is FileWriteMode.OFF
    assert profile.approval is ApprovalMode.ALL
    assert profile.shell_timeout == 300.0  # from the developer base


def test_granular_approval_without_tools_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path / "g.yaml", "base: readonly\napproval: {mode: granular}\n")
    with pytest.raises(ConfigError, match=r"g\.yaml.*required_tools"):
        load_profile_file(path)
    # the developer base is granular already: its list (bash, write, edit) is inherited
    inherited = write(tmp_path / "d.yaml", "base: developer\napproval: {mode: granular}\n")
    assert load_profile_file(inherited).approval_required_tools == {"bash", "write", "edit"}
    named = write(tmp_path / "n.yaml", "approval: {mode: granular, required_tools: [bash]}\n")
    assert load_profile_file(named).approval_required_tools == frozenset({"bash"})


def test_profile_unknown_key_and_bad_enum(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"x\.yaml.*colour"):
        load_profile_file(write(tmp_path / "x.yaml", "colour: red\n"))
    with pytest.raises(ConfigError, match=r"y\.yaml.*shell"):
        load_profile_file(write(tmp_path / "y.yaml", "shell: sometimes\n"))


def test_a_tool_name_a_slip_away_from_a_built_in_one_is_refused(tmp_path: Path) -> None:
    """Before, ``denied_tools: [bsh]`` denied nothing and ``required_tools: [raed]`` asked
    about nothing, without a word: the names match no tool."""
    for text, said in (
        (
            "denied_tools: [bsh]\n",
            "profile.denied_tools: no tool is named 'bsh' (did you mean 'bash'?)",
        ),
        ("denied_tools: [Bash]\n", "did you mean 'bash'?"),
        ("denied_tools: [read-excel]\n", "did you mean 'read_excel'?"),
        # the profile's key, or another agent's name, for a built-in tool: `[shell]` left
        # the shell running
        ("denied_tools: [shell]\n", "no tool is named 'shell': the shell tool is 'bash'"),
        ("denied_tools: [run_command]\n", "no tool is named 'run_command': the shell tool"),
        ("denied_tools: [write_file]\n", "no tool is named 'write_file': did you mean 'write'"),
        ("denied_tools: [sql]\n", "the database tools are named after their engine: sqlite"),
        (
            "approval: {mode: granular, required_tools: [raed]}\n",
            "profile.approval_required_tools: no tool is named 'raed' (did you mean 'read'?)",
        ),
    ):
        with pytest.raises(ConfigError, match=re.escape(said)):
            load_profile_file(write(tmp_path / "p.yaml", text))
    # an embedder's own tool, an MCP tool and a built-in one are names it keeps
    kept = "denied_tools: [bash, deploy, mcp__docs__search, postgres]\n"
    names = load_profile_file(write(tmp_path / "k.yaml", kept)).denied_tools
    assert names == {"bash", "deploy", "mcp__docs__search", "postgres"}


def test_the_built_in_tool_names_are_those_the_registry_can_hold() -> None:
    from rho_domain.tools.database import DATABASE_TOOL_NAMES
    from rho_domain.tools.factory import BUILT_IN_TOOL_NAMES, build_registry

    developer = build_registry(resolve_profile("developer", config_dir=None), delegation=True)
    assert set(BUILT_IN_TOOL_NAMES) == set(developer.names) | DATABASE_TOOL_NAMES


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("file_write: create_only\n", FileWriteMode.CREATE_ONLY),  # the design documents'
        ("file_write: create-only\n", FileWriteMode.CREATE_ONLY),
        ("file_write: {mode: CREATE_ONLY}\n", FileWriteMode.CREATE_ONLY),
        ("file_write: Full\n", FileWriteMode.FULL),
    ],
)
def test_a_mode_is_read_in_either_spelling(
    tmp_path: Path, text: str, expected: FileWriteMode
) -> None:
    assert load_profile_file(write(tmp_path / "m.yaml", text)).file_write is expected


def test_a_bad_mode_lists_the_valid_values(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"w\.yaml: expected one of off, create-only, full"):
        load_profile_file(write(tmp_path / "w.yaml", "file_write: create_new\n"))
    with pytest.raises(ConfigError, match="expected one of all, dangerous, granular, none"):
        load_profile_file(write(tmp_path / "a.yaml", "approval: {mode: sometimes}\n"))
    # a value that is only a spelling away from another mode is not guessed
    with pytest.raises(ConfigError, match="expected one of restricted, unrestricted"):
        load_profile_file(write(tmp_path / "s.yaml", "shell: un_restricted\n"))


def test_resolve_profile_by_name_path_and_config_dir(tmp_path: Path) -> None:
    (tmp_path / "profiles").mkdir()
    write(tmp_path / "profiles" / "ops.yaml", "description: ops\n")
    assert resolve_profile("developer", config_dir=tmp_path).name == "developer"
    assert resolve_profile("ops", config_dir=tmp_path).description == "ops"
    path = tmp_path / "profiles" / "ops.yaml"
    assert resolve_profile(str(path), config_dir=None).name == "ops"
    with pytest.raises(ConfigError, match="unknown profile 'nope'"):
        resolve_profile("nope", config_dir=tmp_path)


def test_a_key_given_twice_names_the_file_and_the_key(tmp_path: Path) -> None:
    """It ran with the last value, silently."""
    path = write(tmp_path / "a.yaml", "max_turns: 3\nmodel: m\nmax_turns: 100\n")
    with pytest.raises(ConfigError, match=r"(?s)a\.yaml: invalid YAML: .*'max_turns' again"):
        load_agent_config(path)


def test_a_scalar_where_a_section_goes_names_the_section_s_keys(tmp_path: Path) -> None:
    """``budget: 5`` read "invalid value for type, expected Budget": a class the file never
    shows, and not one of the keys that go there."""
    for text in ("budget: 5\n", "budget: [1]\n"):
        path = write(tmp_path / "a.yaml", text)
        with pytest.raises(ConfigError) as info:
            load_agent_config(path)
        assert str(info.value).startswith(
            f"{path}: expected a mapping (indented `key: value` lines) of max_input_tokens, "
        )
        assert str(info.value).endswith(", session_max_cost_usd @ config.budget")


def test_a_nested_value_refused_by_its_own_check_says_why(tmp_path: Path) -> None:
    """It read 'unknown error (max_cost_usd must be ...) @ config.budget'."""
    path = write(tmp_path / "a.yaml", "budget: {max_cost_usd: -1}\n")
    with pytest.raises(ConfigError) as info:
        load_agent_config(path)
    assert str(info.value) == (
        f"{path}: max_cost_usd must be an amount in USD, 0 or more; got -1.0 @ config.budget"
    )


@pytest.mark.parametrize("seconds", ["-5", "0", ".nan", ".inf", "soon"])
def test_a_shell_timeout_that_is_not_a_positive_number_is_refused(
    tmp_path: Path, seconds: str
) -> None:
    """-5 and 0 stopped every command at once ('timed out after -5 s'); NaN and inf left
    commands without a deadline."""
    path = write(tmp_path / "p.yaml", f"base: developer\nshell_timeout: {seconds}\n")
    with pytest.raises(ConfigError, match=r"p\.yaml: .*shell_timeout"):
        load_profile_file(path)


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("base: readonly\nextra_read_roots: /var/log\n", "profile.extra_read_roots"),
        ("base: developer\ndenied_tools: bash\n", "profile.denied_tools"),
        ("base: developer\napproval: {mode: granular, required_tools: bash}\n", "required_tools"),
    ],
)
def test_a_string_where_a_profile_wants_a_list_is_refused(
    tmp_path: Path, text: str, key: str
) -> None:
    """cattrs iterated the string: extra_read_roots /var/log became the roots '/', 'v',
    'a'... (the whole machine readable), denied_tools bash denied 'b', 'a', 's', 'h'."""
    with pytest.raises(ConfigError, match=f"expected a list, got the string .* @ .*{key}"):
        load_profile_file(write(tmp_path / "p.yaml", text))


def test_an_mcp_command_given_as_a_string_is_refused(tmp_path: Path) -> None:
    """'command: server' ran the program 's' (cannot start 's')."""
    path = write(tmp_path / "a.yaml", "mcp_servers: {tickets: {command: server}}\n")
    with pytest.raises(ConfigError) as info:
        load_agent_config(path)
    assert str(info.value) == (
        f"{path}: expected a list, got the string 'server' (one item is [server]) "
        "@ config.mcp_servers['tickets'].command"
    )
    listed = write(tmp_path / "b.yaml", "mcp_servers: {tickets: {command: [server, -v]}}\n")
    assert load_agent_config(listed).mcp_servers["tickets"].command == ("server", "-v")


def test_a_number_or_nothing_where_a_list_goes_says_list_not_tuple(tmp_path: Path) -> None:
    """Before: "invalid value for type, expected tuple", a Python type the file never shows,
    and not what was there; an agent config's and a profile's alike."""
    wrong = {
        "mcp_servers: {a: {command: 5}}": "got int @ config.mcp_servers['a'].command",
        "hooks: {before_model: true}": "got bool @ config.hooks.before_model",
        "mcp_servers: {a: {command: }}": "got nothing (an empty value) @ config.mcp_servers",
    }
    for text, said in wrong.items():
        with pytest.raises(ConfigError, match=re.escape(f": expected a list, {said}")):
            load_agent_config(write(tmp_path / "a.yaml", text + "\n"))
    profile = write(tmp_path / "p.yaml", "base: readonly\nextra_read_roots: 5\n")
    with pytest.raises(ConfigError, match=r": expected a list, got int @ profile.extra_read_"):
        load_profile_file(profile)


def test_a_quoted_hook_timeout_is_explained_not_called_a_list(tmp_path: Path) -> None:
    """The one-reference shorthand (``before_tool: "m:f"``) wrapped every string of hooks:
    ``timeout: "5"`` was refused as "expected float, got list", which hid the quotes."""
    path = write(tmp_path / "a.yaml", 'hooks:\n  timeout: "5"\n  before_tool: "m:f"\n')
    with pytest.raises(ConfigError) as info:
        load_agent_config(path)
    assert "got the string '5' (a number or true/false is written without quotes)" in str(
        info.value
    )
    assert str(info.value).endswith("@ config.hooks.timeout")


def test_yaml_1_1_readings_are_named_not_blamed_on_quotes(tmp_path: Path) -> None:
    """PyYAML reads YAML 1.1: an unquoted ``1e400`` or ``1e3`` is text, and ``yes`` is a
    boolean. Before, ``shell_timeout: 1e400`` was refused as "got the string '1e400' (a
    number or true/false is written without quotes)", blaming quotes nobody wrote, and
    ``file_write: yes`` as "(got True)", a word nobody wrote. Now each says how YAML read it."""
    cases = (
        (
            "shell_timeout: 1e400",
            "got the string '1e400' (YAML reads a number with an exponent "
            "as a number only with a '.' and a sign, as in 1.0e+400) @ profile.shell_timeout",
        ),
        ("shell_timeout: -5E3", "as in -5.0e+3) @ profile.shell_timeout"),
        (
            "file_write: yes",
            "expected one of off, create-only, full (got true: YAML reads an "
            "unquoted yes, no, on, off, true or false as a boolean) @ profile.file_write",
        ),
    )
    for line, said in cases:
        with pytest.raises(ConfigError) as info:
            load_profile_file(write(tmp_path / "p.yaml", f"profile: p\n{line}\n"))
        assert str(info.value).endswith(said), str(info.value)
    fixed = load_profile_file(write(tmp_path / "p.yaml", "profile: p\nshell_timeout: 1.0e+3\n"))
    assert fixed.shell_timeout == 1000.0
