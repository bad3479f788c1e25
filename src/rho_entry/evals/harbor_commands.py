"""What the Harbor adapter does in a trial, without Harbor: install script, command lines,
usage. ``rho_entry.evals.harbor`` is the module Harbor imports.

Harbor (the framework behind Terminal-Bench) sets an installed agent up by running an install
script in the task container, then runs the agent's command lines there, then asks the agent to
fill the trial's context (tokens, cost) from the logs it left in ``/logs/agent`` (the
container side of the trial's ``logs_dir``). This module builds those three things without
Harbor:

- ``install_script(spec)``: a bash script that puts rho-agent in a venv and links
  ``rho-agent`` onto PATH (``harbor_install.sh``; ``spec`` is what pip installs: a git URL,
  a wheel URL, a version pin on your index);
- ``run_commands(instruction, model_name=...)``: the one-shot run with the ``eval`` profile
  (everything allowed, nothing asked: the container is the sandbox), ``--json`` events in
  ``rho-agent.jsonl``, sessions under ``/logs/agent/rho-home``; then the trajectory:
  ``rho-agent export latest --format atif`` into ``trajectory.json`` (where Harbor reads an
  ATIF trajectory), or, where that exporter is not installed, the native export in
  ``rho-session.json``;
- ``usage_from_logs(logs_dir)``: tokens and cost from the trajectory's ``final_metrics``, else
  from the last ``result`` event of the JSONL.

``harbor_agent.agent_class()`` builds the ``BaseInstalledAgent`` subclass around them.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

import attrs

from rho_domain.errors import ConfigError
from rho_domain.value_methods import value_eq, value_hash, value_repr

LOGS = "/logs/agent"
EVENTS = "rho-agent.jsonl"
STDERR = "rho-agent.stderr"
TRAJECTORY = "trajectory.json"
SESSION = "rho-session.json"
SPEC_VARIABLE = "RHO_AGENT_INSTALL_SPEC"
_PLACEHOLDER = "__RHO_AGENT_INSTALL_SPEC__"
_UNSAFE_SPEC = re.compile(r"[\s\"'$`\\{}]")
# Copied into the container's environment when set on the host: the endpoint and its keys,
# and rho-agent's own settings.
_FORWARDED = re.compile(r"^(RHO_AGENT_\w+|OPENAI_\w+|ANTHROPIC_\w+|\w+_API_KEY)$")


@attrs.frozen(kw_only=True)
class HarborUsage:
    """What a trial consumed, as Harbor's context records it (None: not reported)."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    input_tokens: int | None = None
    output_tokens: int | None = None
    cached_tokens: int | None = None
    cost_usd: float | None = None


def install_script(spec: str) -> str:
    """The install script for pip requirement ``spec``; ConfigError when ``spec`` is empty or
    holds characters a requirement never has (quotes, ``$``, spaces)."""
    if not spec or _UNSAFE_SPEC.search(spec):
        raise ConfigError(
            f"install_spec {spec!r}: give what pip should install in the container (a git URL, "
            f"a wheel URL or rho-agent==VERSION on your index), via --agent-kwarg "
            f"install_spec=... or {SPEC_VARIABLE}"
        )
    template = resources.files("rho_entry.evals").joinpath("harbor_install.sh")
    return template.read_text(encoding="utf-8").replace(_PLACEHOLDER, spec)


def model_flags(model_name: str | None) -> list[str]:
    """``provider/model`` (Harbor's form) as rho-agent flags; a prefix that is not a provider
    rho-agent knows stays part of the model id (``meta-llama/Llama-3``)."""
    if not model_name:
        return []
    from rho_adapters.model.providers import PROVIDERS

    provider, _, model = model_name.partition("/")
    if model and provider in PROVIDERS:
        return ["--provider", provider, "-m", model]
    return ["-m", model_name]


def run_commands(
    instruction: str,
    *,
    model_name: str | None = None,
    max_turns: int | None = None,
    logs: str = LOGS,
) -> tuple[str, str]:
    """The two shell commands of a trial: the run, then the trajectory export.

    The run exits 0 when rho-agent answered, reached its turn limit (3) or stopped a stuck loop
    (6): the verifier judges the work; with rho-agent's code otherwise (bad settings 1, the
    endpoint failed 2).
    """
    home = f"{logs}/rho-home"
    argv = ["rho-agent", "--profile", "eval", "--json", *model_flags(model_name)]
    if max_turns is not None:
        argv += ["--max-turns", str(max_turns)]
    argv += ["--", instruction]
    q = shlex.quote
    run = (
        f"mkdir -p {q(logs)} && RHO_AGENT_HOME={q(home)} {shlex.join(argv)} "
        f"> {q(f'{logs}/{EVENTS}')} 2> {q(f'{logs}/{STDERR}')}; "
        'code=$?; if [ "$code" -eq 3 ] || [ "$code" -eq 6 ]; then code=0; fi; exit "$code"'
    )
    partial = f"{logs}/{TRAJECTORY}.partial"
    export = (
        f"export RHO_AGENT_HOME={q(home)}; "
        f"if rho-agent export latest --format atif > {q(partial)} 2>/dev/null; "
        f"then mv {q(partial)} {q(f'{logs}/{TRAJECTORY}')}; "
        f"else rm -f {q(partial)}; rho-agent export latest > {q(f'{logs}/{SESSION}')}; fi"
    )
    return run, export


def forwarded_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The host variables the run needs in the container (endpoint, keys, rho settings)."""
    return {k: v for k, v in environ.items() if v and _FORWARDED.match(k)}


def usage_from_logs(logs_dir: Path) -> HarborUsage:
    """Tokens and cost of the trial: the ATIF trajectory's ``final_metrics`` if there is one,
    else the ``session_usage`` of the last ``result`` event; nothing known: all None."""
    trajectory = logs_dir / TRAJECTORY
    if trajectory.is_file():
        try:
            metrics = json.loads(trajectory.read_text(encoding="utf-8")).get("final_metrics")
        except (OSError, ValueError, AttributeError, RecursionError):  # unreadable: no figures
            metrics = None
        if isinstance(metrics, dict):
            return HarborUsage(
                input_tokens=_number(metrics.get("total_prompt_tokens"), int),
                output_tokens=_number(metrics.get("total_completion_tokens"), int),
                cached_tokens=_number(metrics.get("total_cached_tokens"), int),
                cost_usd=_number(metrics.get("total_cost_usd"), float),
            )
    return _usage_from_events(logs_dir / EVENTS)


def _usage_from_events(path: Path) -> HarborUsage:
    usage: Any = None
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return HarborUsage()
    for line in lines:
        try:
            event = json.loads(line)
        except (ValueError, RecursionError):  # not JSON, or nested past the parser
            continue
        if isinstance(event, dict) and event.get("kind") == "result":
            usage = event.get("session_usage")
    if not isinstance(usage, dict):
        return HarborUsage()
    return HarborUsage(
        input_tokens=_number(usage.get("input_tokens"), int),
        output_tokens=_number(usage.get("output_tokens"), int),
        cached_tokens=_number(usage.get("cached_tokens"), int),
        cost_usd=_number(usage.get("cost_usd"), float),
    )


def _number(value: Any, kind: type[int] | type[float]) -> Any:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return kind(value)


__all__ = [
    "EVENTS",
    "LOGS",
    "SESSION",
    "SPEC_VARIABLE",
    "STDERR",
    "TRAJECTORY",
    "HarborUsage",
    "forwarded_env",
    "install_script",
    "model_flags",
    "run_commands",
    "usage_from_logs",
]
