"""A sandbox's creation: the ``CreateSandbox`` body asked for, and the wait until it started.

``POST /sandbox`` answers at once, mostly in state ``creating`` (a snapshot pulled, a
Dockerfile built); ``started`` polls ``GET /sandbox/{id}`` until the sandbox is ``started``,
and fails on a state it will not leave (``error``, ``build_failed``...) or past the creation
deadline. ``SandboxAPI.create`` deletes a sandbox that did not start (nothing else knows its
id).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from rho_adapters.daytona.settings import DaytonaSettings
from rho_domain.errors import ExecutorError
from rho_domain.ports.clock import Clock

_FAILED_STATES = frozenset({"error", "build_failed", "destroyed", "destroying"})


def create_body(settings: DaytonaSettings) -> dict[str, Any]:
    """The ``CreateSandbox`` body: only the fields that are set (older servers reject unknowns)."""
    body: dict[str, Any] = {
        "env": dict(settings.env),
        "labels": {"created-by": "rho-agent", **settings.labels},
        "autoStopInterval": settings.auto_stop_interval,
    }
    if settings.auto_delete_interval is not None:
        body["autoDeleteInterval"] = settings.auto_delete_interval
    if settings.target:
        body["target"] = settings.target
    if settings.snapshot:
        body["snapshot"] = settings.snapshot
    elif settings.image or settings.dockerfile:
        # What the SDK sends for an image: a Dockerfile (for a plain image, one line).
        dockerfile = settings.dockerfile or f"FROM {settings.image}\n"
        body["buildInfo"] = {"dockerfileContent": dockerfile}
        for key in ("cpu", "memory", "disk"):
            if (value := getattr(settings, key)) is not None:
                body[key] = value
    return body


async def started(
    sandbox_id: str,
    data: dict[str, Any],
    status: Callable[[], Awaitable[dict[str, Any]]],
    *,
    clock: Clock,
    timeout: float,
) -> dict[str, Any]:
    """The sandbox's description once ``started``, from its creation's answer ``data`` and
    ``status()`` (its ``GET``) polled on ``clock``; ``ExecutorError`` naming ``sandbox_id``
    for a failed state or past ``timeout`` seconds."""
    deadline = clock.monotonic() + timeout
    delay = 0.1
    while data.get("state") != "started":
        state = str(data.get("state") or "unknown")
        if state in _FAILED_STATES:
            reason = data.get("errorReason") or "no reason given"
            raise ExecutorError(f"Daytona sandbox {sandbox_id} is {state}: {reason}")
        if clock.monotonic() > deadline:
            raise ExecutorError(
                f"Daytona sandbox {sandbox_id} not started after {timeout:g} s (state {state})"
            )
        await clock.sleep(delay)
        delay = min(delay * 1.1, 1.0)
        data = await status()
    return data
