"""Approvals on real commands and a real database: after "always" for bash a destructive
command asks again (and, rejected, changes nothing); under readonly a call the profile cannot
run is refused before anyone is asked, and the run goes on."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import attrs
import pytest

from rho_adapters.clock import SystemClock
from rho_adapters.db import open_databases
from rho_adapters.fakes import ScriptedApprover, ScriptedModel, call, text, tools
from rho_adapters.fakes.scripted_model import Turn
from rho_adapters.local import LocalExecutor
from rho_domain import events as ev
from rho_domain.agent import Agent
from rho_domain.config import AgentConfig, DatabaseConfig
from rho_domain.loop.session import Session
from rho_domain.messages import ToolCall, ToolResultMessage
from rho_domain.permissions import (
    DatabaseMode,
    FileWriteMode,
    PermissionProfile,
    builtin_profile,
)
from rho_domain.ports.approver import ApprovalAnswer
from rho_domain.run import RunStatus
from rho_domain.tools.factory import build_registry


def _session(
    root: Path,
    profile: PermissionProfile,
    turns: list[Turn],
    approver: ScriptedApprover,
    *,
    databases: dict[str, DatabaseConfig] | None = None,
) -> tuple[Session, list[ev.Event]]:
    seen: list[ev.Event] = []
    agent = Agent(
        config=AgentConfig(profile=profile),
        profile=profile,
        registry=build_registry(profile, databases=databases or {}),
        system_prompt="test",
    )
    executor = LocalExecutor(
        str(root),
        file_write=profile.file_write,
        allow_shell=profile.file_write is FileWriteMode.FULL,
    )
    session = Session(
        agent,
        model=ScriptedModel(turns),
        executor=executor,
        clock=SystemClock(),
        approver=approver,
        databases=open_databases(databases or {}, mode=profile.database, environ={}),
        on_event=seen.append,
    )
    return session, seen


def _results(session: Session) -> list[ToolResultMessage]:
    return [m for m in session.state.messages if isinstance(m, ToolResultMessage)]


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    (tmp_path / "build" / "deep").mkdir(parents=True)
    (tmp_path / "build" / "deep" / "keep.txt").write_text("precious\n")
    return tmp_path / "build"


@pytest.mark.parametrize(
    "raw",
    [
        '{"command": "rm \\u002drf build"}',
        '{"command": "rm -fr build"}',
        '{"command": "rm --recursive --force build"}',
        '{"command": "find build -delete"}',
        '{"command": "r\\\\m -Rf build"}',
        '{"command": "/bin/rm -r build"}',
        '{"command": "ls && sh -c \\"rm -rf build\\""}',
        '{"command": "find . -name deep | xargs rm -r"}',
        '{"command": "echo build | xargs rm"}',
    ],
)
async def test_after_always_a_destructive_command_asks_again(victim: Path, raw: str) -> None:
    approver = ScriptedApprover([ApprovalAnswer(approved=True, always=True), False, True])
    session, _ = _session(
        victim.parent,
        builtin_profile("developer"),
        [
            tools(call("bash", {"command": "touch made.txt"})),
            tools(ToolCall(id="danger", name="bash", arguments=raw)),
            text("stopped"),
        ],
        approver,
    )
    result = await session.run("clean up")
    assert result.status is RunStatus.COMPLETED
    assert (victim.parent / "made.txt").exists()  # the first call ran after "always"
    assert len(approver.requests) == 2  # the destructive one was asked about again
    asked = approver.requests[1]
    assert asked.call.id == "danger"
    assert "rm" in asked.reason or "find -delete" in asked.reason
    assert (victim / "deep" / "keep.txt").read_text() == "precious\n"  # rejected: nothing ran
    assert "rejected" in _results(session)[-1].content


async def test_after_always_ordinary_commands_run_unasked(tmp_path: Path) -> None:
    approver = ScriptedApprover([ApprovalAnswer(approved=True, always=True)])
    commands = ["mkdir -p out", "echo hi > out/a.txt", "rm out/a.txt", "ls -la | wc -l"]
    session, _ = _session(
        tmp_path,
        builtin_profile("developer"),
        [*(tools(call("bash", {"command": c})) for c in commands), text("done")],
        approver,
    )
    assert (await session.run("go")).status is RunStatus.COMPLETED
    assert len(approver.requests) == 1
    assert (tmp_path / "out").is_dir()
    assert not (tmp_path / "out" / "a.txt").exists()


async def test_readonly_refuses_before_asking_and_the_run_goes_on(tmp_path: Path) -> None:
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "keep.txt").write_text("k")
    db = tmp_path / "app.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE t (id INTEGER)")
        conn.executemany("INSERT INTO t VALUES (?)", [(1,), (2,)])
    approver = ScriptedApprover(default=True)
    session, seen = _session(
        tmp_path,
        builtin_profile("readonly"),
        [
            tools(
                call("sqlite", {"operation": "query", "sql": "DELETE FROM t"}, id="sql"),
                call("bash", {"command": "rm -rf x"}, id="rm"),
                call("bash", {"command": "cat x/keep.txt"}, id="cat"),
                call("write", {"path": "x/keep.txt", "content": "gone"}, id="write"),
            ),
            text("understood"),
        ],
        approver,
        databases={"app": DatabaseConfig(engine="sqlite", path=str(db))},
    )
    result = await session.run("tidy up")
    assert result.status is RunStatus.COMPLETED
    assert result.text == "understood"
    assert approver.requests == []  # nobody was asked to approve what would not run
    sql, rm, cat, write = _results(session)
    assert write.content.startswith("Unknown tool 'write'")  # readonly registers no write tool
    assert sql.is_error
    assert sql.content.startswith("[denied: the database is read-only in this profile: ")
    assert "DELETE" in sql.content
    assert rm.is_error
    assert rm.content.startswith("[denied: Command refused: ")
    assert "'rm'" in rm.content
    assert cat.content.startswith("k")  # the readable call of the same batch ran
    blocked = [e for e in seen if isinstance(e, ev.ToolBlocked)]
    assert [(e.call.id, e.by) for e in blocked] == [("sql", "policy"), ("rm", "policy")]
    assert not any(isinstance(e, ev.ApprovalRequested) for e in seen)
    assert (tmp_path / "x" / "keep.txt").exists()
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM t").fetchone() == (2,)


async def test_with_mutations_sql_that_deletes_asks_again_after_always(tmp_path: Path) -> None:
    db = tmp_path / "app.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE t (id INTEGER)")
    mutations = attrs.evolve(
        builtin_profile("developer"), database=DatabaseMode.MUTATIONS, dangerous_patterns=()
    )
    approver = ScriptedApprover([ApprovalAnswer(approved=True, always=True), False])
    statements = ["INSERT INTO t VALUES (1)", "INSERT INTO t VALUES (2)", "DELETE/**/FROM t"]
    session, _ = _session(
        tmp_path,
        mutations,
        [
            *(tools(call("sqlite", {"operation": "query", "sql": sql})) for sql in statements),
            text("stopped"),
        ],
        approver,
        databases={"app": DatabaseConfig(engine="sqlite", path=str(db))},
    )
    assert (await session.run("go")).status is RunStatus.COMPLETED
    assert [r.arguments["sql"] for r in approver.requests] == [statements[0], statements[2]]
    assert approver.requests[1].reason == "DELETE: may change or delete existing data"
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM t").fetchone() == (2,)  # nothing deleted
