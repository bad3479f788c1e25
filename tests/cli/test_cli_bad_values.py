"""Every setting's variable and flag, given a bad value: the refusal names it.

Before, ``--service-tier Flex`` and ``RHO_AGENT_SERVICE_TIER=Flex`` were refused as
"service_tier must be a tier's name in lower case ... got 'Flex'", naming neither: the
settings checked one by one (to name their origin) were a hand-kept list without it."""

from __future__ import annotations

from pathlib import Path

from cli_support import rho

from rho_entry.config.env_settings import ENV_VARS

# a bad value for each setting, given by its variable(s) or its flag
_BAD: dict[str, str] = {
    "model": "m\nx",
    "base_url": "ftp://x",
    "api_key_env": "1X",
    "provider": "nope",
    "profile": "nope",
    "working_dir": "/no/such/dir",
    "backend": "nope",
    "service_tier": "Flex",
    "reasoning_effort": "nope",
    "max_turns": "-1",
    "repeat_limit": "-1",
    "context_window": "0",
    "auto_approve": "maybe",
    "tool_choice": "nope",
    "stream": "maybe",
    "model_timeout": "nan",
    "model_retries": "-1",
}
_FLAGS = {
    "model": "--model",
    "base_url": "--base-url",
    "api_key_env": "--api-key-env",
    "provider": "--provider",
    "profile": "--profile",
    "working_dir": "--working-dir",
    "backend": "--backend",
    "service_tier": "--service-tier",
    "reasoning_effort": "--reasoning-effort",
    "max_turns": "--max-turns",
    "repeat_limit": "--repeat-limit",
    "context_window": "--context-window",
    "tool_choice": "--tool-choice",
    "model_timeout": "--timeout",
    "model_retries": "--retries",
    # the budget's, and the CLI's own
    "max_tool_calls": "--max-tool-calls",
    "max_wall_seconds": "--max-wall-time",
    "max_cost_usd": "--max-cost",
    "max_total_tokens": "--max-tokens",
    "session_max_turns": "--session-max-turns",
    "session_max_tool_calls": "--session-max-tool-calls",
    "session_max_wall_seconds": "--session-max-wall-time",
    "session_max_cost_usd": "--session-max-cost",
    "preview_lines": "--preview-lines",
    "mcp_config": "--mcp-config",
    "output_schema": "--output-schema",
    "var": "--var",
    "upload": "--upload",
    "download": "--download",
    "dockerfile": "--dockerfile",
    "output": "--output",
    "store": "--store",
    "deny": "--deny",
}
_MORE_BAD = {
    "max_tool_calls": "-1",
    "max_wall_seconds": "-1",
    "max_cost_usd": "nan",
    "max_total_tokens": "0",
    "session_max_turns": "-1",
    "session_max_tool_calls": "0",
    "session_max_wall_seconds": "inf",
    "session_max_cost_usd": "-1",
    "preview_lines": "-1",
    "mcp_config": "/no/such.yaml",
    "output_schema": "/no/such.json",
    "var": "novalue",
    "upload": "nocolon",
    "download": "nocolon",
    "dockerfile": "/no/such",
    "output": "/no/such/dir/f",
    "store": "nope://x",
    "deny": "",
}
_OTHER_VARIABLES = {
    "RHO_AGENT_CONFIG": "/no/such.yaml",
    "RHO_AGENT_HOME": "relative",
    "RHO_AGENT_STORE": "nope://x",
    "RHO_AGENT_DB_CONFIG": "/no/such.yaml",
    "RHO_AGENT_PREVIEW_LINES": "x",
}


def test_every_bad_variable_and_flag_is_refused_naming_it(tmp_path: Path) -> None:
    assert set(_BAD) == set(ENV_VARS)  # a setting added joins the table
    given: list[tuple[str, list[str], dict[str, str]]] = []
    for name, variables in ENV_VARS.items():
        given += [(v, [], {v: _BAD[name]}) for v in variables]
        if name in _FLAGS:
            given.append((_FLAGS[name], [_FLAGS[name], _BAD[name]], {}))
    given += [
        (flag, [flag, _MORE_BAD[name]], {}) for name, flag in _FLAGS.items() if name not in _BAD
    ]
    given += [(v, [], {v: value}) for v, value in _OTHER_VARIABLES.items()]
    unnamed = []
    for named, args, env in given:
        model = [] if named in ("--model", "RHO_AGENT_MODEL", "OPENAI_MODEL") else ["-m", "demo"]
        done = rho(*args, *model, "hi", cwd=tmp_path, home=tmp_path, **env)
        said = done.stderr.strip().splitlines()[-1:] or [""]
        if done.returncode not in (1, 2) or named not in said[0]:
            unnamed.append((named, done.returncode, said[0]))
    assert unnamed == []
