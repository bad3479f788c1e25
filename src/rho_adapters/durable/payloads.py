"""A queued run as the engine stores it: the ``rho.run`` workflow's one argument, plain data
that any process sharing the queue wrote, a worker or enqueuer of another rho-agent version
pinned to the same ``--application-version`` included, or a hand.

``payload_of`` writes a ``QueuedRun``; ``run_of`` reads one back and is the only reader (the
workflow's body, ``RunQueue.answer`` and ``session_of``). A payload of another shape (a field
missing, of another type, or one this version does not know) is a ``ConfigError`` naming the
run and the field, and nothing is run: read as it was, a missing field ended the run on a bare
``KeyError: 'session_id'`` and a field this version did not know was dropped unread.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from rho_domain.errors import ConfigError
from rho_domain.ports.durable import QueuedRun

FIELDS = ("run_id", "session_id", "prompt", "settings")


def payload_of(run: QueuedRun) -> dict[str, Any]:
    """The workflow's argument for ``run`` (plain data: any process may enqueue it)."""
    return {
        "run_id": run.run_id,
        "session_id": run.session_id,
        "prompt": run.prompt,
        "settings": dict(run.settings),
    }


def run_of(payload: object, run_id: str) -> QueuedRun:
    """The ``QueuedRun`` a workflow's argument holds; ``run_id`` is the workflow's id, which
    names the run in the refusal of a payload of another shape (``ConfigError``)."""
    if (problem := _problem(payload)) is not None:
        raise ConfigError(
            f"queued run {run_id}: its payload {problem}; it was queued by another version of "
            "rho-agent (or by hand): run it with workers of that version, or cancel it. "
            "Nothing was run"
        )
    fields = cast("Mapping[str, Any]", payload)  # _problem checked each
    return QueuedRun(
        run_id=fields["run_id"],
        session_id=fields["session_id"],
        prompt=fields["prompt"],
        settings=dict(fields["settings"]),
    )


def _problem(payload: object) -> str | None:
    """What keeps ``payload`` from being a run this version writes, or None."""
    if not isinstance(payload, Mapping):
        return f"is {type(payload).__name__}, not an object of {', '.join(FIELDS)}"
    if unknown := sorted(map(str, set(payload) - set(FIELDS))):
        return f"holds fields this version does not know ({', '.join(unknown)})"
    if missing := [name for name in FIELDS if name not in payload]:
        return f"lacks {', '.join(missing)}"
    for name in ("run_id", "session_id"):
        if not isinstance(payload[name], str) or not payload[name]:
            return f"has {name} {payload[name]!r}, not an id"
    if not isinstance(payload["prompt"], str | None):
        return f"has a prompt of type {type(payload['prompt']).__name__}, not a text or null"
    settings = payload["settings"]
    if not isinstance(settings, Mapping) or not all(
        isinstance(key, str) and isinstance(value, str) for key, value in settings.items()
    ):
        return "has settings that are not an object of texts"
    return None
