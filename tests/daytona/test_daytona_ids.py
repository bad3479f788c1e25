"""A sandbox id is the Daytona API's text, and it goes into the URLs the API key is sent to
as one path segment, whatever it holds.

Written as it came, an id ``../../admin/x`` made the status poll, the toolbox calls and the
deletion ``/api/sandbox/../../admin/x``, which httpx resolves to ``/admin/x``: a DELETE
with the key on a path the client never meant; ``?`` and ``#`` cut the path.
"""

from __future__ import annotations

import httpx
import pytest

from rho_adapters.daytona.api import SandboxAPI
from rho_adapters.daytona.making import create
from rho_adapters.daytona.settings import DaytonaSettings
from rho_adapters.fakes import FakeClock
from rho_domain.errors import ExecutorError

# the id as the API answers it: the one segment it must stay
IDS = {"../../admin/x?y#z": "..%2F..%2Fadmin%2Fx%3Fy%23z", "..": "%2E%2E"}


async def test_a_sandbox_id_is_one_segment_of_every_url() -> None:
    for hostile, one in IDS.items():
        seen: list[tuple[str, str]] = []

        def answer(
            request: httpx.Request, seen: list[tuple[str, str]] = seen, hostile: str = hostile
        ) -> httpx.Response:
            seen.append((request.method, request.url.raw_path.decode()))
            state = "creating" if len(seen) == 1 else "started"
            toolbox = "https://t.example/tb"
            return httpx.Response(
                200, json={"id": hostile, "state": state, "toolboxProxyUrl": toolbox}
            )

        settings = DaytonaSettings(api_key="k", api_url="https://daytona.example/api")
        transport = httpx.MockTransport(answer)
        api = SandboxAPI(settings, transport=transport, clock=FakeClock())
        try:
            sandbox = await create(api, "rho-agent-test")
            await api.delete(sandbox.id)
        finally:
            await api.aclose()
        assert seen == [
            ("POST", "/api/sandbox"),
            ("GET", f"/api/sandbox/{one}"),
            ("DELETE", f"/api/sandbox/{one}"),
        ], hostile
        assert sandbox.toolbox_url == f"https://t.example/tb/{one}"


async def test_an_https_api_that_names_a_plain_http_toolbox_is_refused() -> None:
    """Every toolbox request carries the API key: before, an https API answering
    ``toolboxProxyUrl: http://...`` had the key sent there in clear on the first command."""

    def answer(request: httpx.Request) -> httpx.Response:
        body = {"id": "sbx-1", "state": "started", "toolboxProxyUrl": "http://t.example/tb"}
        return httpx.Response(200, json=body)

    settings = DaytonaSettings(api_key="k", api_url="https://daytona.example/api")
    api = SandboxAPI(settings, transport=httpx.MockTransport(answer), clock=FakeClock())
    try:
        with pytest.raises(ExecutorError, match="named a toolbox URL that is not https"):
            await create(api, "rho-agent-test")
    finally:
        await api.aclose()
