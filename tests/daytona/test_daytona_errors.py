"""Daytona API failures become rho errors (one mapping), teardown failures are only logged."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from daytona_support import closing, make_rig

from rho_adapters.daytona import DaytonaExecutor
from rho_adapters.daytona.answers import MAX_WAIT, RETRIES
from rho_adapters.fakes import FakeClock
from rho_adapters.fakes.daytona import FakeDaytona
from rho_domain.errors import (
    ConfigError,
    ExecutorError,
    PermissionDenied,
    PlacementRefused,
    ToolError,
)
from rho_domain.permissions import FileWriteMode
from rho_domain.ports.executor import Command, FileUpload, Stage


async def test_daytona_wrong_api_key_names_the_variable(tmp_path: Path) -> None:
    fake = FakeDaytona(api_key="right")
    executor = DaytonaExecutor(
        fake.settings(api_key="wrong", working_dir=str(tmp_path)), transport=fake.transport
    )
    with pytest.raises(ExecutorError, match=r"401.*Unauthorized.*DAYTONA_API_KEY"):
        await executor.stat(".")
    await executor.aclose()


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        (500, {"statusCode": 500, "message": "no runner available"}, r"500.*no runner available"),
        (429, {"message": "too many sandboxes"}, r"rate limit.*too many sandboxes"),
        (400, {"message": ["snapshot must be a string"]}, r"400.*snapshot must be a string"),
        (502, "<html>bad gateway</html>", r"502.*bad gateway"),
    ],
)
async def test_daytona_create_errors_mapped(
    tmp_path: Path, status: int, body: object, expected: str
) -> None:
    async for rig in closing(make_rig(tmp_path)):
        for _ in range(1 + (RETRIES if status == 429 else 0)):  # a 429 is asked again
            rig.fake.fail("POST", "/sandbox", status, body)
        with pytest.raises(ExecutorError, match=expected):
            await rig.executor.stat(".")


async def test_daytona_a_request_turned_away_is_sent_again_when_told(tmp_path: Path) -> None:
    # Before, a 429 (or a 503 saying when to come back) failed the tool call at once.
    true = Command(pipeline=(Stage(argv=("true",)),))
    async for rig in closing(make_rig(tmp_path)):
        fake, clock, executor = rig.fake, rig.clock, rig.executor
        await executor.stat(".")
        turned_away = (  # two commands (one execute each), each turned away twice
            ((429, {"Retry-After": "3"}), (503, {"Retry-After": "0.5"})),
            ((429, {"Retry-After": "3600"}), (429, None)),  # at most MAX_WAIT; else a second
        )
        started = clock.monotonic()
        for answers in turned_away:
            for status, headers in answers:
                fake.fail("POST", "/process/execute", status, {"message": "wait"}, headers=headers)
            assert (await executor.run(true)).exit_code == 0
        assert clock.monotonic() - started == 3 + 0.5 + MAX_WAIT + 1
        fake.fail("POST", "/process/execute", 503, {"message": "down"})  # no Retry-After
        with pytest.raises(ExecutorError, match=r"503.*down"):
            await executor.run(true)
        for _ in range(RETRIES + 1):
            fake.fail("POST", "/process/execute", 429, {"message": "slow down"})
        with pytest.raises(ExecutorError, match=r"rate limit.*slow down"):
            await executor.run(true)


async def test_daytona_sandbox_in_error_state(tmp_path: Path) -> None:
    async for rig in closing(make_rig(tmp_path)):
        rig.fake.fail_creation("image pull failed")
        with pytest.raises(ExecutorError, match="is error: image pull failed"):
            await rig.executor.stat(".")
        with pytest.raises(ExecutorError, match="is error: image pull failed"):
            await rig.executor.stat(".")  # an error state may pass: asked again
        assert len(rig.fake.created) == 2


async def test_a_failed_build_is_not_asked_again_a_refused_creation_is(
    tmp_path: Path,
) -> None:
    # Before, each tool call after a Dockerfile that does not build asked Daytona to build
    # it again (minutes each, deleted each time), and each after a snapshot it does not know
    # sent the same refused request again; the run went on failing call after call.
    async for rig in closing(make_rig(tmp_path, dockerfile="FROM alpine\nRUN false\n")):
        rig.fake.fail_creation("RUN false: exit code 1", state="build_failed")
        for said in ("exit code 1$", "exit code 1 \\(not asked again: fix the build"):
            with pytest.raises(PlacementRefused, match="is build_failed: RUN false: " + said):
                await rig.executor.stat(".")
        assert len(rig.fake.created) == 1  # before: 2
    # A refusal of the creation is asked again: Daytona answers 400 for what passes or is
    # fixed outside the run too (no runner free, a snapshot still pulled or inactive; "not
    # found. Did you add it through the Daytona Dashboard?"). Before, each later call of the
    # session raised "not asked again: ... start a new session" once the runner was free.
    for said in ("No available runners", "Snapshot snap is pulling", "Snapshot snap not found"):
        async for rig in closing(make_rig(tmp_path, snapshot="snap")):
            rig.fake.fail("POST", "/sandbox", 400, {"message": said})
            with pytest.raises(ExecutorError, match=rf"\(400\): {said}$") as refused:
                await rig.executor.stat(".")
            assert not isinstance(refused.value, PlacementRefused)
            await rig.executor.stat(".")  # the runner is free, the snapshot active now
            assert rig.fake.live == ["sbx-1"]
            # a refusal made nothing: no lookup of its name, nothing deleted
            assert rig.fake.requests[:2] == [("POST", "/api/sandbox")] * 2


def test_a_key_or_organisation_no_header_can_carry_is_said_at_start() -> None:
    # Before, DAYTONA_API_KEY with a secret file's last newline failed every request as
    # "connection to Daytona failed ... the API's URL is DAYTONA_API_URL: Illegal header
    # value", and a non-ASCII character (in the key or DAYTONA_ORGANIZATION_ID) left the
    # adapter as a bare UnicodeEncodeError at the first call.
    fake = FakeDaytona()
    variants = (
        ({"api_key": "sk-secret\n"}, "DAYTONA_API_KEY\\) has a line break at character 10"),
        ({"api_key": "sk-s\u00e9cret"}, "DAYTONA_API_KEY\\) has a non-ASCII character"),
        ({"organization_id": "org\r\nX: y"}, "DAYTONA_ORGANIZATION_ID\\) has a line break"),
    )
    for given, said in variants:
        with pytest.raises(ConfigError, match=said) as refused:
            fake.settings(**given)
        assert "secret" not in str(refused.value)  # the value is never quoted


async def test_daytona_connection_failure_is_an_executor_error(tmp_path: Path) -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    fake = FakeDaytona()
    executor = DaytonaExecutor(
        fake.settings(working_dir=str(tmp_path)), transport=httpx.MockTransport(refuse)
    )
    with pytest.raises(ExecutorError, match="connection to Daytona failed") as info:
        await executor.stat(".")
    assert isinstance(info.value.__cause__, httpx.ConnectError)
    # the server and the variable named: a wrong DAYTONA_API_URL said neither
    assert "(at https://fake-daytona.test; the API's URL is DAYTONA_API_URL)" in str(info.value)
    await executor.aclose()


async def test_daytona_a_stream_closed_under_its_reader_is_an_executor_error(
    tmp_path: Path,
) -> None:
    """httpx's StreamError is a RuntimeError, not an HTTPError: it left the adapter bare."""

    class Closed(httpx.AsyncByteStream):
        async def __aiter__(self) -> AsyncIterator[bytes]:
            raise httpx.StreamClosed
            yield b""  # an async generator

    def closed(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, stream=Closed())

    fake = FakeDaytona()
    executor = DaytonaExecutor(
        fake.settings(working_dir=str(tmp_path)), transport=httpx.MockTransport(closed)
    )
    with pytest.raises(ExecutorError, match=r"connection to Daytona failed during .*closed"):
        await executor.stat(".")
    await executor.aclose()


async def test_daytona_read_timeout_is_an_executor_error(tmp_path: Path) -> None:
    async for rig in closing(make_rig(tmp_path)):
        await rig.executor.stat(".")
        rig.fake.transport.handler = _timing_out(rig.fake)  # type: ignore[assignment]
        with pytest.raises(ExecutorError, match="did not answer in time"):
            await rig.executor.run(Command(pipeline=(Stage(argv=("true",)),)))


def _timing_out(fake: FakeDaytona) -> object:
    async def slow(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/process/execute"):
            raise httpx.ReadTimeout("no answer", request=request)
        return await fake.handler(request)

    return slow


@pytest.mark.parametrize(
    ("status", "error", "match"),
    [(404, ToolError, "no such file"), (403, PermissionDenied, "permission denied"),
     (400, ToolError, "bad path"), (503, ExecutorError, "503")],
)  # fmt: skip
async def test_daytona_toolbox_file_errors_mapped(
    tmp_path: Path, status: int, error: type[Exception], match: str
) -> None:
    async for rig in closing(make_rig(tmp_path)):
        await rig.executor.stat(".")
        body = {"statusCode": status, "message": "bad path"}
        rig.fake.fail("POST", "/files/bulk-upload", status, body)
        with pytest.raises(error, match=match):
            await rig.executor.upload([FileUpload(path="x.txt", data=b"x")])


async def test_daytona_upload_error_mapped(tmp_path: Path) -> None:
    async for rig in closing(make_rig(tmp_path)):
        rig.fake.fail("POST", "/files/bulk-upload", 500, {"message": "disk full"})
        with pytest.raises(ExecutorError, match="disk full"):
            await rig.executor.write("x.txt", b"x", overwrite=False)
        assert not (rig.ws / "x.txt").exists()


async def test_daytona_upload_path_the_daemon_would_trim_is_refused(tmp_path: Path) -> None:
    """The daemon trims white space around an upload's path (strings.TrimSpace): before,
    ``--upload x:notes.txt `` and ``notes.txt\u00a0`` replaced ``notes.txt``."""
    async for rig in closing(make_rig(tmp_path)):
        (rig.ws / "notes.txt").write_bytes(b"keep")
        for name in ("notes.txt ", "notes.txt\u00a0"):
            with pytest.raises(ToolError, match="ends in white space"):
                await rig.executor.upload([FileUpload(path=name, data=b"other")])
        assert sorted(p.name for p in rig.ws.iterdir()) == ["notes.txt", "src"]
        assert (rig.ws / "notes.txt").read_bytes() == b"keep"


async def test_an_upload_path_is_judged_before_the_sandbox_is_made(tmp_path: Path) -> None:
    # Before, every upload path (a name with a newline found in an uploaded directory, one
    # under .git/, one the daemon would trim, ".") was judged once the sandbox was made: a
    # Dockerfile built for minutes, then the launch refused and the sandbox deleted.
    async for rig in closing(make_rig(tmp_path, dockerfile="FROM alpine\n")):
        refused = (
            ("a\nb.txt", "control characters"),
            (".git/hooks/pre-commit", "agents never write"),
            ("notes.txt ", "ends in white space"),
            (".", "names a directory"),
        )
        for path, said in refused:
            with pytest.raises(ToolError, match=said):
                await rig.executor.upload(
                    [FileUpload(path="ok.txt", data=b"1"), FileUpload(path=path, data=b"x")]
                )
        assert rig.fake.requests == []  # before: POST /sandbox, its polls, the workspace's script


async def test_daytona_command_start_failure(tmp_path: Path) -> None:
    async for rig in closing(make_rig(tmp_path)):
        await rig.executor.stat(".")
        rig.fake.fail("POST", "/process/execute", 200, {"exitCode": -1, "result": "no shell"})
        with pytest.raises(ExecutorError, match="could not start the command: no shell"):
            await rig.executor.run(Command(pipeline=(Stage(argv=("true",)),)))


async def test_daytona_exit_code_of_a_daemon_before_november_2025(tmp_path: Path) -> None:
    """Daemons before daytonaio/daytona #2406 answer ``{"code", "result"}``: the command's
    answer was taken for a start failure ("could not start the command: out")."""
    async for rig in closing(make_rig(tmp_path)):
        await rig.executor.stat(".")
        answer = {"code": 0, "result": "out\n\x1erho:4:0\n"}
        rig.fake.fail("POST", "/process/execute", 200, answer)
        result = await rig.executor.run(Command(pipeline=(Stage(argv=("true",)),)))
        assert (result.exit_code, result.output) == (4, "out")


async def test_daytona_unparsable_answer(tmp_path: Path) -> None:
    async for rig in closing(make_rig(tmp_path)):
        await rig.executor.stat(".")
        rig.fake.fail("POST", "/process/execute", 200, {"exitCode": 0, "result": "garbage"})
        with pytest.raises(ExecutorError, match="status line"):
            await rig.executor.run(Command(pipeline=(Stage(argv=("true",)),)))


async def test_daytona_delete_failure_is_logged_not_raised(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    rig = make_rig(tmp_path)
    await rig.executor.stat(".")
    rig.fake.fail("DELETE", "/sandbox/sbx-1", 500, {"message": "runner gone"})
    with caplog.at_level(logging.WARNING):
        await rig.executor.aclose()
    assert "could not delete Daytona sandbox sbx-1" in caplog.text
    assert "delete it: daytona delete sbx-1" in caplog.text  # the command, not "in Daytona"
    assert rig.executor.orphaned is not None
    assert rig.executor.orphaned.id == "sbx-1"


async def test_daytona_errors_never_quote_the_api_key(tmp_path: Path) -> None:
    """A gateway's 401, a redirect's body, a toolbox proxy's 502 page and a sandbox's
    ``errorReason`` may quote the Bearer token they were sent: the error (which the model,
    the trace and the log read) quoted DAYTONA_API_KEY whole."""
    key = "dtn_0123456789abcdef0123"
    fake = FakeDaytona(api_key=key)
    settings = fake.settings(working_dir=str(tmp_path))
    executor = DaytonaExecutor(settings, transport=fake.transport, clock=FakeClock())
    fake.fail("POST", "/sandbox", 401, {"message": f"invalid token Bearer {key}"})
    fake.fail("POST", "/sandbox", 302, f"Found. Redirecting to /login?token={key}")
    for status in ("401", "302"):
        with pytest.raises(ExecutorError, match=status) as caught:
            await executor.stat(".")
        assert key not in str(caught.value)
        assert "***" in str(caught.value)
    await executor.stat(".")
    fake.fail("POST", "/process/execute", 502, f"<html>upstream sent {key}</html>")
    with pytest.raises(ExecutorError, match=r"502.*upstream sent \*\*\*") as caught:
        await executor.run(Command(pipeline=(Stage(argv=("true",)),)))
    assert key not in repr(caught.value)
    await executor.aclose()
    fake.fail_creation(f"runner rejected credentials {key}")
    again = DaytonaExecutor(settings, transport=fake.transport, clock=FakeClock())
    with pytest.raises(ExecutorError, match=r"rejected credentials \*\*\*"):
        await again.stat(".")
    await again.aclose()


async def test_daytona_sandbox_stopped_mid_run_is_named(tmp_path: Path) -> None:
    """A sandbox stopped (its auto-stop, the dashboard), archived or deleted outside the run:
    the toolbox proxy answers 400 "Is the Sandbox started?", 404 "sandbox container not
    found" or 404 "sandbox not found". An upload's 404 was the model's "no such file or
    directory" and its 400 a ToolError to correct; a command's error named no sandbox."""
    async for rig in closing(make_rig(tmp_path)):
        await rig.executor.stat(".")
        upload = (FileUpload(path="notes.txt", data=b"x"),)
        true = Command(pipeline=(Stage(argv=("true",)),))
        for state in ("stopped", "archived", "deleted"):
            for call in (rig.executor.upload(upload), rig.executor.run(true)):
                if state == "deleted":
                    rig.fake.deleted.append("sbx-1")
                else:
                    rig.fake.stop("sbx-1", state)
                with pytest.raises(ExecutorError, match=rf"sbx-1 is {state}, so (file|comm)"):
                    await call
        assert not (rig.ws / "notes.txt").exists()


async def test_a_sandbox_its_auto_stop_stopped_is_started_again_for_the_next_call(
    tmp_path: Path,
) -> None:
    """Daytona stops a sandbox idle for its auto-stop interval (15 minutes: a person at an
    approval prompt, a long turn) and archives it later: every call after it failed ("start a
    new session") though the session's own sandbox, with its files, could start again."""
    async for rig in closing(make_rig(tmp_path)):
        await rig.executor.write("notes.txt", b"kept", overwrite=False)
        for state in ("stopped", "archived"):
            rig.fake.stop("sbx-1", state)
            with pytest.raises(ExecutorError, match="make the call again") as caught:
                await rig.executor.read("notes.txt")  # not sent again: a command may have run
            assert f"sbx-1 is {state}, so command execution" in str(caught.value)
            assert await rig.executor.read("notes.txt") == b"kept"  # before: "is stopped"
        assert rig.fake.starts == ["sbx-1", "sbx-1"]
        rig.fake.fail("POST", "/sandbox/sbx-1/start", 400, {"message": "no runner free"})
        rig.fake.stop("sbx-1")
        with pytest.raises(ExecutorError, match=r"it could not be started again \(.*no runner"):
            await rig.executor.read("notes.txt")
        rig.fake.stopped.clear()


class _OnTheWire(httpx.AsyncBaseTransport):
    """The fake's answers a few milliseconds away, as a real API's are: calls made together
    are in flight together."""

    def __init__(self, fake: FakeDaytona) -> None:
        self.fake = fake

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        await asyncio.sleep(0.005)
        return await self.fake.transport.handle_async_request(request)


async def test_calls_that_find_the_sandbox_stopped_together_start_it_once(
    tmp_path: Path,
) -> None:
    """A batch of reads runs at once: after an auto-stop each call found the sandbox stopped
    and sent its own start, which Daytona refuses while one is in progress ("State change in
    progress"), so all but one said the sandbox "could not be started again"."""
    fake = FakeDaytona(polls_until_started=2)
    settings = fake.settings(working_dir=str(tmp_path))
    executor = DaytonaExecutor(
        settings, file_write=FileWriteMode.FULL, transport=_OnTheWire(fake), clock=FakeClock()
    )
    try:
        await executor.write("notes.txt", b"kept", overwrite=False)
        fake.stop("sbx-1")
        reads = [executor.read("notes.txt") for _ in range(3)]
        said = [str(f) for f in await asyncio.gather(*reads, return_exceptions=True)]
        assert all("make the call again" in s for s in said), said
        assert fake.starts == ["sbx-1"]
        assert await executor.read("notes.txt") == b"kept"
    finally:
        await executor.aclose()


async def test_daytona_key_revoked_mid_run_is_not_the_models_mistake(tmp_path: Path) -> None:
    """The key revoked (or rotated) after the sandbox was made: a write's upload answered 401
    and the model read "notes.txt: Unauthorized", a ToolError to correct."""
    async for rig in closing(make_rig(tmp_path)):
        await rig.executor.stat(".")
        rig.fake.api_key = "rotated-key"
        with pytest.raises(ExecutorError, match=r"401.*Unauthorized.*DAYTONA_API_KEY"):
            await rig.executor.upload((FileUpload(path="notes.txt", data=b"x"),))
        rig.fake.api_key = "fake-key"  # so that the sandbox is deleted


async def test_daytona_sandbox_that_does_not_start_is_deleted(tmp_path: Path) -> None:
    """A sandbox in state error, one not started by the creation deadline, one whose toolbox
    URL is refused, and one whose start is cancelled (Ctrl+C, SIGTERM): the error was raised
    with the sandbox left running in the user's account (the executor never learnt its id,
    so ``aclose`` deleted nothing) until Daytona's auto-stop and auto-delete."""
    slow = FakeDaytona(polls_until_started=10**6)
    plain = FakeDaytona(toolbox_url="http://proxy.fake-daytona.test/toolbox")
    failed = FakeDaytona()
    failed.fail_creation("image pull failed")
    hung = FakeDaytona()
    hung.fail("GET", "/sandbox/sbx-1", hang=True)
    cases = [(slow, "not started after 5 s"), (plain, "not https"), (failed, "pull failed")]
    for fake, message in [*cases, (hung, None)]:
        settings = fake.settings(working_dir=str(tmp_path), create_timeout=5)
        executor = DaytonaExecutor(settings, transport=fake.transport, clock=FakeClock())
        if message is None:
            starting = asyncio.create_task(executor.stat("."))
            await fake.hung.wait()
            starting.cancel()
            with pytest.raises(asyncio.CancelledError):
                await starting
        else:
            with pytest.raises(ExecutorError, match=message):
                await executor.stat(".")
        await executor.aclose()
        assert (fake.deleted, fake.live) == (["sbx-1"], [])


async def test_daytona_exit_code_not_an_integer(tmp_path: Path) -> None:
    """An exit code as a string, null or a boolean: the first two were "could not start the
    command: " followed by the whole output (100 kB here, into the error the model and
    the trace read); ``true`` was taken for exit code 1. A script of ours that failed
    after printing was quoted whole too."""
    async for rig in closing(make_rig(tmp_path)):
        await rig.executor.stat(".")
        true = Command(pipeline=(Stage(argv=("true",)),))
        output = "x" * 100_000 + "\n\x1erho:0:0\n"
        for code in ("0", None, True):
            rig.fake.fail("POST", "/process/execute", 200, {"exitCode": code, "result": output})
            with pytest.raises(ExecutorError, match=f"sbx-1 with exitCode '{code}'") as caught:
                await rig.executor.run(true)
            assert len(str(caught.value)) < 500
        rig.fake.fail("POST", "/process/execute", 200, {"exitCode": -1, "result": output})
        with pytest.raises(ExecutorError, match="could not start the command: x") as caught:
            await rig.executor.run(true)
        assert len(str(caught.value)) < 500
        # one of our scripts failing after printing (a resolve, a write's finalize)
        rig.fake.fail("POST", "/process/execute", 200, {"exitCode": 1, "result": output})
        with pytest.raises(ExecutorError, match=r"script failed \(1\): x+\.\.\. \(") as caught:
            await rig.executor.stat("src/a.txt")
        assert len(str(caught.value)) < 500
        rig.fake.fail(
            "POST", "/process/execute", 200, {"exitCode": 1, "result": output}, command=".rho-tmp"
        )
        with pytest.raises(
            ExecutorError, match=r"could not write new.txt in the sandbox \(1: x"
        ) as caught:
            await rig.executor.write("new.txt", b"data", overwrite=False)
        assert len(str(caught.value)) < 500


async def test_daytona_whole_read_of_a_large_file_is_refused_by_size(tmp_path: Path) -> None:
    """``--download`` of a file larger than a read returns (10 GB): the sandbox base64'd it
    whole, and the run got "the sandbox did not answer within 30 s" or an answer past the
    256 MiB cap, after pulling it. Now at most ``read_bytes`` + 1 bytes are asked for."""
    async for rig in closing(make_rig(tmp_path)):
        rig.executor.read_bytes = 1000
        (rig.ws / "big.bin").write_bytes(b"x" * 5000)
        with pytest.raises(ToolError, match=r"big.bin is 5,000 bytes, more than the 1,000"):
            await rig.executor.read("big.bin")
        assert any("head -c 1001" in script for script in rig.fake.scripts)
        assert await rig.executor.read("big.bin", offset=4000, length=2000) == b"x" * 1000
        assert await rig.executor.read("src/a.txt") == b"hello\nworld\n"


async def test_daytona_a_redirect_is_not_followed_with_the_key(tmp_path: Path) -> None:
    # A toolbox (or API) answer redirecting to another host would take the API key there
    # if followed: it is an error naming the status, and no request leaves for that host.
    async for rig in closing(make_rig(tmp_path)):
        await rig.executor.stat(".")
        elsewhere = {"Location": "https://collector.example/steal"}
        rig.fake.fail("POST", "/process/execute", 307, "", headers=elsewhere)
        with pytest.raises(ExecutorError, match="307"):
            await rig.executor.run(Command(pipeline=(Stage(argv=("true",)),)))
        assert not [path for _, path in rig.fake.requests if path == "/steal"]


async def test_daytona_a_url_httpx_refuses_is_an_executor_error(tmp_path: Path) -> None:
    # Before, httpx's InvalidURL ("URL too long"; it is no httpx.HTTPError) left the adapter
    # as httpx's own exception: a resumed session whose trace named a sandbox id of 70,000
    # characters failed to resume with a raw httpx traceback (every resume of it).
    async for rig in closing(make_rig(tmp_path, session_id="s1", reattach=True)):
        rig.executor.expect("x" * 70_000)
        with pytest.raises(ExecutorError, match="sandbox lookup: its URL URL too long"):
            await rig.executor.stat(".")


async def test_daytona_a_retry_after_date_is_waited_for(tmp_path: Path) -> None:
    # Before, a Retry-After given as an HTTP date (RFC 9110 allows either form) counted as a
    # second however far it named: the request came back too early, twice, and failed.
    from email.utils import formatdate

    true = Command(pipeline=(Stage(argv=("true",)),))
    async for rig in closing(make_rig(tmp_path)):
        fake, clock, executor = rig.fake, rig.clock, rig.executor
        await executor.stat(".")
        del clock.sleeps[:]
        ahead, past = formatdate(int(clock.now()) + 6, usegmt=True), formatdate(0, usegmt=True)
        for twice in ((ahead, past), ("soon", "-3")):  # each run turned away twice
            for said in twice:
                headers = {"Retry-After": said}
                fake.fail("POST", "/process/execute", 429, {"message": "wait"}, headers=headers)
            assert (await executor.run(true)).exit_code == 0
        assert 5 < clock.sleeps[0] <= 6  # the date's whole seconds, less the fake's fraction
        assert clock.sleeps[1:] == [0.0, 1.0, 1.0]  # a date past is no wait; no value, 1 s


async def test_a_sandbox_deleted_mid_command_is_named_not_the_api_url(tmp_path: Path) -> None:
    # Before, a toolbox connection the proxy dropped (the sandbox deleted while a command
    # ran) was said as "connection to Daytona failed ... (at https://proxy...; the API's URL
    # is DAYTONA_API_URL)": the sandbox's state was asked only after an error status, and
    # the variable named was the API's, though the host was the toolbox the API named.
    fake, hang_up = FakeDaytona(), {"now": False, "deleting": False}

    async def hanging_up(request: httpx.Request) -> httpx.Response:
        if hang_up["now"] and request.url.path.endswith("/process/execute"):
            if hang_up["deleting"]:
                fake.deleted.append("sbx-1")
            raise httpx.RemoteProtocolError("Server disconnected", request=request)
        return await fake.handler(request)

    settings = fake.settings(working_dir=str(tmp_path))
    executor = DaytonaExecutor(
        settings, transport=httpx.MockTransport(hanging_up), clock=FakeClock(), allow_shell=True
    )
    await executor.stat(".")
    toolbox = "(at https://proxy.fake-daytona.test: the toolbox URL Daytona's API at "
    for deleting in (False, True):
        hang_up.update(now=True, deleting=deleting)
        with pytest.raises(ExecutorError) as caught:
            await executor.run(Command(shell="true", timeout=5))
        assert toolbox in str(caught.value)
        assert "DAYTONA_API_URL" not in str(caught.value)
        assert str(caught.value).startswith("Daytona sandbox sbx-1 is deleted") == deleting
    await executor.aclose()


async def test_a_gateway_page_while_the_sandbox_starts_is_polled_through(tmp_path: Path) -> None:
    # Before, one HTML 502 from a gateway while Daytona built or started the sandbox failed
    # the call ("Daytona failed sandbox status (502): <html>...") and deleted the sandbox
    # being made: a Dockerfile build of minutes was lost to one hiccup, and made again.
    async for rig in closing(make_rig(tmp_path)):
        rig.fake.fail("GET", "/sandbox/sbx-1", 502, "<html><body>502 Bad Gateway</body></html>")
        await rig.executor.stat(".")
        assert (rig.executor.sandbox_id, rig.fake.deleted, len(rig.fake.created)) == (
            "sbx-1",
            [],
            1,
        )
