"""What a queued BIRD question may not choose, and the workers ``eval bird --durable`` starts.

A question's payload is on the queue of durable runs, which whoever can write it (a shared
SQLite file, a PostgreSQL system database) writes: its endpoint (``check_endpoint``), its
dataset and its workspace (``check_paths``) must be those the eval gave its own workers in
their environment (``worker_environ``), and its grading timeout a number of seconds that
ends (``check_timeout``), else the question is refused before any session or model call.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Mapping
from pathlib import Path

from rho_domain.config import AgentConfig
from rho_domain.errors import ConfigError
from rho_domain.ports.durable import QueuedRun

ENDPOINT = (
    "model",
    "base_url",
    "provider",
    "api_key_env",
    "reasoning_effort",
    "service_tier",
    "max_turns",
)
"""The config fields of the eval's endpoint, in a question's payload and a worker's config."""


def check_endpoint(queued: QueuedRun, config: AgentConfig) -> None:
    """A question runs on this worker's own endpoint: the queue is data, and whoever can
    write it must not choose where the worker's model calls go (with the question and its
    database's rows) nor which of its environment variables is sent as the API key. The
    payload's endpoint (what ``eval bird`` ran with, given to its workers in their
    environment: ``worker_environ``) must be the worker's; ``ConfigError`` otherwise."""
    differs = [
        f"{field} {queued.settings[field]!r} (this worker's: {getattr(config, field)!r})"
        for field in ENDPOINT
        if field in queued.settings and queued.settings[field] != str(getattr(config, field))
    ]
    if differs:
        from rho_domain.url_logins import hide_url_logins

        raise ConfigError(
            hide_url_logins(
                f"queued question {queued.run_id} asks for {'; '.join(differs)}; a queued run "
                "does not choose where this worker's model calls go: start the worker with "
                "that endpoint (RHO_AGENT_MODEL, RHO_AGENT_BASE_URL, RHO_AGENT_PROVIDER, "
                "RHO_AGENT_API_KEY_ENV, RHO_AGENT_REASONING_EFFORT, RHO_AGENT_MAX_TURNS)"
            )
        )


HELD_PATHS = {"data": "RHO_AGENT_BIRD_DATA", "workspace": "RHO_AGENT_BIRD_WORKSPACE"}
"""The payload's paths and the variables in which ``eval bird --durable`` gives its workers
the same paths (``worker_environ``)."""


def check_paths(queued: QueuedRun, environ: Mapping[str, str]) -> None:
    """A question reads the dataset and works in the workspace its eval gave this worker:
    the payload's ``data`` is the prompt and the database the tools read, its ``workspace``
    the directory they read, and whoever can write the queue must not choose either. A
    worker the eval did not start (any worker on the queue, a server's) runs no question.
    ``ConfigError`` otherwise, before any session or model call."""
    why = "a queued run does not choose the data or the directory a worker's tools read"
    if not all(environ.get(variable) for variable in HELD_PATHS.values()):
        raise ConfigError(
            f"queued question {queued.run_id} is a BIRD question of `rho-agent eval bird "
            "--durable`, whose own workers run them ($RHO_AGENT_BIRD_DATA and "
            f"$RHO_AGENT_BIRD_WORKSPACE are unset here): {why}"
        )
    for field, variable in HELD_PATHS.items():
        asked, mine = queued.settings.get(field, ""), environ[variable]
        if os.path.realpath(asked) != os.path.realpath(mine):
            raise ConfigError(
                f"queued question {queued.run_id} asks for {field} {asked!r} (this worker's: "
                f"{mine!r}); {why}: the eval gives its workers both"
            )


def check_timeout(queued: QueuedRun) -> float:
    """The payload's ``timeout``, the seconds each graded query may run on this worker: a
    finite number above 0, else ``ConfigError``. ``float`` took ``nan`` and ``inf``, and the
    grader's deadline (``monotonic() > start + timeout``) never passed: a question whose
    predicted SQL never ends held the worker's thread for good."""
    raw = queued.settings.get("timeout", "")
    try:
        seconds = float(raw)
    except ValueError:
        seconds = math.nan
    if not math.isfinite(seconds) or seconds <= 0:
        raise ConfigError(
            f"queued question {queued.run_id} asks for a grading timeout of {raw[:40]!r}: a "
            "queued run's timeout is a finite number of seconds, more than 0 (the eval's "
            "--timeout)"
        )
    return seconds


def worker_command(database: str, queue: str, *, dead_after: float = 5.0) -> list[str]:
    """The command line of one eval worker: one question at a time, the queue polled ten
    times a second, a worker silent for ``dead_after`` seconds taken for dead (``eval bird
    --dead-after``). Each beats every quarter of that, at most every second, as ``serve
    --durable`` does: a beat late by less than three quarters of the window is not a death.
    The store is not on it (``worker_environ``)."""
    heartbeat = min(1.0, dead_after / 4)
    return [
        sys.executable, "-m", "rho_entry", "worker", "--durable-db", database,
        "--queue", queue, "--concurrency", "1", "--poll", "0.1",
        "--heartbeat", repr(heartbeat), "--dead-after", repr(dead_after),
    ]  # fmt: skip


def worker_environ(
    store: str | Path,
    environ: Mapping[str, str],
    config: AgentConfig | None = None,
    *,
    data: Path | None = None,
    workspace: Path | None = None,
) -> dict[str, str]:
    """The environment of one eval worker: ``environ`` with the store in ``RHO_AGENT_STORE``,
    where the worker looks when no --store is given, and the eval's endpoint (``config``'s
    model, base URL, provider, key variable, reasoning effort, service tier and turn limit)
    in the variables the worker reads them from: a worker runs a question on its own endpoint only
    (``check_endpoint``); and the eval's dataset (``data``) and workspace in ``HELD_PATHS``'
    variables: a worker runs a question of that data in that workspace only
    (``check_paths``). Not on the command line: a command line is anyone's to read (ps,
    /proc/PID/cmdline), and a store or base URL may hold a password (one taken from
    $RHO_AGENT_STORE was on no command line before)."""
    from rho_entry.config.settings import ENV_VARS

    endpoint = {} if config is None else {
        ENV_VARS[field][0]: str(getattr(config, field))
        for field in ENDPOINT
        if getattr(config, field) is not None
    }  # fmt: skip
    given = {"data": data, "workspace": workspace}
    paths = {HELD_PATHS[k]: str(Path(v).resolve()) for k, v in given.items() if v is not None}
    return {**environ, **endpoint, **paths, "RHO_AGENT_STORE": str(store)}
