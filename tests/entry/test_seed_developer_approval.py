"""Seed 001's profile table: ``developer`` is GRANULAR with ``approval_required_tools``, and
asks exactly what the DANGEROUS developer asked, call by call.

The public implementation's granular developer named only oracle and mysql, so bash, write and
edit ran unasked. Here GRANULAR asks the named tools *and* every call its handler declares
dangerous, so a tool the list forgets (a custom tool with ``requires_approval``, an MCP tool,
SQL that writes) still asks; refused calls are denied before anyone is asked, and destructive
ones ask again after "always".
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs
import pytest

from rho_adapters.fakes import ScriptedModel, call, text, tools
from rho_agent import (
    Agent,
    AgentConfig,
    ApprovalInterrupt,
    Session,
    ToolHandler,
    ToolInvocation,
    ToolOutput,
)
from rho_domain.approval import Allowed, Decision, Denied, RequiresApproval, decide
from rho_domain.config import DatabaseConfig
from rho_domain.messages import ToolResultMessage
from rho_domain.permissions import (
    ApprovalMode,
    DatabaseMode,
    PermissionProfile,
    developer_profile,
)
from rho_domain.tools import base
from rho_domain.tools.factory import build_registry
from rho_domain.tools.registry import ToolRegistry
from rho_entry.seed_api.tools import as_domain_handler

NEW = developer_profile()
OLD = attrs.evolve(NEW, approval=ApprovalMode.DANGEROUS, approval_required_tools=frozenset())


class Stamp(ToolHandler):
    """A tool written the seed's way; ``requires_approval`` as given."""

    def __init__(self, name: str, *, approval: bool) -> None:
        self._name = name
        self.approval = approval
        self.calls: list[str] = []

    @property
    def name(self) -> str:
        return self._name

    @property
    def description(self) -> str:
        return "Stamp a word."

    @property
    def parameters(self) -> Mapping[str, Any]:
        return {"type": "object", "properties": {"word": {"type": "string"}}}

    @property
    def requires_approval(self) -> bool:
        return self.approval

    async def handle(self, invocation: ToolInvocation) -> ToolOutput:
        self.calls.append(str(invocation.arguments.get("word", "")))
        return ToolOutput(content="stamped")


class McpLike(base.ToolHandler):
    """A domain tool (as an MCP bridge would register one) whose handler says dangerous."""

    name = "mcp_deploy"
    description = "Deploy."
    parameters: Mapping[str, Any] = {"type": "object", "properties": {}}

    def policy_for(self, arguments: Mapping[str, Any]) -> base.ToolPolicy:
        return base.DANGEROUS

    async def handle(self, arguments: Mapping[str, Any], ctx: base.ToolContext) -> base.ToolOutput:
        return base.ToolOutput(content="deployed")


def _registry(profile: PermissionProfile, db: Path) -> ToolRegistry:
    return build_registry(
        profile,
        databases={"app": DatabaseConfig(engine="sqlite", path=str(db))},
        delegation=True,
        extra=(
            as_domain_handler(Stamp("stamp", approval=True)),
            as_domain_handler(Stamp("note", approval=False)),
            McpLike(),
        ),
    )


CALLS = [
    call("bash", {"command": "echo hi"}),
    call("bash", {"command": "ls -la"}),
    call("bash", {"command": "rm -rf build"}),  # destructive: asks even after "always"
    call("bash", {"command": "eval $X"}),  # unreadable: asks even after "always"
    call("write", {"path": "notes.md", "content": "x"}),
    call("write", {"path": ".git/hooks/pre-commit", "content": "x"}),  # asks after always
    call("edit", {"path": "notes.md", "old_string": "x", "new_string": "y"}),
    call("read", {"path": "notes.md"}),
    call("grep", {"pattern": "x"}),
    call("glob", {"pattern": "*.md"}),
    call("list", {}),
    call("sqlite", {"operation": "query", "sql": "SELECT * FROM t"}),
    call("sqlite", {"operation": "list_tables"}),
    call("sqlite", {"operation": "query", "sql": "INSERT INTO t VALUES (2)"}),
    call("sqlite", {"operation": "query", "sql": "DELETE FROM t"}),
    call("delegate", {"instruction": "look around"}),
    call("stamp", {"word": "a"}),
    call("note", {"word": "a"}),
    call("mcp_deploy", {}),
]


def _decisions(profile: PermissionProfile, db: Path, *, always: bool) -> list[Decision]:
    registry = _registry(profile, db)
    out = []
    for c in CALLS:
        policy = registry.policy_for(c)
        assert policy is not None, c  # a known tool with valid arguments: a real decision
        allowed = {c.name} if always else set()
        out.append(decide(profile, c, policy, always_allowed=allowed))
    return out


def _db(tmp_path: Path) -> Path:
    path = tmp_path / "app.db"
    with sqlite3.connect(path) as con:
        con.execute("CREATE TABLE t (x INTEGER)")
        con.execute("INSERT INTO t VALUES (1)")
    return path


@pytest.mark.parametrize("always", [False, True], ids=["asked", "after-always"])
@pytest.mark.parametrize("database", list(DatabaseMode), ids=lambda m: m.value)
def test_the_granular_developer_decides_every_call_as_the_dangerous_one(
    tmp_path: Path, always: bool, database: DatabaseMode
) -> None:
    """Same decision, same words, for every call: also with ``database: mutations`` (a custom
    granular profile over developer), and after "always"."""
    db = _db(tmp_path)
    new = attrs.evolve(NEW, database=database)
    old = attrs.evolve(OLD, database=database)
    assert new.approval is ApprovalMode.GRANULAR
    assert _decisions(new, db, always=always) == _decisions(old, db, always=always)


def test_what_the_developer_asks_call_by_call(tmp_path: Path) -> None:
    db = _db(tmp_path)
    asked = list(zip(CALLS, _decisions(NEW, db, always=False), strict=True))
    after = list(zip(CALLS, _decisions(NEW, db, always=True), strict=True))

    def kind(table: list[tuple[Any, Decision]], name: str, fragment: str = "") -> str:
        found = [d for c, d in table if c.name == name and fragment in c.arguments]
        assert found, (name, fragment)
        return type(found[0]).__name__

    for name in ("bash", "write", "edit", "stamp", "mcp_deploy"):
        assert kind(asked, name) == "RequiresApproval", name
    for name in ("read", "grep", "glob", "list", "note", "delegate"):
        assert kind(asked, name) == "Allowed", name  # the child's calls ask one by one
    assert kind(asked, "sqlite", "SELECT") == "Allowed"
    assert kind(asked, "sqlite", "list_tables") == "Allowed"
    # developer's SQL is read-only: a write is refused before anyone is asked
    assert kind(asked, "sqlite", "INSERT") == "Denied"
    assert kind(asked, "sqlite", "DELETE") == "Denied"
    # "always" covers ordinary work, never destruction
    assert kind(after, "bash", "echo") == "Allowed"
    assert kind(after, "bash", "rm -rf") == "RequiresApproval"
    assert kind(after, "bash", "eval") == "RequiresApproval"
    assert kind(after, "write", ".git") == "RequiresApproval"
    assert kind(after, "write", "notes.md") == "Allowed"


def test_with_mutations_sql_that_writes_asks_though_no_list_names_it(tmp_path: Path) -> None:
    db = _db(tmp_path)
    custom = attrs.evolve(
        NEW, name="dev-db", database=DatabaseMode.MUTATIONS,
        approval_required_tools=frozenset({"bash"}),
    )  # fmt: skip
    registry = _registry(custom, db)
    insert = call("sqlite", {"operation": "query", "sql": "INSERT INTO t VALUES (2)"})
    delete = call("sqlite", {"operation": "query", "sql": "DELETE FROM t"})
    select = call("sqlite", {"operation": "query", "sql": "SELECT x FROM t"})
    assert decide(custom, insert, registry.policy_for(insert)) == RequiresApproval(
        "'sqlite' can change things outside the conversation"
    )
    assert isinstance(
        decide(custom, delete, registry.policy_for(delete), always_allowed={"sqlite"}),
        RequiresApproval,
    )
    assert decide(custom, select, registry.policy_for(select)) == Allowed()
    # write and edit are not named in this list, and still ask: their handler says dangerous
    write = call("write", {"path": "a.txt", "content": "x"})
    assert isinstance(decide(custom, write, registry.policy_for(write)), RequiresApproval)


def test_a_named_read_only_tool_asks_on_every_call(tmp_path: Path) -> None:
    db = _db(tmp_path)
    custom = attrs.evolve(NEW, approval_required_tools=frozenset({"bash", "sqlite"}))
    registry = _registry(custom, db)
    select = call("sqlite", {"operation": "query", "sql": "SELECT x FROM t"})
    assert decide(custom, select, registry.policy_for(select)) == RequiresApproval(
        "the 'developer' profile asks before 'sqlite'"
    )
    delete = call("sqlite", {"operation": "query", "sql": "DELETE FROM t"})
    assert isinstance(decide(custom, delete, registry.policy_for(delete)), Denied)


# -- a real session: what is asked, and what happens --------------------------------------------


def _script() -> list[Any]:
    return [
        tools(call("bash", {"command": "echo ran > shell.txt"}, id="b1")),
        tools(call("write", {"path": "notes.md", "content": "one\n"}, id="w1")),
        tools(call("edit", {"path": "notes.md", "old_string": "one", "new_string": "2"}, id="e1")),
        tools(call("read", {"path": "notes.md"}, id="r1")),
        tools(call("sqlite", {"operation": "query", "sql": "SELECT x FROM t"}, id="q1")),
        tools(call("sqlite", {"operation": "query", "sql": "DELETE FROM t"}, id="q2")),
        tools(call("stamp", {"word": "asked"}, id="s1")),
        tools(call("note", {"word": "free"}, id="n1")),
        text("done"),
    ]


def _agent(tmp_path: Path, db: Path, *stamps: Stamp) -> Agent:
    config = AgentConfig(
        profile="developer",
        working_dir=str(tmp_path),
        databases={"app": DatabaseConfig(engine="sqlite", path=str(db))},
    )
    return Agent(config, tools=list(stamps))


async def test_a_developer_session_asks_for_shell_write_edit_and_the_custom_tool(
    tmp_path: Path,
) -> None:
    db = _db(tmp_path)
    stamp, note = Stamp("stamp", approval=True), Stamp("note", approval=False)
    asked: list[str] = []

    def approve(tool_name: str, args: Mapping[str, Any]) -> bool:
        asked.append(tool_name)
        return True

    session = Session(_agent(tmp_path, db, stamp, note), model=ScriptedModel(_script()))
    session.approval_callback = approve
    result = await session.run("work")
    assert result.status == "completed", result.error
    assert asked == ["bash", "write", "edit", "stamp"]
    assert (tmp_path / "shell.txt").read_text() == "ran\n"
    assert (tmp_path / "notes.md").read_text() == "2\n"
    assert (stamp.calls, note.calls) == (["asked"], ["free"])
    with sqlite3.connect(db) as con:  # the DELETE was refused, unasked
        assert con.execute("SELECT count(*) FROM t").fetchone() == (1,)
    results = {
        m.call_id: m.content for m in session.state.messages if isinstance(m, ToolResultMessage)
    }
    assert "denied" in results["q2"].lower()


async def test_without_an_approver_the_developers_shell_does_not_run(tmp_path: Path) -> None:
    db = _db(tmp_path)
    session = Session(_agent(tmp_path, db), model=ScriptedModel(_script()))
    with pytest.raises(ApprovalInterrupt) as waiting:
        await session.run("work")
    assert [p.call.id for p in waiting.value.pending] == ["b1"]
    assert not (tmp_path / "shell.txt").exists()


async def test_a_rejected_write_writes_nothing(tmp_path: Path) -> None:
    db = _db(tmp_path)
    model = ScriptedModel(
        [tools(call("write", {"path": "notes.md", "content": "x"}, id="w1")), text("ok")]
    )
    session = Session(_agent(tmp_path, db), model=model)
    session.approval_callback = lambda name, args: False
    assert (await session.run("write")).status == "completed"
    assert not (tmp_path / "notes.md").exists()


async def test_a_delegated_child_asks_for_its_own_shell_call(tmp_path: Path) -> None:
    db = _db(tmp_path)
    model = ScriptedModel(
        [
            tools(call("delegate", {"instruction": "make a file"}, id="d1")),
            tools(call("bash", {"command": "echo child > child.txt"}, id="cb")),
            text("child done"),
            text("parent done"),
        ]
    )
    asked: list[str] = []
    session = Session(_agent(tmp_path, db), model=model)

    def approve(tool_name: str, args: Mapping[str, Any]) -> bool:
        asked.append(tool_name)
        return True

    session.approval_callback = approve
    result = await session.run("delegate it")
    assert result.status == "completed", result.error
    assert asked == ["bash"]  # delegate itself is not asked; the child's bash is
    assert (tmp_path / "child.txt").read_text() == "child\n"


def test_the_prompt_tells_the_model_what_granular_asks() -> None:
    from rho_entry.config.prompts.facts import profile_facts

    said = profile_facts(NEW)["capabilities"]
    assert "Calls that can change things" in said  # as the dangerous developer was told
    assert "So does" not in said  # bash, write and edit ask on every call anyway
    custom = attrs.evolve(NEW, approval_required_tools=frozenset({"bash", "read"}))
    assert "So does every call to read." in profile_facts(custom)["capabilities"]
