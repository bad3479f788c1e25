"""A Daytona sandbox belongs to its session: labelled with its id, found again on resume."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import httpx
import pytest

from rho_adapters.daytona import DaytonaExecutor
from rho_adapters.fakes import FakeClock
from rho_adapters.fakes.daytona import FakeDaytona
from rho_domain.errors import ConfigError, ExecutorError


def _executor(
    fake: FakeDaytona, ws: Path, session: str, *, resumed: bool, known: str | None = None
) -> DaytonaExecutor:
    settings = fake.settings(working_dir=str(ws), session_id=session, reattach=resumed)
    executor = DaytonaExecutor(settings, transport=fake.transport, clock=FakeClock())
    if known is not None:  # the sandbox the session's trace names (rho_entry.reopening)
        executor.expect(known)
    return executor


async def test_a_resumed_session_finds_its_sandbox_in_each_state(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    fake = FakeDaytona()
    first = _executor(fake, tmp_path, "s1", resumed=False)
    await first.stat(".")  # the process then dies: no aclose
    labels = dict(fake.created[0]["labels"])
    assert len(labels.pop("rho-agent-creation")) == 32  # its creation's token, unwritten
    assert labels == {
        "created-by": "rho-agent",
        "rho-agent-session": "s1",
        "rho-agent-build": "default",  # the organisation's default snapshot
    }
    for state in ("started", "stopped", "archived"):
        if state != "started":
            fake.stop("sbx-1", state)
        again = _executor(fake, tmp_path, "s1", resumed=True, known="sbx-1")
        await again.stat(".")
        assert (again.sandbox_id, again.recreated, len(fake.created)) == ("sbx-1", None, 1)
        assert fake.starts == (["sbx-1"] if state == "stopped" else fake.starts)
    assert fake.starts == ["sbx-1", "sbx-1"]  # started as it was; stopped, archived: started
    other = _executor(fake, tmp_path, "s2", resumed=True)  # another session's is never taken
    await other.stat(".")
    assert other.sandbox_id == "sbx-2"
    # Daytona refuses to start a failed one; one it can recover holds the session's files
    fake.stop("sbx-2", "error", "disk quota exceeded", recoverable=True)
    waiting = _executor(fake, tmp_path, "s2", resumed=True, known="sbx-2")
    for _ in range(2):  # asked again by each call: recovered meanwhile, it is taken
        with pytest.raises(ExecutorError, match="which Daytona says it can recover from") as no:
            await waiting.stat(".")
    assert "sbx-2 is error (disk quota exceeded)" in str(no.value)  # before: a new sbx-3
    assert str(no.value).endswith("a new, empty one: daytona delete sbx-2")
    assert (waiting.sandbox_id, len(fake.created)) == (None, 2)
    await waiting.aclose()
    fake.api_key = "fake-key-long-enough"  # a key rho-agent hides (a placeholder it does not)
    fake.stop("sbx-2", "error", f"runner lost (sent {fake.api_key})")  # not recoverable
    failed = DaytonaExecutor(
        fake.settings(working_dir=str(tmp_path), session_id="s2", reattach=True),
        transport=fake.transport,
        clock=FakeClock(),
    )
    failed.expect("sbx-2")
    await failed.stat(".")
    assert failed.sandbox_id == "sbx-3"
    assert failed.recreated is not None
    assert "sbx-2 is error (runner lost (sent ***)): Daytona does not" in failed.recreated
    assert failed.recreated.endswith(
        "kept with its files; copy what you need, then delete it: daytona delete sbx-2"
    )  # before: "is gone"
    assert "sbx-2" not in fake.deleted
    await failed.aclose()
    fake.api_key = "fake-key"
    await again.aclose()  # sbx-1 deleted, as a session's close does
    with caplog.at_level(logging.INFO, logger="rho_adapters.daytona.executor"):
        gone = _executor(fake, tmp_path, "s1", resumed=True, known="sbx-1")
        await gone.stat(".")
    assert gone.sandbox_id == "sbx-4"
    assert gone.recreated is not None
    assert "sandbox is gone" in gone.recreated
    assert "new, empty one (sbx-4)" in gone.recreated
    said = [r.getMessage() for r in caplog.records]
    assert any(m.startswith("session s1: this session's Daytona sandbox is gone") for m in said)
    assert "session s1: created Daytona sandbox sbx-4" in said
    for executor in (first, other, gone):
        await executor.aclose()


async def test_a_resume_naming_another_build_is_refused_not_given_the_old_sandbox(
    tmp_path: Path,
) -> None:
    # Before, a session resumed with a changed --dockerfile (or another --snapshot) was
    # reattached to the sandbox the old one built, and the new build was silently ignored.
    fake = FakeDaytona()

    def resumed(session: str, **build: str) -> DaytonaExecutor:
        settings = fake.settings(
            working_dir=str(tmp_path), session_id=session, reattach=True, **build
        )
        executor = DaytonaExecutor(settings, transport=fake.transport, clock=FakeClock())
        executor.expect({"s1": "sbx-1", "s2": "sbx-2"}[session])  # what its trace names
        return executor

    built = resumed("s1", dockerfile="FROM alpine\n")  # nothing to find: built
    await built.stat(".")
    plain = resumed("s2")  # the organisation's default snapshot
    await plain.stat(".")
    refused = {
        "s1": ({"dockerfile": "FROM alpine\nRUN apk add git\n"}, {"snapshot": "py"}),
        "s2": ({"dockerfile": "FROM alpine\n"}, {"image": "alpine"}),
    }
    for session, builds in refused.items():
        for build in builds:
            executor = resumed(session, **build)
            with pytest.raises(ConfigError, match=f"session {session}'s Daytona sandbox sbx-"):
                await executor.stat(".")
            assert executor.sandbox_id is None
            await executor.aclose()
    same = resumed("s1", image="alpine")  # FROM alpine: the same build
    anything = resumed("s1")  # naming no build: the session's own, whatever built it
    for executor in (same, anything):
        await executor.stat(".")
        assert executor.sandbox_id == "sbx-1"
    assert len(fake.created) == 2
    fake.created[0]["labels"].pop("rho-agent-build")  # one an older rho-agent made
    older = resumed("s1", image="alpine")
    with pytest.raises(ConfigError, match="its labels do not say what built it") as refusal:
        await older.stat(".")
    assert "or delete it (daytona delete sbx-1; its files go with it)" in str(refusal.value)
    for executor in (built, plain, same, anything, older):
        await executor.aclose()


async def test_a_server_ignoring_the_label_query_never_hands_over_another_sessions_sandbox(
    tmp_path: Path,
) -> None:
    # GET /sandbox?labels= answered with every sandbox: the labels are checked here too.
    fake = FakeDaytona()

    async def unfiltered(request: httpx.Request) -> httpx.Response:
        if request.method == "GET" and request.url.path.endswith("/sandbox"):
            request = httpx.Request(
                "GET", request.url.copy_remove_param("labels"), headers=request.headers
            )
        return await fake.handler(request)

    first = _executor(fake, tmp_path, "s1", resumed=False)
    await first.stat(".")
    settings = fake.settings(working_dir=str(tmp_path), session_id="s2", reattach=True)
    other = DaytonaExecutor(settings, transport=httpx.MockTransport(unfiltered), clock=FakeClock())
    await other.stat(".")
    assert other.sandbox_id == "sbx-2"  # s1's sandbox was listed, and left alone
    assert fake.requests.count(("GET", "/api/sandbox")) == 1  # the lookup, unfiltered
    for executor in (first, other):
        await executor.aclose()


async def test_a_sandbox_of_another_organisation_is_never_reattached(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # Before, the organisation of a sandbox found was never looked at: a server or proxy
    # that ignored X-Daytona-Organization-ID handed over another organisation's sandbox
    # carrying the session's labels, and it was attached.
    fake = FakeDaytona()  # every sandbox it makes belongs to org-fake
    first = _executor(fake, tmp_path, "s1", resumed=False)
    await first.stat(".")
    made = []
    for organization in ("org-mine", "org-fake"):
        settings = fake.settings(
            working_dir=str(tmp_path), session_id="s1", reattach=True, organization_id=organization
        )
        again = DaytonaExecutor(settings, transport=fake.transport, clock=FakeClock())
        again.expect("sbx-1")
        with caplog.at_level(logging.WARNING, logger="rho_adapters.daytona.executor"):
            await again.stat(".")
        made.append(again)
    assert [e.sandbox_id for e in made] == ["sbx-2", "sbx-1"]  # another's: a new one
    said = (
        "Daytona sandbox sbx-1 labelled as session s1's belongs to organisation 'org-fake', "
        "not 'org-mine' (DaytonaSettings.organization_id): not attached"
    )
    assert said in caplog.text
    for executor in (first, *made):
        await executor.aclose()


async def test_a_failed_label_search_makes_a_new_sandbox_and_is_said(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # The trace names no sandbox: a label search only says what it left (it attaches none),
    # so its failure no longer fails the resumed session's first call.
    fake = FakeDaytona()
    fake.fail("GET", "/sandbox", 502, {"statusCode": 502, "message": "bad gateway"})
    again = _executor(fake, tmp_path, "s1", resumed=True)
    with caplog.at_level(logging.WARNING, logger="rho_adapters.daytona.executor"):
        await again.stat(".")
    assert again.sandbox_id == "sbx-1"
    assert "could not look for sandboxes labelled as its own: Daytona failed sandbox" in caplog.text
    await again.aclose()


async def test_a_resume_waits_for_a_sandbox_already_starting(tmp_path: Path) -> None:
    # A resume cancelled (Ctrl+C) while its stopped sandbox was starting left it starting
    # (restoring, from an archive: minutes). Resumed again, the executor asked it to start
    # once more, which Daytona refuses ('State change in progress', 400): every call failed
    # until it had started. One already on its way is now waited for, not started again.
    fake = FakeDaytona(polls_until_started=2)
    first = _executor(fake, tmp_path, "s1", resumed=False)
    await first.stat(".")  # the process then dies: no aclose
    fake.stop("sbx-1", "archived")
    hung = asyncio.Event()

    async def start_unanswered(request: httpx.Request) -> httpx.Response:
        if fake.starts and request.method == "GET":  # the start's wait: never answered
            hung.set()
            await asyncio.Event().wait()
        return await fake.handler(request)

    settings = fake.settings(working_dir=str(tmp_path), session_id="s1", reattach=True)
    transport = httpx.MockTransport(start_unanswered)
    cancelled = DaytonaExecutor(settings, transport=transport, clock=FakeClock())
    cancelled.expect("sbx-1")
    waking = asyncio.create_task(cancelled.stat("."))
    await hung.wait()
    waking.cancel()
    assert fake.starts == ["sbx-1"]
    again = _executor(fake, tmp_path, "s1", resumed=True, known="sbx-1")
    await again.stat(".")  # before: ExecutorError 'Daytona failed sandbox start (400)'
    assert (again.sandbox_id, again.recreated, fake.starts) == ("sbx-1", None, ["sbx-1"])
    for executor in (first, cancelled, again):
        await executor.aclose()
    with pytest.raises(asyncio.CancelledError):
        await waking
