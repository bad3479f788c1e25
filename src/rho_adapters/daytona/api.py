"""SandboxAPI: the few Daytona REST calls the executor needs, on one ``httpx.AsyncClient``.

Control plane (``{api_url}``): ``POST /sandbox``, ``GET /sandbox/{id}`` (polled until
``started``), ``DELETE /sandbox/{id}``; a session's own found (``GET /sandbox?labels=``) and
started again (``POST /sandbox/{id}/start``). Toolbox daemon (``{toolboxProxyUrl}/{id}``):
``POST /process/execute`` (uploads: uploads.py; a listing is a script: listing.py). Every
request goes through ``send``, where transport failures and error statuses are mapped.
"""

from __future__ import annotations

import asyncio
import logging
import math
from typing import Any

import attrs
import httpx

from rho_adapters.clock import SystemClock
from rho_adapters.daytona import creation
from rho_adapters.daytona._errors import (
    error_for,
    hiding_key,
    map_httpx_errors,
    not_running,
)
from rho_adapters.daytona.answers import (
    ANSWER_BYTES,
    ExecAnswer,
    exec_answer,
    fetched,
    json_object,
    patiently,
)
from rho_adapters.daytona.client import api_client
from rho_adapters.daytona.settings import DaytonaSettings
from rho_domain.endpoint_url import path_segment
from rho_domain.errors import ExecutorError, RhoError
from rho_domain.ports.clock import Clock
from rho_domain.value_methods import value_eq, value_hash, value_repr

log = logging.getLogger(__name__)
_GATEWAY = (502, 503, 504)  # a poll's answers that say nothing of the sandbox: polled again
_HTTP_GRACE = 5.0  # the HTTP timeout of an execute call is the command's timeout plus this


@attrs.frozen
class Sandbox:
    """A started sandbox: its id and the base URL of its toolbox daemon."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    id: str
    toolbox_url: str


class SandboxAPI:
    """Thin client; one instance per executor, closed by ``aclose``. ``answer_bytes``: the
    largest answer read (``ExecutorError`` beyond)."""

    answer_bytes = ANSWER_BYTES

    def __init__(
        self,
        settings: DaytonaSettings,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        clock: Clock | None = None,
    ) -> None:
        self._settings = settings
        self._clock = clock or SystemClock()  # polls and the creation deadline (fakes: instant)
        self._client = api_client(settings, transport)
        self._api = settings.api_url.rstrip("/")
        self._waking: dict[str, asyncio.Future[Sandbox]] = {}  # sandbox id -> its one start

    @property
    def settings(self) -> DaytonaSettings:
        """The settings requests are made with (the session's once ``serve`` named it)."""
        return self._settings

    @property
    def url(self) -> str:
        """The control plane's base URL (``{api_url}``, no trailing ``/``)."""
        return self._api

    def serve(self, settings: DaytonaSettings) -> None:
        """Take ``settings`` naming the session (``SandboxWorkspace.serve``)."""
        self._settings = settings

    async def send(
        self,
        method: str,
        url: str,
        what: str,
        *,
        file_path: str | None = None,
        accept: tuple[int, ...] = (),
        waits: float = 0.0,
        sandbox: Sandbox | None = None,
        **kwargs: Any,
    ) -> httpx.Response:
        """Send one request; raise the mapped rho error unless 2xx or in ``accept``. Its
        answer is read bounded (``answers.fetched``) and whole within ``waits`` seconds (what
        the server may take before it answers: a command's run) plus twice
        ``request_timeout``: the read timeout counts only silence. A toolbox request's error
        (``sandbox``) is first checked against the sandbox's state (``not_running``)."""
        deadline = waits + 2 * self._settings.request_timeout
        with hiding_key(self._settings.api_key):
            try:
                with map_httpx_errors(what, self._api):  # turned away: sent again (patiently)
                    response = await patiently(
                        lambda: fetched(
                            self._client,
                            self._client.build_request(method, url, **kwargs),
                            what,
                            deadline=deadline,
                            limit=self.answer_bytes,
                        ),
                        self._clock,
                    )
            except ExecutorError as exc:  # a sandbox deleted mid-command: the proxy hangs up
                if sandbox is not None and isinstance(exc.__cause__, httpx.TransportError):
                    await self._running(sandbox, what, exc)
                raise
            if response.is_success or response.status_code in accept:
                return response
            error = error_for(response, what, file_path=file_path, key=self._settings.api_key)
            if sandbox is not None:
                await self._running(sandbox, what, error)
            raise error

    async def _running(self, sandbox: Sandbox, what: str, error: RhoError) -> None:
        """Raise ``not_running`` from ``error`` (a toolbox request's) when the sandbox is not
        started; one stopped or archived (its auto-stop) started again for the next call."""
        if (state := await self.state(sandbox.id)) in ("started", "unknown"):
            return
        try:  # stopped or archived (its auto-stop): started again, with its files
            woken = state in ("stopped", "archived")
            again = (await self._wake(sandbox.id, state)).id if woken else None
        except RhoError as exc:
            again = f"could not be started again ({exc})"
        raise not_running(sandbox.id, state, what, error, again) from error

    async def _wake(self, sandbox_id: str, state: str) -> Sandbox:
        """Start ``sandbox_id`` again, once for all the calls that found it stopped together
        (a batch of reads run at once): each sent its own start, and Daytona refuses the start
        of a sandbox already starting, so all but one said it could not be started again."""
        if (waking := self._waking.get(sandbox_id)) is None:
            waking = asyncio.ensure_future(self.reattach({"id": sandbox_id, "state": state}))
            self._waking[sandbox_id] = waking
            waking.add_done_callback(lambda _: self._waking.pop(sandbox_id, None))
        return await asyncio.shield(waking)  # one caller cancelled: the others still wait

    async def state(self, sandbox_id: str) -> str:
        """The sandbox's state as the control plane tells it (``deleted`` when it answers
        404); ``unknown`` when it cannot be asked (that failure is not the one to report)."""
        try:
            url = f"{self._api}/sandbox/{path_segment(sandbox_id)}"
            response = await self.send("GET", url, "sandbox status", accept=(404,))
            if response.status_code == 404:  # gone
                return "deleted"
            return str(json_object(response, "sandbox status").get("state") or "unknown")
        except RhoError:
            return "unknown"

    async def find(self, session_id: str, known: str | None = None) -> dict[str, Any] | None:
        """The description of session ``session_id``'s sandbox, or None (``creation``): the
        sandbox ``known`` when the session's trace names it (never another that its labels
        match: anyone in the organisation can label a sandbox so), else the one found by
        its labels; the sandbox ``known`` in a ``creation.BROKEN`` state too."""
        if known is not None:
            url = f"{self._api}/sandbox/{path_segment(known)}"
            response = await self.send("GET", url, "sandbox lookup", accept=(404,))
            found = b"[]" if response.status_code == 404 else b"[" + response.content + b"]"
        else:
            query = creation.session_query(session_id)
            url = f"{self._api}/sandbox"
            found = (await self.send("GET", url, "sandbox lookup", params=query)).content
        with hiding_key(self._settings.api_key):  # a page that is no JSON is quoted
            organization = self._settings.organization_id
            return creation.session_sandbox(found, session_id, organization, broken=bool(known))

    async def reattach(self, data: dict[str, Any]) -> Sandbox:
        """The sandbox ``data`` describes (``find``), started again when it was stopped or
        archived (``POST /sandbox/{id}/start``; one on its way, ``creation.STARTING``, only
        waited for) within the creation deadline. Never deleted on failure: it holds the
        session's files."""
        sandbox_id = str(data.get("id") or "")
        with hiding_key(self._settings.api_key):
            if data.get("state") not in creation.STARTING:
                url = f"{self._api}/sandbox/{path_segment(sandbox_id)}/start"
                await self.send("POST", url, "sandbox start")
                data = {**data, "state": "starting"}  # polled from here on
            return await self.started(sandbox_id, data)

    async def started(self, sandbox_id: str, data: dict[str, Any]) -> Sandbox:
        """The sandbox ``data`` describes once started (polled within the creation
        deadline), with its toolbox URL."""

        async def status() -> dict[str, Any]:
            url = f"{self._api}/sandbox/{path_segment(sandbox_id)}"
            response = await self.send("GET", url, "sandbox status", accept=_GATEWAY)
            if response.status_code in _GATEWAY:  # a gateway's hiccup mid-build: asked again
                return {"state": "unknown"}
            return json_object(response, "sandbox status")

        timeout = self._settings.create_timeout
        data = await creation.started(sandbox_id, data, status, clock=self._clock, timeout=timeout)
        proxy = str(data.get("toolboxProxyUrl") or "")
        if not proxy:
            url = f"{self._api}/sandbox/{path_segment(sandbox_id)}/toolbox-proxy-url"
            response = await self.send("GET", url, "toolbox URL")
            proxy = str(json_object(response, "toolbox URL").get("url") or "")
        return Sandbox(
            id=sandbox_id, toolbox_url=creation.toolbox_base(self._api, proxy, sandbox_id)
        )

    async def discard(self, sandbox_id: str, why: str) -> bool:
        """Delete a sandbox within ``request_timeout``; False, logged naming it, its labels and
        ``why`` it was deleted, when that failed, hung or was cancelled (a second Ctrl+C,
        SIGTERM: the CancelledError is passed on), never raised otherwise."""
        labels = ", ".join(f"{k}={v}" for k, v in creation.labels_for(self._settings).items())
        try:
            async with asyncio.timeout(self._settings.request_timeout):
                await self.delete(sandbox_id)
            return True
        except (Exception, asyncio.CancelledError) as exc:
            cancelled = isinstance(exc, asyncio.CancelledError)
            log.warning(
                "could not delete Daytona sandbox %s, %s (labels %s): %s; delete it: %s",
                sandbox_id,
                why,
                labels,
                "cancelled" if cancelled else str(exc) or type(exc).__name__,
                creation.delete_command(sandbox_id),
                exc_info=not cancelled,
            )
            if cancelled:
                raise
            return False

    async def delete(self, sandbox_id: str) -> None:
        """Delete a sandbox (``ExecutorError`` when Daytona does not)."""
        url = f"{self._api}/sandbox/{path_segment(sandbox_id)}"
        await self.send("DELETE", url, "sandbox deletion")

    async def execute(self, sandbox: Sandbox, command: str, *, timeout: float) -> ExecAnswer | None:
        """Run ``command`` through the daemon; None when the daemon killed it (408 timeout)."""
        seconds = max(1, math.ceil(timeout))
        response = await self.send(
            "POST",
            f"{sandbox.toolbox_url}/process/execute",
            f"command execution in sandbox {sandbox.id}",
            accept=(408,),
            sandbox=sandbox,
            json={"command": command, "timeout": seconds},
            waits=seconds + _HTTP_GRACE,
            timeout=httpx.Timeout(seconds + _HTTP_GRACE, connect=self._settings.request_timeout),
        )
        return None if response.status_code == 408 else exec_answer(response, sandbox.id)

    async def aclose(self) -> None:
        """Close the HTTP client this object created (a passed one stays open)."""
        await self._client.aclose()
