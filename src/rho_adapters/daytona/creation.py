"""A sandbox's creation: the ``CreateSandbox`` body asked for, and the wait until it started.

``POST /sandbox`` answers at once, mostly in state ``creating`` (a snapshot pulled, a
Dockerfile built); ``started`` polls ``GET /sandbox/{id}`` until the sandbox is ``started``,
and fails on a state it will not leave (``error``, ``build_failed``...) or past the creation
deadline. ``making.create`` deletes a sandbox that did not start (nothing else knows its
id).
"""

from __future__ import annotations

import hashlib
import json
import logging
import secrets
import shlex
from collections.abc import Awaitable, Callable
from typing import Any

import httpx

from rho_adapters.daytona.settings import DaytonaSettings
from rho_domain.endpoint_url import path_segment
from rho_domain.errors import ExecutorError, PlacementRefused
from rho_domain.placement import Placement
from rho_domain.ports.clock import Clock
from rho_domain.ports.executor import PlacementTold

_log = logging.getLogger("rho_adapters.daytona.executor")

BROKEN = frozenset({"error", "build_failed"})  # kept by Daytona, its files too; never started
_FAILED_STATES = BROKEN | {"destroyed", "destroying"}
STARTING = frozenset(
    [
        "started",
        "starting",
        "restoring",
        "creating",
        "pending_build",
        "pulling_snapshot",
        "building_snapshot",
    ]
)
"""States of a sandbox started or on its way there, which a resume waits for rather than
starts: Daytona refuses to start one whose state is changing ('State change in progress')."""
SESSION_LABEL = "rho-agent-session"
"""The label naming the rho-agent session a sandbox serves (``DaytonaSettings.session_id``)."""
CREATION_LABEL = "rho-agent-creation"
"""The label holding a creation's secret token (``create_body``), written nowhere else: the
proof that a sandbox found by the name that creation chose is the one it made."""
BUILD_LABEL = "rho-agent-build"
"""The label saying what built a sandbox (``build_of``), compared when a session reattaches."""
DEFAULT_BUILD = "default"
"""``BUILD_LABEL``'s value for a sandbox of the organisation's default snapshot."""


def may_have_made(error: BaseException, status: int | None = None) -> bool:
    """Whether a creation that failed with ``error`` may have made its sandbox all the same:
    the server answered a 5xx (a gateway's 502 after the API made it; ``status``), an answer
    cut short, the answer was waited for (a read timeout, a dropped connection) or the call
    was cancelled meanwhile; not when the request never reached it (no connection, a proxy's
    refusal, a URL httpx refuses), nor when the API refused it (a status below 500: a name
    another sandbox holds, 409; a quota, 403; no runner free, 400)."""
    if status is not None and status < 500:
        return False
    cause = error.__cause__
    if isinstance(cause, httpx.ReadTimeout | httpx.ReadError | httpx.RemoteProtocolError):
        return True
    return not isinstance(cause, httpx.HTTPError | httpx.InvalidURL)


def labels_for(settings: DaytonaSettings) -> dict[str, str]:
    """The sandbox's labels: ``created-by=rho-agent``, the session's id, what built it
    (``build_of``), the settings' own."""
    session = {SESSION_LABEL: settings.session_id} if settings.session_id else {}
    built = {BUILD_LABEL: build_of(settings) or DEFAULT_BUILD}
    return {**settings.labels, "created-by": "rho-agent", **session, **built}


def build_of(settings: DaytonaSettings) -> str | None:
    """What the settings build a sandbox from, as a digest (the first 32 hex digits of
    SHA-256 over ``snapshot:NAME`` or ``dockerfile:TEXT``; an image is the one-line
    Dockerfile ``create_body`` sends for it, and a Dockerfile has no build context, so its
    text is all of it), or None when they name none (the organisation's default)."""
    if settings.snapshot:
        named = f"snapshot:{settings.snapshot}"
    elif settings.dockerfile or settings.image:
        named = f"dockerfile:{settings.dockerfile or f'FROM {settings.image}' + chr(10)}"
    else:
        return None
    return hashlib.sha256(named.encode("utf-8", "surrogateescape")).hexdigest()[:32]


def other_build(settings: DaytonaSettings, found: dict[str, Any]) -> str | None:
    """Why the sandbox ``found`` (``session_sandbox``) must not serve a session resumed with
    ``settings``: they name a build (``build_of``) and it was built from another one, or its
    labels do not say (made before rho-agent labelled builds); else None. A resume that names
    no build takes the session's sandbox whatever built it (the build flags are not stored
    with the session)."""
    wanted = build_of(settings)
    if wanted is None:
        return None
    labels = found.get("labels")
    built = labels.get(BUILD_LABEL) if isinstance(labels, dict) else None
    if built == wanted:
        return None
    named = "snapshot " + repr(settings.snapshot) if settings.snapshot else "Dockerfile"
    was = "its labels do not say what built it" if built is None else "it was built otherwise"
    return (
        f"session {settings.session_id}'s Daytona sandbox {found.get('id')} was not built from "
        f"the {named} this resume names ({was}); resume without naming a build "
        "(--dockerfile, --snapshot, RHO_AGENT_DAYTONA_IMAGE/_SNAPSHOT) to go on in it, or "
        f"delete it ({delete_command(str(found.get('id')))}; its files go with it) and "
        "resume again to build a new one"
    )


def delete_command(sandbox_id: str) -> str:
    """The command that deletes sandbox ``sandbox_id`` (Daytona's CLI, ``daytona delete``),
    for an operator told of a sandbox rho-agent leaves: by its id, which names one sandbox
    (a name is looked up only when no id matches), quoted for a shell."""
    return f"daytona delete {shlex.quote(sandbox_id)}"


def new_name() -> str:
    """A name for a sandbox still to be made (``rho-agent-`` and 16 random hex digits): told
    to the trace before ``POST /sandbox`` asks for it, so a run killed before Daytona
    answered with its id has named it (``GET``/``DELETE /sandbox/{idOrName}`` take it)."""
    return f"rho-agent-{secrets.token_hex(8)}"


def create_body(
    settings: DaytonaSettings, name: str | None = None, token: str | None = None
) -> dict[str, Any]:
    """The ``CreateSandbox`` body: only the fields that are set (older servers reject
    unknowns), and ``name`` (``new_name``) and ``token`` (``CREATION_LABEL``) when given."""
    proof = {CREATION_LABEL: token} if token is not None else {}
    body: dict[str, Any] = {
        "env": dict(settings.env),
        "labels": {**labels_for(settings), **proof},
        "autoStopInterval": settings.auto_stop_interval,
    }
    if name is not None:
        body["name"] = name
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


def made_by(found: dict[str, Any], token: str) -> bool:
    """Whether the sandbox ``found`` describes is the one the creation that sent ``token``
    (``create_body``) made: it carries that token. Its name is in the trace before
    ``POST /sandbox`` (whoever reads it may take the name first: our POST is then refused)
    and rho-agent's and the session's labels anyone in the organisation may set."""
    labels = found.get("labels")
    return isinstance(labels, dict) and labels.get(CREATION_LABEL) == token


def session_query(session_id: str) -> dict[str, str]:
    """The query of ``GET /sandbox`` for the sandbox rho-agent made for ``session_id``."""
    return {"labels": json.dumps({"created-by": "rho-agent", SESSION_LABEL: session_id})}


def session_sandbox(
    content: bytes, session_id: str, organization: str | None = None, *, broken: bool = False
) -> dict[str, Any] | None:
    """The first sandbox of a ``GET /sandbox`` answer (a list, or a page's ``items``) that
    rho-agent made for ``session_id`` (checked here too: a server that ignored the filter
    would hand over another's sandbox) and is not destroyed or failed (Daytona refuses to
    start an ``error`` one: the session would fail at every call) and, when ``organization``
    is named (``DaytonaSettings.organization_id``), whose ``organizationId`` is not another's
    (logged: a server or proxy that ignored the header would hand over another
    organisation's sandbox), else None; ``ExecutorError`` for an answer that is not JSON.
    ``broken``: one in a ``BROKEN`` state is returned too (the trace names it: its files are
    there, and the resume says so)."""
    labels = {"created-by": "rho-agent", SESSION_LABEL: session_id}
    try:
        body = json.loads(content)
    except (ValueError, RecursionError) as exc:
        raise ExecutorError(f"Daytona's sandbox lookup answered no JSON: {content[:80]!r}") from exc
    items = body.get("items") if isinstance(body, dict) else body
    for data in items if isinstance(items, list) else ():
        if not isinstance(data, dict):
            continue
        if data.get("state") in _FAILED_STATES and not (broken and data["state"] in BROKEN):
            continue
        found = data.get("labels")
        if not isinstance(found, dict) or any(found.get(k) != v for k, v in labels.items()):
            continue
        owner = data.get("organizationId")
        if organization and owner is not None and owner != organization:
            _log.warning(
                "Daytona sandbox %s labelled as session %s's belongs to organisation %r, not "
                "%r (DaytonaSettings.organization_id): not attached",
                data.get("id"),
                session_id,
                str(owner)[:80],
                organization,
            )
            continue
        return data
    return None


def labelled_only(session_id: str | None, found: dict[str, Any], made: str) -> str:
    """What a resume says when its trace names no sandbox (none ever recorded: a session
    that ran none, a trace from before rho-agent recorded them) and ``found`` carries the
    session's labels: it is not attached (anyone in the organisation can set them), and
    ``made`` serves the session instead."""
    return (
        f"session {session_id}'s trace names no Daytona sandbox, and sandbox {found.get('id')} "
        "that carries its labels was not attached: anyone in the organisation can label a "
        f"sandbox so. A new, empty one ({made}) serves it; if {found.get('id')} was this "
        "session's (a trace written before rho-agent recorded its sandbox), copy what you "
        f"need from it, then delete it: {delete_command(str(found.get('id')))}"
    )


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
            # a failed build fails again: the same Dockerfile or snapshot, the same error
            failed = PlacementRefused if state == "build_failed" else ExecutorError
            raise failed(f"Daytona sandbox {sandbox_id} is {state}: {reason}")
        if clock.monotonic() > deadline:
            raise ExecutorError(
                f"Daytona sandbox {sandbox_id} not started after {timeout:g} s (state {state})"
            )
        await clock.sleep(delay)
        delay = min(delay * 1.1, 1.0)
        data = await status()
    return data


def toolbox_base(api: str, proxy: str, sandbox_id: str) -> str:
    """The base URL of sandbox ``sandbox_id``'s toolbox behind ``proxy`` (the URL Daytona's
    API at ``api`` named); ``ExecutorError`` when there is none, or it is not https while
    the API is (every toolbox request carries the API key)."""
    if not proxy:
        raise ExecutorError(f"Daytona gave no toolbox URL for sandbox {sandbox_id}")
    if api.lower().startswith("https:") and not proxy.lower().startswith("https:"):
        raise ExecutorError(
            f"Daytona's API at {api} named a toolbox URL that is not https "
            f"({proxy!r}); the API key is not sent there. Check the Daytona server's "
            "toolbox proxy settings"
        )
    return f"{proxy.rstrip('/')}/{path_segment(sandbox_id)}"


async def tell(told: PlacementTold | None, sandbox_id: str) -> None:
    """Have ``told`` record sandbox ``sandbox_id`` (``Executor.on_placed``) before anything
    runs in it; its failure (a full disk) is logged: the run's ``run_end`` names it too."""
    if told is None:
        return
    try:
        await told(Placement(backend="daytona", id=sandbox_id))
    except Exception as exc:  # noqa: BLE001 - the call that made the sandbox goes on
        _log.warning(
            "could not record Daytona sandbox %s in the session's trace (%s); the run's end "
            "names it, or delete it if the run dies before: %s",
            sandbox_id,
            exc,
            delete_command(sandbox_id),
        )
