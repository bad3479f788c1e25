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
        (("--config", "agent.yaml"), {}, "agent.yaml: config.api_key_env 'MY KEY'"),
    ):
        done = rho(*args, "hi", cwd=tmp_path, home=tmp_path, **env)
        assert done.returncode == exit_codes.USAGE
        assert done.stderr.startswith(f"rho-agent: {origin}"), done.stderr
        assert said in done.stderr
