"""Making a sandbox: ``POST /sandbox`` and the wait until it is started, and what a creation
that failed leaves deleted.

Split from ``api.py`` (``reattaching.session_sandbox`` calls ``create``): a creation has
more to undo than any other call. One that does not start is deleted at once, and so is one a failed
creation may have made all the same (its answer lost), found by its name and proved ours by
a token no one else has seen (``creation.made_by``); nothing else knows its id.
"""

from __future__ import annotations

import asyncio
import logging
import secrets

from rho_adapters.daytona import creation
from rho_adapters.daytona._errors import error_for, hiding_key
from rho_adapters.daytona.answers import json_object
from rho_adapters.daytona.api import Sandbox, SandboxAPI
from rho_domain.endpoint_url import path_segment
from rho_domain.errors import ExecutorError

log = logging.getLogger(__name__)
_ERRORS = tuple(range(400, 600))  # a creation's: what it may have made depends on which


async def create(api: SandboxAPI, name: str) -> Sandbox:
    """Create a sandbox named ``name`` (``creation.new_name``, in the trace already) and
    wait until it is started (``creation.started``). One that does not start (a failed
    state, the creation deadline, no usable toolbox URL, the call cancelled: Ctrl+C,
    SIGTERM) is deleted before the error is passed on: nothing else knows its id, and it
    ran until Daytona's auto-stop and auto-delete. So is one a creation that failed may
    have made all the same (its answer lost: a timeout, a gateway's 502, a 2xx page that is
    no JSON or names no id), found by ``name`` and proved its own by a token no one else
    has seen (``creation.made_by``).
    A refusal (a status below 500) is raised as it is, asked again by the next call: its
    cause may pass, or be fixed outside this run (no runner free, a snapshot still
    pulled or inactive, a quota)."""
    with hiding_key(api.settings.api_key):  # its errorReason and toolbox URL are quoted
        token = secrets.token_hex(16)
        body = creation.create_body(api.settings, name, token)
        url, status = f"{api.url}/sandbox", None
        try:
            response = await api.send("POST", url, "sandbox creation", json=body, accept=_ERRORS)
            if response.is_error:
                key = api.settings.api_key
                status = response.status_code
                raise error_for(response, "sandbox creation", key=key)
            data = json_object(response, "sandbox creation")  # a 2xx page may be none
            if not (sandbox_id := str(data.get("id") or "")):
                raise ExecutorError("Daytona created a sandbox without an id")
        except BaseException as exc:
            if creation.may_have_made(exc, status):
                await _discard_named(api, name, token)
            raise
        try:
            return await api.started(sandbox_id, data)
        except BaseException:
            await api.discard(sandbox_id, "which did not start")
            raise


async def _discard_named(api: SandboxAPI, name: str, token: str) -> None:
    """Delete the sandbox named ``name`` when Daytona has one that carries ``token``
    (``creation.made_by``: the one our creation made); anything else (none, a squatter's,
    a failure, the lookup's own time out) is left, a failure logged at debug: the
    creation's error is the one to report."""
    try:
        async with asyncio.timeout(api.settings.request_timeout):
            url = f"{api.url}/sandbox/{path_segment(name)}"
            response = await api.send("GET", url, "sandbox lookup", accept=(404,))
            if response.status_code == 404:
                return
            found = json_object(response, "sandbox lookup")
    except Exception as exc:  # noqa: BLE001 - see above; a cancel is passed on
        log.debug("no lookup of Daytona sandbox %s after a failed creation: %s", name, exc)
        return
    if found.get("name") == name and creation.made_by(found, token):
        await api.discard(str(found.get("id") or name), "whose creation failed")
