"""FakeDaytona: the Daytona control plane and toolbox daemon, as an ``httpx.MockTransport``.

Built to the real protocol (Daytona's toolbox REST API) so the executor's requests are exercised for
real: Bearer auth (401 with the JSON error envelope otherwise), ``POST /sandbox`` (answered in
state ``creating``; ``GET /sandbox/{id}`` reports ``started`` after ``polls_until_started``
polls), ``DELETE /sandbox/{id}`` (``{id}``: a sandbox's id, else the ``name`` it was
created with, unique among the live ones: a second is 409, as the API's
``findOneByIdOrName``), and on ``{toolboxProxyUrl}/{id}``: ``POST
/process/execute`` (as the daemon runs it: ``daemon="argv"``, the default, splits the command
and execs its words without a shell, as daemons before March 2026 do; ``"shell"`` gives it to a
real ``bash`` on stdin, as newer ones do; ``timeout`` kills the process group and answers 408;
daytona_process.py), ``GET /files``, ``GET
/files/info``, ``GET /files/download`` and multipart ``POST /files/bulk-upload`` on the real
filesystem. Paths are the host's own: point the executor's ``working_dir`` at a temporary
directory.

Records ``created`` (request bodies), ``deleted`` (ids), ``requests`` (method, path) and
``commands`` (``scripts``: the scripts they carried, decoded); ``fail(method, path_suffix,
status, body)`` injects one error answer (``command``: on an execute whose script holds it;
``hang``: never answered, ``hung`` set once waiting); ``fail_creation(reason, state)`` makes the
next sandbox end in state ``error`` (or ``state``); ``stop(id, state)`` stops (``stopped``) or
archives (``archived``) a sandbox as its auto-stop would, and its toolbox then answers as the
real proxy does (daytonaio/daytona #4142, #4632); ``GET /sandbox?labels=`` lists the live
sandboxes carrying those labels, and ``POST /sandbox/{id}/start`` starts one again (``starts``;
``starting``, or ``restoring`` when it was archived, for ``polls_until_started`` polls).
``api_url`` and ``toolbox_url`` put the two on other hosts (a test serving ``handler`` on real
sockets).

    fake = FakeDaytona()
    executor = DaytonaExecutor(
        fake.settings(working_dir=str(tmp)), transport=fake.transport, clock=FakeClock()
    )

(``FakeClock``: the executor polls a "creating" sandbox on fake time, without waiting.)
"""

from __future__ import annotations

import asyncio
import json
from typing import Any
from urllib.parse import urlsplit

import attrs
import httpx

from rho_adapters.daytona.settings import DaytonaSettings
from rho_adapters.fakes.daytona_process import Daemon, OnTimeout, execute
from rho_adapters.fakes.daytona_wire import decoded, error, files_answer, script
from rho_domain.value_methods import value_eq, value_repr

API_URL = "https://fake-daytona.test/api"
TOOLBOX_URL = "https://proxy.fake-daytona.test/toolbox"


@attrs.define
class _Fault:
    __repr__ = value_repr
    __eq__ = value_eq

    method: str
    suffix: str
    status: int
    body: Any
    command: str | None = None
    hang: bool = False
    headers: Any = None


class FakeDaytona:
    """A fake Daytona API; ``transport`` plugs it into ``DaytonaExecutor``."""

    def __init__(
        self,
        api_key: str = "fake-key",
        *,
        polls_until_started: int = 2,
        api_url: str = API_URL,
        toolbox_url: str = TOOLBOX_URL,
        daemon: Daemon = "argv",
        on_timeout: OnTimeout = "kill",
    ) -> None:
        self.api_key = api_key
        self.api_url = api_url  # any host and port, each URL with a path (as /api, /toolbox)
        self.toolbox_url = toolbox_url
        self.polls_until_started = polls_until_started
        self.daemon = daemon
        self.on_timeout = on_timeout  # what the daemon does at a command's timeout
        self.left: set[asyncio.Future[Any]] = set()  # reaping the commands left running
        self.created: list[dict[str, Any]] = []
        self.deleted: list[str] = []
        self.requests: list[tuple[str, str]] = []
        self.commands: list[str] = []
        self.polls: dict[str, int] = {}
        self._faults: list[_Fault] = []
        self.hung = asyncio.Event()
        self._creation_failure: str | None = None
        self._failed_state = "error"
        self.stopped: dict[str, str] = {}  # sandbox id -> stopped or archived
        self.starts: list[str] = []  # ids of the sandboxes started again
        self._waking: dict[str, str] = {}  # sandbox id -> starting or restoring
        self._failures: dict[str, tuple[str, bool]] = {}  # id -> errorReason, recoverable
        self.transport = httpx.MockTransport(self.handler)

    def settings(self, **overrides: Any) -> DaytonaSettings:
        """DaytonaSettings pointing at this fake (override any field)."""
        return DaytonaSettings(**{"api_key": self.api_key, "api_url": self.api_url, **overrides})

    def fail(
        self,
        method: str,
        path_suffix: str,
        status: int = 500,
        body: Any = None,
        *,
        command: str | None = None,
        hang: bool = False,
        headers: dict[str, str] | None = None,
    ) -> None:
        """Answer the next ``method`` request whose path ends with ``path_suffix`` (and, with
        ``command``, whose body holds that text) with an error (and ``headers``: a 429's
        ``Retry-After``), or never (``hang``)."""
        self._faults.append(_Fault(method, path_suffix, status, body, command, hang, headers))

    def fail_creation(self, reason: str, state: str = "error") -> None:
        """Make sandbox creation end in ``state`` (``error``; ``build_failed``: a Dockerfile
        that does not build) with ``reason``."""
        self._creation_failure = reason
        self._failed_state = state

    def stop(
        self,
        sandbox_id: str,
        state: str = "stopped",
        reason: str = "",
        *,
        recoverable: bool = False,
    ) -> None:
        """Put a sandbox in ``state`` (``stopped``, ``archived``), as Daytona does after its
        auto-stop interval or when the dashboard stops it (``error``: one that failed, which
        Daytona refuses to start, with its ``errorReason`` and ``recoverable``: whether
        Daytona can recover it, a full disk)."""
        self.stopped[sandbox_id] = state
        self._failures[sandbox_id] = (reason, recoverable)

    @property
    def scripts(self) -> list[str]:
        """The scripts the executed commands carried (``scripts.wrap``), decoded."""
        return [decoded(command) for command in self.commands]

    @property
    def live(self) -> list[str]:
        """Ids of sandboxes created and not deleted."""
        return [str(b["id"]) for b in self.created if b["id"] not in self.deleted]

    async def handler(self, request: httpx.Request) -> httpx.Response:
        """The ``httpx.MockTransport`` handler: answers one request like the Daytona API."""
        path = urlsplit(str(request.url)).path
        self.requests.append((request.method, path))
        if request.headers.get("authorization") != f"Bearer {self.api_key}":
            return error(401, "Unauthorized", path)
        body = await request.aread()
        for fault in self._faults:
            if fault.method == request.method and path.endswith(fault.suffix):
                if fault.command is not None and fault.command not in script(body):
                    continue
                self._faults.remove(fault)
                if fault.hang:
                    self.hung.set()
                    await asyncio.Event().wait()  # until the client gives up (cancels)
                if isinstance(fault.body, (dict, list)):
                    return httpx.Response(fault.status, json=fault.body, headers=fault.headers)
                return httpx.Response(
                    fault.status, text=str(fault.body or ""), headers=fault.headers
                )
        api = urlsplit(self.api_url)
        if (request.url.host, request.url.port) == (api.hostname, api.port):
            return self._control(request, path.removeprefix(api.path.rstrip("/")), body)
        toolbox = urlsplit(self.toolbox_url).path.rstrip("/")
        parts = path.removeprefix(toolbox + "/").split("/", 1)
        if len(parts) != 2 or parts[0] not in self.live:
            return error(404, "sandbox not found", path)
        if self.stopped.get(parts[0]) == "archived":  # no runner: the proxy's 404
            message = f"not found: sandbox container not found: No such container: {parts[0]}"
            return error(404, message, path)
        if parts[0] in self.stopped:
            message = (
                "bad request: failed to resolve container IP after 3 attempts: no IP address "
                "found. Is the Sandbox started?"
            )
            return error(400, message, path)
        return await self._toolbox(request, "/" + parts[1], body, parts[0])

    def _control(self, request: httpx.Request, path: str, body: bytes) -> httpx.Response:
        if request.method == "POST" and path == "/sandbox":
            spec = json.loads(body)
            sandbox_id = f"sbx-{len(self.created) + 1}"
            if spec.get("name") is not None and self._named(str(spec["name"])) is not None:
                return error(409, f"Sandbox with name {spec['name']} already exists", path)
            self.created.append({"id": sandbox_id, **spec})
            self.polls[sandbox_id] = 0
            return httpx.Response(200, json=self._sandbox(sandbox_id, "creating"))
        if request.method == "GET" and path == "/sandbox":  # labels: a JSON object, all matched
            wanted = json.loads(request.url.params.get("labels") or "{}").items()
            found = [self._sandbox(i, self._state(i)) for i in self.live]
            return httpx.Response(200, json=[s for s in found if wanted <= s["labels"].items()])
        named, _, action = path.removeprefix("/sandbox/").partition("/")
        sandbox_id = self._named(named) or named  # by id first, then by name, as Daytona
        if sandbox_id not in self.polls or sandbox_id in self.deleted:
            return error(404, f"Sandbox {sandbox_id} not found", path)
        if request.method == "DELETE":
            self.deleted.append(sandbox_id)
            return httpx.Response(200, json=self._sandbox(sandbox_id, "destroying"))
        if request.method == "POST" and action == "start":  # archived: restored first
            if self.stopped.get(sandbox_id) not in (None, "stopped", "archived"):
                return error(400, f"Sandbox is in state {self.stopped[sandbox_id]}", path)
            if sandbox_id not in self.stopped and self._state(sandbox_id) != "started":
                return error(400, "State change in progress", path)  # as the API's start
            was = self.stopped.pop(sandbox_id, None)
            self.starts.append(sandbox_id)
            self.polls[sandbox_id] = 0
            self._waking[sandbox_id] = "restoring" if was == "archived" else "starting"
            return httpx.Response(200, json=self._sandbox(sandbox_id, self._state(sandbox_id)))
        self.polls[sandbox_id] += 1
        return httpx.Response(200, json=self._sandbox(sandbox_id, self._state(sandbox_id)))

    def _named(self, id_or_name: str) -> str | None:
        """The id of the live sandbox ``id_or_name`` names: its id, else its name (the API's
        ``findOneByIdOrName`` looks an id up first); None when none does."""
        if id_or_name in self.live:
            return id_or_name
        named = (b["id"] for b in self.created if b.get("name", b["id"]) == id_or_name)
        return next((i for i in named if i in self.live), None)

    def _state(self, sandbox_id: str) -> str:
        """The state ``GET /sandbox/{id}`` reports now."""
        if sandbox_id in self.stopped:
            return self.stopped[sandbox_id]
        if self._creation_failure is not None:
            return self._failed_state
        if self.polls[sandbox_id] >= self.polls_until_started:
            return "started"
        return self._waking.get(sandbox_id, "creating")

    def _sandbox(self, sandbox_id: str, state: str) -> dict[str, Any]:
        spec = next(b for b in self.created if b["id"] == sandbox_id)
        return {
            "id": sandbox_id,
            "organizationId": "org-fake",
            "name": spec.get("name") or sandbox_id,  # the API's default: the id
            "user": "daytona",
            "env": spec.get("env", {}),
            "labels": spec.get("labels", {}),
            "public": False,
            "networkBlockAll": False,
            "target": spec.get("target", "us"),
            "cpu": 1,
            "gpu": 0,
            "memory": 1,
            "disk": 3,
            "state": state,
            "errorReason": self._failures.get(sandbox_id, ("", False))[0]
            or (self._creation_failure if state == self._failed_state else None),
            "recoverable": self._failures.get(sandbox_id, ("", False))[1],
            "toolboxProxyUrl": self.toolbox_url,
        }

    async def _toolbox(
        self, request: httpx.Request, path: str, body: bytes, sandbox_id: str
    ) -> httpx.Response:
        if request.method == "POST" and path == "/process/execute":
            spec = next(b for b in self.created if b["id"] == sandbox_id)
            self.commands.append(str(json.loads(body).get("command") or ""))
            wanted, env = json.loads(body), spec.get("env") or {}
            return await execute(
                wanted, env, self.daemon, on_timeout=self.on_timeout, left=self.left
            )
        return files_answer(request, path, body)
