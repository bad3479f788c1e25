"""The budget flags: limits per run and per session (``rho_domain.config.Budget``).

``add_budget_flags`` adds them to the parser (``--max-turns`` stays with the agent flags: it is
``AgentConfig.max_turns``, whose status is ``max_turns``); ``given_budget`` returns the fields
given, which ``settings.resolve_settings`` lays over the config file's budget and ``--resume``
over the stored session's for that run (a limit not given is the stored one).
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from rho_domain.errors import ConfigError

if TYPE_CHECKING:  # the parser imports this module: --help stays free of attrs and the config
    from rho_domain.config import Budget

# flag, Budget field, type, metavar, help
_FLAGS: tuple[tuple[str, str, type, str, str], ...] = (
    ("--max-tool-calls", "max_tool_calls", int, "N", "tool calls per run"),
    (
        "--max-wall-time",
        "max_wall_seconds",
        float,
        "SECONDS",
        "wall time per run; a model or tool call still running then is stopped",
    ),
    ("--max-cost", "max_cost_usd", float, "USD", "cost per run (priced usage, sub-agents too)"),
    ("--max-tokens", "max_total_tokens", int, "N", "input + output tokens per run"),
    ("--session-max-turns", "session_max_turns", int, "N", "model calls in the whole session"),
    ("--session-max-tool-calls", "session_max_tool_calls", int, "N", "tool calls in the session"),
    (
        "--session-max-wall-time",
        "session_max_wall_seconds",
        float,
        "SECONDS",
        "the session's runs' time added up (a run is stopped when it is used up)",
    ),
    (
        "--session-max-cost",
        "session_max_cost_usd",
        float,
        "USD",
        "cost of the whole session, across every --resume",
    ),
)
FLAG_OF = {field: flag for flag, field, *_ in _FLAGS}


def add_budget_flags(parser: argparse.ArgumentParser) -> None:
    """The ``budget`` group: each limit ends the run with status ``budget_exceeded`` (exit 3);
    none is set by default. Checked before each model call; wall time also during calls."""
    group = parser.add_argument_group(
        "budget",
        "limits that end a run with status budget_exceeded (exit 3); none by default. "
        "Per run, or per session across every --resume (stored with the session; a limit "
        "given on --resume applies to that run, over the stored one)",
    )
    for flag, field, kind, metavar, text in _FLAGS:
        group.add_argument(flag, dest=field, type=kind, metavar=metavar, help=text)


def given_budget(args: argparse.Namespace) -> dict[str, Any]:
    """The budget fields given as flags (None: not given)."""
    return {
        field: value for _, field, *_ in _FLAGS if (value := getattr(args, field, None)) is not None
    }


def with_budget(budget: Budget, given: Mapping[str, Any]) -> Budget:
    """``budget`` with the ``given`` limits. Raises ConfigError naming the flag at fault."""
    import attrs

    for field, value in given.items():
        try:
            budget = attrs.evolve(budget, **{field: value})
        except ConfigError as exc:
            raise ConfigError(f"{FLAG_OF.get(field, field)}: {exc}") from None
    return budget
