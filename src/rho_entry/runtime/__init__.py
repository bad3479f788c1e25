"""The runtime API services embed: many sessions in one process, in the background.

``create_runtime`` / ``start_runtime`` / ``run_prompt`` / ``dispatch_prompt`` (an
``AgentHandle``) / ``close_runtime``. ``lifecycle.py`` holds the runtime's start and close,
``prompts.py`` the prompts sent to it, ``core.py`` the ``AgentRuntime`` they drive,
``dispatch_pool.py`` its run slots, queue and live handles,
``opening.py`` how it opens sessions, ``handle.py`` the handle, ``event_log.py`` its events,
``stats.py`` what ``AgentRuntime.stats()`` reports (the event loop's longest stall),
``collector.py`` the collector's full passes held off while a service's runtime runs.
"""

from __future__ import annotations

from rho_entry.runtime.core import AgentRuntime
from rho_entry.runtime.handle import AgentHandle, HandleStatus
from rho_entry.runtime.lifecycle import (
    close_runtime,
    create_runtime,
    shutdown_on_signals,
    start_runtime,
)
from rho_entry.runtime.prompts import dispatch_prompt, run_prompt
from rho_entry.runtime.stats import RuntimeStats

__all__ = [
    "AgentHandle",
    "AgentRuntime",
    "HandleStatus",
    "RuntimeStats",
    "close_runtime",
    "create_runtime",
    "dispatch_prompt",
    "run_prompt",
    "shutdown_on_signals",
    "start_runtime",
]
