"""backend: daytona through the facade: wiring from the environment, and a readonly agent whose
tools run in the (fake) sandbox — where the profile is enforced too."""

from __future__ import annotations

from pathlib import Path

import pytest

from rho_adapters.daytona import DaytonaExecutor
from rho_adapters.fakes import (
    FakeClock,
    FakeDaytona,
    MemorySessionStore,
    ScriptedModel,
    call,
    text,
    tools,
)
from rho_domain.errors import ConfigError, ExecutorError
from rho_domain.messages import ToolResultMessage, UserMessage
from rho_domain.permissions import builtin_profile
from rho_entry import Agent, AgentConfig, RunStatus, Session
from rho_entry.agent import definition_of
from rho_entry.wiring import build_daytona_executor, build_ports


def test_wiring_reads_the_key_and_url_from_the_environment() -> None:
    config = AgentConfig(backend="daytona")
    env = {
        "DAYTONA_API_KEY": "k",
        "DAYTONA_API_URL": "https://daytona.example/api",
        "RHO_AGENT_DAYTONA_WORKING_DIR": "/home/daytona/repo",
        "DAYTONA_ORGANIZATION_ID": "org-7",  # the SDKs' name; before, read by nothing
    }
    executor = build_daytona_executor(config, builtin_profile("readonly"), env)
    assert isinstance(executor, DaytonaExecutor)
    assert executor.settings.api_url == "https://daytona.example/api"
    assert executor.settings.organization_id == "org-7"
    assert executor.working_dir == "/home/daytona/repo"
    with pytest.raises(ConfigError, match="DAYTONA_API_KEY"):
        build_daytona_executor(config, builtin_profile("readonly"), {})
    ports = build_ports(  # the session's id labels its sandbox; a resume looks for it
        definition_of(Agent(config)),
        model=ScriptedModel([]),
        environ={"DAYTONA_API_KEY": "k"},
        session_id="s9",
        resumed=True,
    )
    assert isinstance(ports.executor, DaytonaExecutor)
    assert (ports.executor.settings.session_id, ports.executor.settings.reattach) == ("s9", True)


async def test_a_readonly_agent_in_the_sandbox_reads_but_cannot_write(tmp_path: Path) -> None:
    sandbox_dir = tmp_path / "sandbox"
    sandbox_dir.mkdir()
    (sandbox_dir / "notes.txt").write_text("remote notes\n")
    fake = FakeDaytona()
    executor = DaytonaExecutor(
        fake.settings(working_dir=str(sandbox_dir)), transport=fake.transport, clock=FakeClock()
    )
    agent = Agent(AgentConfig(profile="readonly", backend="daytona", auto_approve=True))
    model = ScriptedModel(
        [
            tools(
                call("read", {"path": "notes.txt"}),
                call("bash", {"command": "echo hacked > notes.txt"}),
            ),
            text("done"),
        ]
    )
    async with Session(agent, model=model, executor=executor) as session:
        result = await session.run(prompt="read the notes")
    await executor.aclose()
    assert result.status is RunStatus.COMPLETED
    read, refused = session.state.messages[2], session.state.messages[3]
    assert isinstance(read, ToolResultMessage)
    assert "remote notes" in read.content
    assert isinstance(refused, ToolResultMessage)
    assert refused.is_error
    assert (sandbox_dir / "notes.txt").read_text() == "remote notes\n"
    assert fake.live == []  # the sandbox was deleted


async def test_a_resumed_session_whose_sandbox_is_gone_is_told_so(tmp_path: Path) -> None:
    fake = FakeDaytona()
    store = MemorySessionStore()

    def executor(resumed: bool) -> DaytonaExecutor:
        settings = fake.settings(working_dir=str(tmp_path), session_id="s1", reattach=resumed)
        return DaytonaExecutor(settings, transport=fake.transport, clock=FakeClock())

    agent = Agent(AgentConfig(model="m", backend="daytona"))
    first = executor(False)
    model = ScriptedModel([tools(call("list", {"path": "."})), text("hi")])
    async with Session(agent, model=model, executor=first, store=store,
                       session_id="s1", clock=FakeClock()) as session:  # fmt: skip
        await session.run("hello")  # the sandbox made by its call: named in the trace
    await first.aclose()  # the session's sandbox, sbx-1, deleted as the CLI's close does
    again = executor(True)
    session = await Session.resume("s1", store=store, model=ScriptedModel([]), executor=again)
    async with session:
        (notice,) = [n for n in session.resume_notices if "Daytona" in n]
        assert notice.startswith("this session's Daytona sandbox is gone")
        last = session.state.messages[-1]
        assert isinstance(last, UserMessage)
        assert last.origin == "directive"
        assert last.content == f"Note from rho-agent on resuming this session: {notice}."
    await again.aclose()
    assert fake.live == []


async def test_a_sandbox_built_before_its_session_is_labelled_and_found_again(
    tmp_path: Path,
) -> None:
    # The CLI's --dockerfile/--snapshot build the executor before the session has an id: its
    # sandbox was labelled created-by alone, and a resume made a new one beside it.
    fake = FakeDaytona()
    store = MemorySessionStore()

    def unnamed() -> DaytonaExecutor:
        settings = fake.settings(working_dir=str(tmp_path), dockerfile="FROM alpine\n")
        return DaytonaExecutor(settings, transport=fake.transport, clock=FakeClock())

    agent = Agent(AgentConfig(model="m", backend="daytona"))
    first = unnamed()
    model = ScriptedModel([tools(call("list", {"path": "."})), text("hi")])
    async with Session(agent, model=model, executor=first, store=store,
                       session_id="s1", clock=FakeClock()) as session:  # fmt: skip
        await session.run("hello")  # the sandbox made by its call: named in the trace
    labels = fake.created[0]["labels"]
    assert (labels["created-by"], labels["rho-agent-session"]) == ("rho-agent", "s1")
    fake.stop("sbx-1", "stopped")  # the process died; Daytona stopped it since
    again = unnamed()
    session = await Session.resume("s1", store=store, model=ScriptedModel([]), executor=again)
    async with session:
        assert (again.sandbox_id, len(fake.created)) == ("sbx-1", 1)  # its own, started again
        assert not [n for n in session.resume_notices if "Daytona" in n]
    named = DaytonaExecutor(  # one naming its session, or whose sandbox exists: left as built
        fake.settings(working_dir=str(tmp_path), session_id="mine"), transport=fake.transport
    )
    async with Session(agent, model=ScriptedModel([]), executor=named, session_id="s2"):
        assert named.settings.session_id == "mine"
    with pytest.raises(ExecutorError, match="Daytona sandbox sbx-1 exists already"):
        again.serve("s3")
    changed = DaytonaExecutor(  # another Dockerfile: refused at the resume, the lock let go
        fake.settings(working_dir=str(tmp_path), dockerfile="FROM debian\n"),
        transport=fake.transport,
        clock=FakeClock(),
    )
    with pytest.raises(ConfigError, match="not built from the Dockerfile this resume names"):
        await Session.resume("s1", store=store, model=ScriptedModel([]), executor=changed)
    async with await Session.resume("s1", store=store, model=ScriptedModel([]), executor=again):
        pass
    for executor in (first, again, named, changed):
        await executor.aclose()
