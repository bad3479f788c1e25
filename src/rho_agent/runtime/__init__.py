"""``rho_agent.runtime``: the runtime API (``rho_entry.runtime``)."""

from rho_entry.runtime import (
    AgentHandle,
    AgentRuntime,
    close_runtime,
    create_runtime,
    dispatch_prompt,
    run_prompt,
    start_runtime,
)

__all__ = [
    "AgentHandle",
    "AgentRuntime",
    "close_runtime",
    "create_runtime",
    "dispatch_prompt",
    "run_prompt",
    "start_runtime",
]
