"""The limits a resumed session runs under: each the tighter of what it stored and what the
resumer allows (``resume_policy.authorise`` applies them).

A session directory never lengthens how long a run goes or waits, nor raises what it may
spend: ``tighter_budget`` limit by limit, ``tighter_count`` for counts where 0 is none,
``held_deadline`` for waits and retries (the resumer's default when it sets none,
``DEADLINES``), and ``held_fields`` for what the resumer's config decides alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from rho_domain.config import AgentConfig, Budget

# How long a run may wait, and how often it tries again, when the config says nothing (None):
# a tool call's deadline (rho_domain.tools.registry.DEFAULT_TOOL_TIMEOUT) and the model
# adapter's Timeouts and RetryPolicy defaults (tests/cli/test_cli_stored_deadlines.py checks
# they match).
DEADLINES: Mapping[str, float] = {
    "tool_timeout": 600.0,
    "model_timeout": 120.0,
    "model_connect_timeout": 10.0,
    "model_retries": 2,
    "model_retry_after_cap": 120.0,
    "model_answer_timeout": 3600.0,
    "model_answer_bytes": 64 * 1024 * 1024,
}


def held_fields(config: AgentConfig) -> dict[str, Any]:
    """The resumer's values a stored session takes whatever it stored: ``service_tier`` (a
    session directory does not choose what each call costs, nor a flex tier's long waits)."""
    return {"service_tier": config.service_tier}


def deadlines_of(config: AgentConfig) -> dict[str, float | None]:
    """The config's ``DEADLINES`` fields, as ``ResumeAuthority.deadlines`` takes them."""
    return {field: getattr(config, field) for field in DEADLINES}


def limits_of(config: AgentConfig) -> dict[str, Any]:
    """The resumer's limits as ``ResumeAuthority`` takes them, from its own ``config``: the
    budget, ``max_turns`` and ``repeat_limit`` (0: none), ``tool_output_limit``, the
    deadlines, the held fields and ``max_output_tokens`` (the CLI, the runtime and the
    durable worker each hold a stored session to these)."""
    return {
        "budget": config.budget,
        "max_turns": config.max_turns or 0,
        "repeat_limit": config.repeat_limit or 0,
        "tool_output_limit": config.tool_output_limit,
        "deadlines": deadlines_of(config),
        "held": held_fields(config),
        "max_output_tokens": config.max_output_tokens,
    }


def held_deadline(stored: float | None, mine: float | None, default: float) -> float | None:
    """The stored wait (or retry count) when it is no longer than the resumer's (None: the
    default), else the resumer's: a session directory never lengthens how long a run waits."""
    if stored is not None and stored <= (default if mine is None else mine):
        return stored
    return mine


def tighter_budget(stored: Budget, mine: Budget) -> Budget:
    """Each limit the tighter of the two (None: no limit, so the other one)."""
    values: dict[str, Any] = {}
    for field in attrs.fields(Budget):
        theirs, ours = getattr(stored, field.name), getattr(mine, field.name)
        values[field.name] = (
            ours if theirs is None else theirs if ours is None else min(theirs, ours)
        )
    return Budget(**values)


def tighter_count(stored: int | None, mine: int) -> int:
    """The tighter of two counting limits where 0 (or None) is none."""
    set_ = [limit for limit in (stored, mine) if limit]
    return min(set_) if set_ else 0
