"""A tool_choice the agent's tools refuse names where it was given.

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
