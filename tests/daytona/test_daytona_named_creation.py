"""A sandbox is named in the trace before it is asked for, and only its recorded id attaches.

Before, the trace named a sandbox (``placed``) once Daytona had answered ``POST /sandbox``
and the sandbox had started: a run killed meanwhile (a Dockerfile build takes minutes) left
a sandbox no trace named, found only by labels anyone in the organisation can set, and ended
only by auto-stop and auto-delete; so did a creation whose answer was lost (a gateway's 502
after the API made it). And a resume asked ``GET /sandbox/<id the trace names>``, which
Daytona answers by name when no id matches: once the session's sandbox was deleted, a
sandbox someone named after that id (with the session's labels) was attached.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest

from rho_adapters.daytona import DaytonaExecutor
from rho_adapters.fakes import FakeClock
from rho_adapters.fakes.daytona import FakeDaytona
from rho_domain.errors import ExecutorError
from rho_domain.placement import Placement


def _executor(
    fake: FakeDaytona, ws: Path, session: str, known: str | None = None, **kwargs: object
) -> DaytonaExecutor:
    settings = fake.settings(
        working_dir=str(ws), session_id=session, reattach=known is not None, **kwargs
    )
    executor = DaytonaExecutor(settings, transport=fake.transport, clock=FakeClock())
    if known is not None:
        executor.expect(known)  # what the session's trace names (rho_entry.reopening)
    return executor


async def test_a_sandbox_is_named_before_it_is_made_and_a_name_never_attaches(
    tmp_path: Path,
) -> None:
    fake = FakeDaytona(polls_until_started=1)
    told: list[Placement] = []

    async def record(placement: Placement) -> None:
        told.append(placement)

    # a run whose sandbox is still being made when the process dies
    killed = _executor(fake, tmp_path, "s1")
    killed.on_placed(record)
    fake.fail("GET", "/sandbox/sbx-1", hang=True)  # the creation's wait, never answered
    making = asyncio.create_task(killed.stat("."))
    await fake.hung.wait()
    name = str(fake.created[0]["name"])
    assert name.startswith("rho-agent-")
    assert told == [Placement(backend="daytona", id=name)]  # before: nothing recorded
    resumed = _executor(fake, tmp_path, "s1", known=name)
    await resumed.stat(".")
    assert resumed.sandbox_id == "sbx-2"  # sbx-1, found by that name, is not attached
    assert resumed.recreated is not None
    assert f"{name}, was found by that name only, as sbx-1" in resumed.recreated
    assert "neither attached nor deleted" in resumed.recreated  # stored data deletes nothing
    assert "delete it with daytona delete sbx-1." in resumed.recreated  # before: "in Daytona"
    assert fake.deleted == []
    making.cancel()
    # someone names a sandbox after a deleted one's id, with the session's labels
    await resumed.aclose()  # sbx-2 deleted, as a session's close does
    labels = {"created-by": "rho-agent", "rho-agent-session": "s1"}
    async with httpx.AsyncClient(transport=fake.transport) as client:
        squat = await client.post(
            f"{fake.api_url}/sandbox",
            json={"name": "sbx-2", "labels": labels},
            headers={"Authorization": f"Bearer {fake.api_key}"},
        )
    assert squat.json()["id"] == "sbx-3"
    again = _executor(fake, tmp_path, "s1", known="sbx-2")
    await again.stat(".")
    assert again.sandbox_id == "sbx-4"  # before: sbx-3, the squatter's, was attached
    assert "sbx-3" not in fake.deleted
    # a creation answered with an error after the API made the sandbox

    async def gateway(request: httpx.Request) -> httpx.Response:
        answer = await fake.handler(request)
        if request.method == "POST" and request.url.path.endswith("/sandbox"):
            return httpx.Response(502, text="<html>502 Bad Gateway</html>")
        return answer

    lost = DaytonaExecutor(
        fake.settings(working_dir=str(tmp_path), session_id="s2"),
        transport=httpx.MockTransport(gateway),
        clock=FakeClock(),
    )
    with pytest.raises(ExecutorError, match=r"failed sandbox creation \(502\)"):
        await lost.stat(".")
    # sbx-1 went with the cancelled creation (a kill would have left it to its auto-delete)
    assert fake.live == ["sbx-3", "sbx-4"]  # before: sbx-5 too, named by no trace
    for executor in (killed, again, lost):
        await executor.aclose()
    with pytest.raises(asyncio.CancelledError):
        await making


async def test_a_failed_creation_deletes_only_the_sandbox_it_made_not_a_squatters(
    tmp_path: Path,
) -> None:
    # The name is in the trace before POST /sandbox: whoever reads the trace (a shared
    # store) can take it first, with rho-agent's and the session's labels. Our POST is then
    # refused (409), or its answer is lost (a gateway's 502): before, either looked the name
    # up and deleted the squatter's sandbox, on the word of labels anyone may set.
    fake = FakeDaytona(polls_until_started=1)
    labels = {"created-by": "rho-agent", "rho-agent-session": "s1"}

    async def squat(placement: Placement) -> None:
        if str(placement.id).startswith("rho-agent-"):
            async with httpx.AsyncClient(transport=fake.transport) as client:
                await client.post(
                    f"{fake.api_url}/sandbox",
                    json={"name": placement.id, "labels": labels},
                    headers={"Authorization": f"Bearer {fake.api_key}"},
                )

    async def gateway(request: httpx.Request) -> httpx.Response:
        answer = await fake.handler(request)
        if request.method == "POST" and request.url.path == "/api/sandbox":
            return httpx.Response(502, text="<html>502 Bad Gateway</html>")
        return answer

    lost = httpx.MockTransport(gateway)
    for transport, said in ((fake.transport, r"\(409\): Sandbox with name"), (lost, "502")):
        executor = DaytonaExecutor(
            fake.settings(working_dir=str(tmp_path), session_id="s1"),
            transport=transport,
            clock=FakeClock(),
        )
        executor.on_placed(squat)
        with pytest.raises(ExecutorError, match=said):
            await executor.stat(".")
        await executor.aclose()
    assert [m for m, _ in fake.requests] == ["POST"] * 4 + ["GET"]  # the 502's lookup
    assert fake.deleted == []  # before: ["sbx-1", "sbx-2"], the squatters'
    assert fake.live == ["sbx-1", "sbx-2"]


async def test_a_creation_answered_unreadably_deletes_what_it_made(tmp_path: Path) -> None:
    # Before, a 2xx answer to POST /sandbox that was no JSON (a gateway's page), was cut
    # short, or named no id failed the call and left the sandbox made under our name running
    # (its id in no trace) until its auto-stop and auto-delete.
    fake = FakeDaytona(polls_until_started=1)
    for body in ("<html>ok</html>", '{"state": "creating"}', '{"id": "sbx-1", "sta'):

        async def unreadable(request: httpx.Request, body: str = body) -> httpx.Response:
            answer = await fake.handler(request)
            if request.method == "POST" and request.url.path == "/api/sandbox":
                return httpx.Response(200, text=body)
            return answer

        executor = DaytonaExecutor(
            fake.settings(working_dir=str(tmp_path)),
            transport=httpx.MockTransport(unreadable),
            clock=FakeClock(),
        )
        with pytest.raises(ExecutorError, match=r"something else than JSON|without an id"):
            await executor.stat(".")
        await executor.aclose()
    assert len(fake.created) == 3
    assert fake.live == []  # before: sbx-1, sbx-2 and sbx-3
