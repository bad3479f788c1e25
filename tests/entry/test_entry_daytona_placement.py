"""Where a session's work runs is on its record: the Daytona sandbox's id in the trace, in
meta.json, in ``--list``, ``monitor ps`` and the server's session view (before, only the
sandbox's labels and an INFO log named it: an operator had nothing to find or delete it by)."""

from __future__ import annotations

import json
import logging
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
from rho_adapters.store.files import FileSessionStore
from rho_domain.placement import Placement
from rho_entry import Agent, AgentConfig, Session
from rho_entry.cli.session_json import info_dict
from rho_entry.cli.sessions import format_sessions
from rho_entry.server.views import summary_of


async def test_the_sandbox_of_a_session_is_named_in_its_trace_and_listings(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    fake = FakeDaytona()
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("n\n")
    store = FileSessionStore(tmp_path / "sessions")
    settings = fake.settings(working_dir=str(ws), session_id="s1")
    executor = DaytonaExecutor(settings, transport=fake.transport, clock=FakeClock())
    agent = Agent(AgentConfig(model="m", backend="daytona"))
    model = ScriptedModel([tools(call("read", {"path": "notes.txt"})), text("done"), text("again")])
    async with Session(agent, model=model, executor=executor, store=store, session_id="s1") as s:
        await s.run("read the notes")  # the first call creates the sandbox, mid-run
        await s.run("once more")
    await executor.aclose()
    trace = [json.loads(line) for line in (tmp_path / "sessions/s1/trace.jsonl").open()]
    where = [(e["kind"], e["placement"]) for e in trace if e["kind"] in ("run_start", "run_end")]
    sandbox = {"backend": "daytona", "id": "sbx-1"}
    assert where == [
        ("run_start", {"backend": "daytona", "id": None}),  # none yet: it is made lazily
        ("run_end", sandbox),
        ("run_start", sandbox),
        ("run_end", sandbox),
    ]
    assert json.loads((tmp_path / "sessions/s1/meta.json").read_text())["placement"] == sandbox
    (info,) = await store.list()
    assert info.placement == Placement(backend="daytona", id="sbx-1")
    assert info_dict(info, 0.0)["placement"] == sandbox  # ps --json, --list --json
    assert summary_of(info, running_here=False)["placement"] == sandbox  # the server's view
    assert format_sessions([info], now=0.0)[2].strip() == "└ runs in daytona:sbx-1"

    # An older meta.json has none (nothing shown); one of another shape is ignored, said.
    meta = tmp_path / "sessions/s1/meta.json"
    huge, shown = {"backend": "daytona", "id": "x" * 100_000}, {"backend": "daytona", "id": "a\nb"}
    for stored in (None, {"backend": 3}, huge, shown):  # the last two: no id (a 100 kB line)
        data = json.loads(meta.read_text())
        data.pop("placement", None)
        meta.write_text(json.dumps(data if stored is None else {**data, "placement": stored}))
        with caplog.at_level(logging.WARNING, logger="rho_adapters.store"):
            (info,) = await store.list()
        assert info.placement is None
        assert len(format_sessions([info], now=0.0)) == 2  # the header and the session
    assert "ignored placement (dict)" in caplog.text


async def test_a_resume_reattaches_the_sandbox_its_trace_names_not_one_labelled_so(
    tmp_path: Path,
) -> None:
    # Before, a resume looked for its sandbox by its labels alone: once its own was gone,
    # a sandbox anyone in the organisation had labelled rho-agent-session=<id> was taken,
    # and the agent worked in it (its files, its programs).
    fake = FakeDaytona()
    store = MemorySessionStore()

    def executor(session: str, *, resumed: bool) -> DaytonaExecutor:
        settings = fake.settings(working_dir=str(tmp_path), session_id=session, reattach=resumed)
        return DaytonaExecutor(settings, transport=fake.transport, clock=FakeClock())

    agent = Agent(AgentConfig(model="m", backend="daytona"))
    first = executor("s1", resumed=False)
    model = ScriptedModel([tools(call("list", {"path": "."})), text("done")])
    async with Session(agent, model=model, executor=first, store=store, session_id="s1") as s:
        await s.run("look")  # sbx-1, named by the run's end
    spoof = executor("s1", resumed=False)  # another's sandbox, labelled as s1's
    await spoof.stat(".")
    for own, expected in (("started", "sbx-1"), ("gone", "sbx-3")):
        if own == "gone":
            await first.aclose()  # sbx-1 deleted
        again = executor("s1", resumed=True)
        resumed = await Session.resume("s1", store=store, model=ScriptedModel([]), executor=again)
        async with resumed:
            assert again.sandbox_id == expected
            assert bool([n for n in resumed.resume_notices if "Daytona" in n]) == (own == "gone")
        await again.aclose()
    await spoof.aclose()


async def test_a_trace_naming_no_sandbox_id_is_read_as_naming_none(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # The trace is data anyone may have written. Before, a run_end whose placement id was
    # 100,000 characters made every resume fail with httpx's own InvalidURL ("URL too
    # long"); one with a line break, a "/" or a URL was asked for as a sandbox's id. Such an
    # id now names none, and it is said: what merely carries the session's labels (its own
    # sbx-1 here, or anyone's) is not attached, and the new sandbox says why.
    fake = FakeDaytona()
    store = FileSessionStore(tmp_path / "sessions")

    def executor(*, resumed: bool) -> DaytonaExecutor:
        settings = fake.settings(working_dir=str(tmp_path), session_id="s1", reattach=resumed)
        return DaytonaExecutor(settings, transport=fake.transport, clock=FakeClock())

    agent = Agent(AgentConfig(model="m", backend="daytona"))
    first = executor(resumed=False)
    model = ScriptedModel([tools(call("list", {"path": "."})), text("done")])
    async with Session(agent, model=model, executor=first, store=store, session_id="s1") as s:
        await s.run("look")  # sbx-1, named by the run's end
    trace = tmp_path / "sessions/s1/trace.jsonl"
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    resumers = []
    for bad in ("x" * 100_000, "sbx-1\n\x1b[2J", "https://evil.example/"):
        for event in events:
            if (event.get("placement") or {}).get("id"):
                event["placement"]["id"] = bad
        trace.write_text("".join(json.dumps(event) + "\n" for event in events))
        resumers.append(again := executor(resumed=True))
        with caplog.at_level(logging.WARNING, logger="rho_entry.reopening"):
            resumed = await Session.resume("s1", store=store, model=model, executor=again)
        async with resumed:
            assert again.sandbox_id not in (None, "sbx-1")  # found by its labels: not taken
            (notice,) = [n for n in resumed.resume_notices if "Daytona" in n]
            assert "sandbox sbx-1 that carries its labels was not attached" in notice
            assert notice.endswith("then delete it: daytona delete sbx-1")
        assert f"names a Daytona sandbox id that is no id ({bad[:40]!r}" in caplog.text
    for each in (first, *resumers):  # the first deletes sbx-1; the others' deletion is logged
        await each.aclose()
