"""Which sandbox serves a session: a resumed session's own, found by the id its trace names,
or a new one, and what the resume says when it is not its own.

A sandbox's labels (``created-by=rho-agent``, ``rho-agent-session=<id>``) can be set by anyone
in the organisation, so they attach nothing: only the sandbox the trace names
(``DaytonaExecutor.expect``) is reattached; when the trace names none, a sandbox that merely
carries the labels is named in the resume's notice and left alone.
"""

from __future__ import annotations

import logging
from typing import Any

from rho_adapters.daytona import creation
from rho_adapters.daytona.api import Sandbox, SandboxAPI
from rho_adapters.daytona.making import create
from rho_adapters.daytona.settings import DaytonaSettings
from rho_adapters.model.secret_hiding import hide_secrets
from rho_domain.errors import ConfigError, ExecutorError
from rho_domain.ports.executor import PlacementTold

# the executor's logger, as before this was split from the workspace
log = logging.getLogger("rho_adapters.daytona.executor")


async def session_sandbox(
    api: SandboxAPI, settings: DaytonaSettings, known: str | None, told: PlacementTold | None
) -> tuple[Sandbox, str | None]:
    """The session's sandbox and why it is a new one when a resume wanted its own (else
    None): the sandbox whose id is ``known`` when Daytona still has it (started again when
    stopped or archived), else a new one, logged with the session's id, its name
    (``creation.new_name``) told to ``told`` before it is asked for. ``ConfigError`` when the
    settings name a build it was not made from (``creation.other_build``)."""
    session = settings.session_id
    found = await _find(api, session, known) if settings.reattach and session else None
    unrecorded = None
    if found and known is not None and found.get("id") != known:
        # Daytona looks a name up when no id matches: the name a killed run told before
        # Daytona answered with the id (nothing ran in that sandbox), or a sandbox someone
        # named after the id the trace names. Never attached, nor deleted on the word of
        # stored data (a trace is anyone's): named, and left to its auto-stop and delete.
        unrecorded, found = found, None
    broken = None
    if found and known is not None and found.get("state") in creation.BROKEN:
        broken, found = found, None  # Daytona refuses to start it; its files are in it
        if broken.get("recoverable") is True:
            raise ExecutorError(_recoverable(session, broken, settings.api_key))
    if found and known is not None:
        if (refusal := creation.other_build(settings, found)) is not None:
            raise ConfigError(refusal)  # the build named is not what the sandbox runs
        sandbox = await api.reattach(found)
        log.info("session %s: reattached to its Daytona sandbox %s", session, sandbox.id)
        return sandbox, None
    name = creation.new_name()
    await creation.tell(told, name)  # a run killed before Daytona answers has named it
    sandbox = await create(api, name)
    log.info("session %s: created Daytona sandbox %s", session, sandbox.id)
    recreated = None
    if unrecorded:
        recreated = (
            f"the sandbox the trace names, {known}, was found by that name only, as "
            f"{unrecorded.get('id')}: one a run killed before Daytona answered had asked for "
            "(nothing ran in it), or one named after this session's; it was neither attached "
            "nor deleted (a trace is stored data anyone may edit): if it is yours, delete it "
            f"with {creation.delete_command(str(unrecorded.get('id')))}. A new, empty one "
            f"({sandbox.id}) serves this session, so files the conversation mentions from "
            "before are not there"
        )
    elif broken:
        recreated = (
            f"this session's Daytona sandbox {broken.get('id')} is "
            f"{_failure(broken, settings.api_key)}: Daytona "
            f"does not start it, so a new, empty one ({sandbox.id}) replaces it, and files the "
            "conversation mentions from before are not there. The failed one was kept with its "
            f"files; copy what you need, then delete it: "
            f"{creation.delete_command(str(broken.get('id')))}"
        )
    elif found:
        recreated = creation.labelled_only(session, found, sandbox.id)
    elif settings.reattach and session:
        recreated = (
            f"this session's Daytona sandbox is gone (deleted when the session last closed, "
            f"by Daytona's auto-delete, or failed): a new, empty one ({sandbox.id}) "
            "replaces it, so files the conversation mentions from before are not there"
        )
    if recreated is not None:
        log.warning("session %s: %s", session, recreated)
    return sandbox, recreated


async def _find(api: SandboxAPI, session: str, known: str | None) -> dict[str, Any] | None:
    """``SandboxAPI.find``. A label search (the trace names none) only says what it left:
    its failure (a 5xx, a page that is no JSON) is logged, and a new sandbox is made."""
    if known is not None:
        return await api.find(session, known)
    try:
        return await api.find(session)
    except ExecutorError as exc:
        log.warning(
            "session %s: could not look for sandboxes labelled as its own: %s", session, exc
        )
        return None


def _failure(data: dict[str, Any], key: str) -> str:
    """A failed sandbox's state and Daytona's reason for it, as a resume says them (``key``,
    the API key, hidden: a reason may quote what the runner was sent)."""
    reason = hide_secrets(str(data.get("errorReason") or "no reason given")[:300], key)
    return f"{data.get('state')} ({reason})"


def _recoverable(session: str | None, data: dict[str, Any], key: str) -> str:
    """Why a resume does not go on while its sandbox's failure is one Daytona can recover
    from (``recoverable``: a full disk, a lost runner): a new, empty one would leave the
    session's files in it unsaid; the next call asks again."""
    sandbox = str(data.get("id"))
    return (
        f"session {session}'s Daytona sandbox {sandbox} is {_failure(data, key)}, which Daytona "
        "says it can recover from: recover it in Daytona (its dashboard or API), and the next "
        "call goes on in it with the session's files; or delete it to go on in a new, empty "
        "one: "
        f"{creation.delete_command(sandbox)}"
    )
