"""A setting refused names where it was given: a tool_choice the agent's tools refuse, an
api_key_env that is no variable's name.

Before: ``--tool-choice nope``, ``RHO_AGENT_TOOL_CHOICE=nope`` and ``tool_choice: nope`` in
the ``--config`` file all said only "tool_choice 'nope': expected auto, none, required or one
of this agent's tools (...)": the check runs when the agent's tools are built, after the
settings that know the origin; every other setting's refusal names its flag, variable or file.
"""

from __future__ import annotations

from pathlib import Path

from cli_support import rho

from rho_entry.cli import exit_codes


def test_a_refused_tool_choice_names_its_flag_variable_or_file(tmp_path: Path) -> None:
    (tmp_path / "agent.yaml").write_text("model: demo\ntool_choice: nope\n")
    said = "tool_choice 'nope': expected auto, none, required or one of this agent's tools ("
    for args, env, origin in (
        (("-m", "demo", "--tool-choice", "nope"), {}, "--tool-choice"),
        (("-m", "demo"), {"RHO_AGENT_TOOL_CHOICE": "nope"}, "RHO_AGENT_TOOL_CHOICE"),
        (("--config", "agent.yaml"), {}, "agent.yaml: tool_choice"),
    ):
        done = rho(*args, "hi", cwd=tmp_path, home=tmp_path, **env)
        assert done.returncode == exit_codes.USAGE
        assert done.stderr.startswith(f"rho-agent: {origin}: {said}"), done.stderr


def test_an_api_key_env_that_is_no_variable_name_is_refused_naming_its_origin(
    tmp_path: Path,
) -> None:
    """Before: ``RHO_AGENT_API_KEY_ENV='A B'`` was taken, and the CLI said to ``export A
    B=<your key>``; now each origin is named with what a variable's name is."""
    (tmp_path / "agent.yaml").write_text('model: gpt-x\napi_key_env: "MY KEY"\n')
    said = "is not an environment variable's name (letters, digits and _, not starting with"
    for args, env, origin in (
        (("-m", "gpt-x", "--api-key-env", "1X"), {}, "--api-key-env: api_key_env '1X'"),
        (("-m", "gpt-x"), {"RHO_AGENT_API_KEY_ENV": "A B"}, "RHO_AGENT_API_KEY_ENV: api_key_env"),
        (("--config", "agent.yaml"), {}, "--config agent.yaml: config.api_key_env 'MY KEY'"),
    ):
        done = rho(*args, "hi", cwd=tmp_path, home=tmp_path, **env)
        assert done.returncode == exit_codes.USAGE
        assert done.stderr.startswith(f"rho-agent: {origin}"), done.stderr
        assert said in done.stderr


def test_a_database_file_named_by_its_variable_names_it_and_yaml_places_name_no_string(
    tmp_path: Path,
) -> None:
    """Before: ``RHO_AGENT_DB_CONFIG=/gone.yaml`` said '/gone.yaml: database config file not
    found', the variable that named it unsaid; and every YAML refusal placed its fault 'in
    "<unicode string>", line 2, column 1', a name that is no file's."""
    (tmp_path / "twice.yaml").write_text("model: demo\nmodel: demo\n")
    for args, env, said in (
        ((), {"RHO_AGENT_DB_CONFIG": "gone.yaml"}, "RHO_AGENT_DB_CONFIG: gone.yaml: database"),
        ((), {"RHO_AGENT_DB_CONFIG": "twice.yaml"}, "RHO_AGENT_DB_CONFIG: twice.yaml: not valid"),
        (
            ("--config", "twice.yaml"),
            {},
            "--config twice.yaml: invalid YAML: found the key 'model' again",
        ),
    ):
        done = rho("-m", "demo", *args, "hi", cwd=tmp_path, home=tmp_path, **env)
        assert done.returncode == exit_codes.USAGE
        assert done.stderr.startswith(f"rho-agent: {said}"), done.stderr
        assert "unicode string" not in done.stderr
        assert "twice" not in said or done.stderr.endswith("\n  at line 2, column 1\n")
