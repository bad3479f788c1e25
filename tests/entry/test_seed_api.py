"""The design documents' API beyond their code blocks: the event view on a real run, tools
written the documents' way inside a Session (approval, truncation, errors), the registry's own
workspace, State's mutators reaching the trace, ApprovalInterrupt, ModelClient's events."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

import rho_entry
from rho_adapters.fakes import MemoryExecutor, ScriptedModel, call, text, tools
from rho_adapters.fakes.loopback import LoopbackServer
from rho_adapters.fakes.wire import call as wire_call
from rho_adapters.fakes.wire import http_error, text_reply, tool_reply
from rho_agent import (
    Agent,
    AgentConfig,
    ApprovalInterrupt,
    ModelClient,
    PermissionProfile,
    Session,
    SessionStore,
    State,
    ToolFactory,
    ToolHandler,
    ToolInvocation,
    ToolOutput,
    ToolRegistry,
)
from rho_agent.tools.handlers import BashHandler, ReadHandler, WriteHandler
from rho_domain import events as ev
from rho_domain.messages import ToolResultMessage, UserMessage


class Shout(ToolHandler):
    """A tool written as the documents show: properties, ``requires_approval``, ``handle``."""

    def __init__(self, *, approval: bool = False, size: int = 0) -> None:
        self.calls: list[ToolInvocation] = []
        self.approval = approval
        self.size = size

    @property
    def name(self) -> str:
        return "shout"

    @property
    def description(self) -> str:
        return "Say a word loudly."

    @property
    def parameters(self) -> Mapping[str, Any]:
        return {
            "type": "object",
            "properties": {"word": {"type": "string"}, "times": {"type": "integer"}},
            "required": ["word"],
        }

    @property
    def requires_approval(self) -> bool:
        return self.approval

    async def handle(self, invocation: ToolInvocation) -> ToolOutput:
        self.calls.append(invocation)
        word = str(invocation.arguments["word"])
        if word == "boom":
            raise RuntimeError("the shout tool broke")
        if word == "":
            return ToolOutput(content="nothing to shout", success=False)
        times = int(invocation.arguments.get("times", 1))
        return ToolOutput(content=(word.upper() + "!") * times + "x" * self.size, metadata={"n": 1})


def developer(tmp_path: Path, **config: Any) -> AgentConfig:
    return AgentConfig(profile="developer", working_dir=str(tmp_path), **config)


# -- the event view ------------------------------------------------------------------------


async def test_every_event_of_a_run_answers_the_documents_view(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    model = ScriptedModel(
        [tools(call("read", {"path": "a.txt"}, id="r1")), text("It says alpha.", input_tokens=9)]
    )
    seen: list[Any] = []
    session = Session(Agent(AgentConfig(working_dir=str(tmp_path))), model=model)
    result = await session.run("read a.txt", on_event=seen.append)
    kinds = [e.type for e in seen]
    assert "".join(e.content for e in seen if e.type == "text") == "It says alpha."
    start = next(e for e in seen if e.type == "tool_start")
    assert (start.tool_name, start.tool_args) == ("read", {"path": "a.txt"})
    end = next(e for e in seen if e.type == "tool_end")
    assert end.tool_name == "read"
    assert "alpha" in end.tool_result
    assert end.tool_metadata is not None
    # the reference implementation's AgentEvent.tool_call_id pairs a call's start and end
    # (before: AttributeError on every event)
    assert start.tool_call_id == end.tool_call_id == "r1"
    assert {e.tool_call_id for e in seen if e.type not in ("tool_start", "tool_end")} <= {
        None,
        "r1",
    }
    run_end = seen[-1]
    assert (run_end.type, run_end.content, run_end.usage) == ("run_end", result.text, result.usage)
    assert "turn_complete" in run_end.seed_types
    assert all("api_call_complete" in e.seed_types for e in seen if e.type == "llm_end")
    assert kinds[0] == "run_start"
    assert seen[0].content == "read a.txt"
    assert {"message", "llm_start", "llm_end", "usage"} <= set(kinds)
    for event in seen:  # the view never invents a tool on an event without one
        if event.type not in ("tool_start", "tool_end", "tool_call_delta"):
            assert event.tool_args is None or event.type == "tool_blocked"


async def test_a_compaction_is_announced_before_the_summary_is_asked_for(tmp_path: Path) -> None:
    long = "x" * 4_000
    model = ScriptedModel(
        [text("first " + long), text("second " + long), text("Summary: two long answers.")]
    )
    session = Session(Agent(AgentConfig(working_dir=str(tmp_path))), model=model)
    await session.run("one")
    await session.run("two")
    seen: list[Any] = []
    session.journal.listeners.append(seen.append)
    result = await session.compact(custom_instructions="keep it short")
    assert result.compacted
    assert [e.type for e in seen if e.type.startswith("compact")] == ["compact_start", "compact"]
    start = next(e for e in seen if e.type == "compact_start")
    assert (start.content, start.tokens_before) == ("manual", result.tokens_before)
    assert "compact_end" in seen[-1].seed_types


def test_events_without_a_run_map_to_the_documents_names() -> None:
    cancelled = ev.Interrupted(at=0, reason="cancelled", detail="before model call")
    assert cancelled.type == "interruption"
    assert cancelled.seed_types == {"interruption", "cancelled"}
    assert cancelled.content == "cancelled before model call"
    paused = ev.Interrupted(at=0, reason="paused")
    assert "cancelled" not in paused.seed_types
    compacted = ev.Compacted(
        at=0,
        trigger="auto",
        summary="s",
        tokens_before=900,
        tokens_after=120,
        replaced_count=4,
        messages=(),
    )
    assert compacted.seed_types == {"compact", "compact_end"}
    assert compacted.content == "Compacted: 900 -> 120 tokens"
    error = ev.ErrorOccurred(at=0, error_type="ModelTimeout", message="no chunk in 60 s")
    assert (error.type, error.content) == ("error", "no chunk in 60 s")
    trace = ev.TraceNoted(at=0, name="parse_error", message="skipped {x", detail="{x")
    assert (trace.type, trace.content, trace.tool_name) == ("trace", "skipped {x", None)
    delta = ev.ToolCallDelta(at=0, index=0, call_id="c", name="grep", arguments_delta='{"p')
    assert (delta.tool_name, delta.content) == ("grep", '{"p')
    bad = ev.ToolBlocked(at=0, call=call("bash", "{not json"), by="user", reason="no")
    assert (bad.tool_name, bad.tool_args, bad.content) == ("bash", {}, "no")
    assert (bad.tool_call_id, delta.tool_call_id, cancelled.tool_call_id) == (
        bad.call.id,
        "c",
        None,
    )
    assert (
        ev.ToolCallDelta(at=0, index=0, call_id="", name="", arguments_delta="").tool_call_id
        is None
    )
    assert not hasattr(bad, "__dict__")  # the view adds no per-event storage (slots kept)


# -- tools written the documents' way, inside a Session -------------------------------------


async def test_a_documents_handler_runs_in_a_session_like_a_built_in(tmp_path: Path) -> None:
    shout = Shout()
    model = ScriptedModel([tools(call("shout", {"word": "hi", "times": "2"})), text("done")])
    session = Session(Agent(developer(tmp_path), tools=[shout]), model=model)
    seen: list[Any] = []
    result = await session.run("shout", on_event=seen.append)
    assert result.status == "completed"
    assert shout.calls[0].arguments == {"word": "hi", "times": 2}  # coerced like a built-in
    end = next(e for e in seen if e.type == "tool_end")
    assert (end.tool_result, end.tool_metadata) == ("HI!HI!", {"n": 1})
    assert "shout" in [s.name for s in model.requests[0].tools]


def test_two_tools_given_with_one_name_are_refused_naming_it(tmp_path: Path) -> None:
    # The registry keeps a name once: the first "shout" was silently dropped, and the model
    # saw (and called) only the second. One replacing a built-in ("read") is meant.
    from rho_domain.errors import ConfigError

    with pytest.raises(ConfigError) as refused:
        Agent(developer(tmp_path), tools=[Shout(), Shout(size=5)])
    assert str(refused.value) == (
        "Agent(tools=...): two tools are named 'shout' (Shout and Shout); the model calls a "
        "tool by its name, so each name may be given once: rename one"
    )
    own_read = ReadHandler()
    assert Agent(developer(tmp_path), tools=[Shout(), own_read]).registry.names.count("read") == 1


async def test_requires_approval_goes_through_the_profiles_approval(tmp_path: Path) -> None:
    shout = Shout(approval=True)
    model = ScriptedModel([tools(call("shout", {"word": "hi"}, id="s1")), text("ok")])
    session = Session(Agent(developer(tmp_path), tools=[shout]), model=model)
    with pytest.raises(ApprovalInterrupt) as waiting:
        await session.run("shout")
    assert shout.calls == []  # not run before an answer
    assert [p.call.id for p in waiting.value.pending] == ["s1"]
    session.resolve_approval("s1", approved=False)
    await session.run()
    assert shout.calls == []
    # the same tool in the eval profile (approval NONE) runs at once
    eval_session = Session(
        Agent(AgentConfig(profile="eval", working_dir=str(tmp_path)), tools=[shout]),
        model=ScriptedModel([tools(call("shout", {"word": "hi"})), text("ok")]),
    )
    assert (await eval_session.run("shout")).status == "completed"
    assert len(shout.calls) == 1


async def test_a_documents_handler_is_truncated_and_its_failures_are_results(
    tmp_path: Path,
) -> None:
    shout = Shout(size=5_000)
    model = ScriptedModel(
        [
            tools(
                call("shout", {"word": "a"}, id="big"),
                call("shout", {"word": "boom"}, id="crash"),
                call("shout", {"word": ""}, id="fail"),
            ),
            text("done"),
        ]
    )
    session = Session(
        Agent(developer(tmp_path, tool_output_limit=1_000), tools=[shout]), model=model
    )
    seen: list[Any] = []
    assert (await session.run("go", on_event=seen.append)).status == "completed"
    ends = {e.call_id: e for e in seen if e.type == "tool_end"}
    assert len(ends["big"].tool_result) < 1_300
    assert "cut from the middle" in ends["big"].tool_result
    assert ends["crash"].is_error
    assert "the shout tool broke" in ends["crash"].tool_result
    assert (ends["fail"].is_error, ends["fail"].tool_result) == (True, "nothing to shout")


def test_an_agents_registry_does_not_change_after_it_is_built(tmp_path: Path) -> None:
    registry = ToolRegistry()
    registry.register(ReadHandler())
    agent = Agent(AgentConfig(working_dir=str(tmp_path)), registry=registry)
    registry.register(Shout())
    assert agent.registry.names == ("read",)
    assert registry.names == ("read", "shout")


# -- the registry's own workspace ------------------------------------------------------------


async def test_a_registry_without_a_profile_is_readonly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "keep.txt").write_text("kept\n")
    registry = ToolRegistry()
    registry.register(BashHandler(restricted=False))  # asks for any command...
    registry.register(WriteHandler())
    try:
        shell = await registry.dispatch(
            ToolInvocation("c1", "bash", {"command": "echo owned > pwned.txt; rm keep.txt"})
        )
        write = await registry.dispatch(
            ToolInvocation("c2", "write", {"path": "pwned.txt", "content": "x"})
        )
    finally:
        await registry.aclose()
    assert not shell.success
    assert "shell commands are not allowed" in shell.content
    assert not write.success
    assert not (tmp_path / "pwned.txt").exists()  # ...but the workspace is readonly's
    assert (tmp_path / "keep.txt").read_text() == "kept\n"


async def test_the_restricted_bash_handler_refuses_a_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    registry = ToolFactory(PermissionProfile.readonly()).create_registry(working_dir=str(tmp_path))
    try:
        listed = await registry.dispatch(ToolInvocation("c1", "bash", {"command": "ls"}))
        tee = await registry.dispatch(
            ToolInvocation("c2", "bash", {"command": "echo x | tee out.txt"})
        )
        unknown = await registry.dispatch(ToolInvocation("c3", "write", {"path": "o"}))
    finally:
        await registry.aclose()
    assert listed.success
    assert not tee.success
    assert not (tmp_path / "out.txt").exists()
    assert not unknown.success
    assert "Unknown tool 'write'" in unknown.content


def test_the_factory_follows_the_profile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RHO_AGENT_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("RHO_AGENT_DB_CONFIG", raising=False)
    readonly = ToolFactory(PermissionProfile.readonly()).create_registry()
    assert "write" not in readonly
    assert "edit" not in readonly
    evaluation = ToolFactory(PermissionProfile.eval()).create_registry()
    assert {"write", "edit"} <= set(evaluation.names)
    specs = readonly.get_specs()
    assert [s["function"]["name"] for s in specs] == sorted(readonly.names)
    assert all(s["type"] == "function" and "parameters" in s["function"] for s in specs)


# -- State's mutators ------------------------------------------------------------------------


async def test_a_state_written_by_hand_is_sent_and_persisted(tmp_path: Path) -> None:
    state = State()
    state.add_user_message("What is in a.txt?")
    state.add_assistant_tool_calls(
        [{"id": "r1", "function": {"name": "read", "arguments": '{"path": "a.txt"}'}}]
    )
    state.add_tool_results([{"tool_call_id": "r1", "content": "alpha"}])
    state.add_assistant_message("It says alpha.")
    assert state.openai_messages == [
        {"role": "user", "content": "What is in a.txt?"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "r1",
                    "type": "function",
                    "function": {"name": "read", "arguments": '{"path": "a.txt"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "r1", "content": "alpha"},
        {"role": "assistant", "content": "It says alpha."},
    ]
    assert state.estimate_tokens() > 0
    result_message = state.messages[2]
    assert isinstance(result_message, ToolResultMessage)
    assert result_message.tool_name == "read"  # looked up from the call
    store = SessionStore(tmp_path / "sessions")
    model = ScriptedModel([text("Still alpha.", input_tokens=40, output_tokens=3)])
    session = store.create_session(
        Agent(AgentConfig(working_dir=str(tmp_path))), state=state, model=model
    )
    await session.run("And now?")
    await session.close()
    assert len(model.requests[0].messages) == 5  # the four written by hand, then the prompt
    restored = State.from_jsonl(store.session_dir(session.id) / "trace.jsonl")
    assert restored.openai_messages[:4] == state.openai_messages[:4]
    assert (restored.total_input_tokens, restored.total_output_tokens) == (40, 3)


async def test_writing_on_a_sessions_own_state_reaches_its_trace(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "sessions")
    model = ScriptedModel([text("one"), text("two")])
    session = store.create_session(Agent(AgentConfig(working_dir=str(tmp_path))), model=model)
    await session.run("first")
    assert isinstance(session.state, State)
    session.state.add_user_message("A note added by hand.")
    session.state.add_assistant_message("Noted.")
    await session.run("second")
    await session.close()
    sent = [m.content for m in model.requests[1].messages if isinstance(m, UserMessage)]
    assert sent == ["first", "A note added by hand.", "second"]
    restored = State.from_jsonl(store.session_dir(session.id) / "trace.jsonl")
    assert restored.openai_messages == session.state.openai_messages


def test_replace_with_summary_keeps_the_recent_requests() -> None:
    state = State()
    for n in range(3):
        state.add_user_message(f"question {n} " + "x" * 400)
        state.add_assistant_message("answer " + "y" * 400)
    before = state.estimate_tokens()
    state.replace_with_summary("Three questions answered.", ["question 2"])
    assert [m["content"].split("]")[-1].strip() for m in state.openai_messages] == [
        "Three questions answered.",
        "question 2",
    ]
    assert state.estimate_tokens() < before
    assert state.compactions == 1


# -- ApprovalInterrupt, as the documents show it ---------------------------------------------


async def test_approval_interrupt_with_the_real_workspace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RHO_AGENT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    work = tmp_path / "work"
    work.mkdir()
    write = wire_call("write", {"path": "report.md", "content": "# Report\n"}, "w1")
    with LoopbackServer([tool_reply(write), text_reply("Written.")]) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        session = Session(Agent(AgentConfig(profile="developer", working_dir=str(work))))
        waiting: ApprovalInterrupt | None = None
        try:
            await session.run(prompt="Write the report.")
        except ApprovalInterrupt as exc:  # the documents' out-of-band handling
            waiting = exc
            written_before_answer = (work / "report.md").exists()
            for pending in exc.pending:
                session.resolve_approval(pending.call.id, approved=True)
        result = await session.run()
        await session.close()
    assert waiting is not None
    assert not written_before_answer
    assert [(p.call.name, p.call.id) for p in waiting.pending] == [("write", "w1")]
    assert waiting.result is not None
    assert waiting.result.status == "awaiting_approval"
    assert (result.status, result.text) == ("completed", "Written.")
    assert (work / "report.md").read_text() == "# Report\n"


async def test_streaming_a_run_that_waits_ends_with_the_interrupt(tmp_path: Path) -> None:
    model = ScriptedModel([tools(call("write", {"path": "n.md", "content": "x"}, id="w1"))])
    executor = MemoryExecutor()
    session = Session(Agent(developer(tmp_path)), model=model, executor=executor)
    kinds: list[str] = []

    async def follow() -> None:
        async for event in session.stream("write n.md"):
            kinds.append(event.type)

    with pytest.raises(ApprovalInterrupt) as waiting:
        await follow()
    assert kinds[-1] == "run_end"  # every event came first, the run's end included
    assert "approval_requested" in kinds
    assert [p.call.id for p in waiting.value.pending] == ["w1"]
    assert executor.files == {}


async def test_the_runtime_keeps_its_own_approval_flow(tmp_path: Path) -> None:
    model = ScriptedModel([tools(call("write", {"path": "n.md", "content": "x"}, id="w1"))])
    runtime = rho_entry.create_runtime(developer(tmp_path), model=model, executor=MemoryExecutor())
    await rho_entry.start_runtime(runtime)
    try:
        result = await rho_entry.run_prompt(runtime, "write n.md")
    finally:
        await rho_entry.close_runtime(runtime, deadline=5)
    assert result.status == "awaiting_approval"  # a handle answers it; nothing is raised


# -- ModelClient -----------------------------------------------------------------------------


async def test_model_client_streams_the_documents_events(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RHO_AGENT_HOME", str(tmp_path / "home"))
    replies = [
        text_reply("Hello there", usage=(12, 2)),
        tool_reply(wire_call("read", {"path": "a.txt"}, "c1")),
        http_error(400, "bad request: the model does not exist"),
    ]
    with LoopbackServer(replies) as server:
        client = ModelClient(
            model="gpt-5-mini", base_url=server.base_url, api_key="sk-x", service_tier="flex"
        )
        first = [e async for e in client.stream([{"role": "user", "content": "Hi"}])]
        spec = ToolFactory(PermissionProfile.readonly()).create_registry().get_specs()
        second = [
            e
            async for e in client.stream(
                [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Read"}],
                tools=spec,
            )
        ]
        third = [e async for e in client.stream([{"role": "user", "content": "again"}])]
        await client.aclose()
    assert "".join(e.content for e in first if e.type == "text") == "Hello there"
    assert first[-1].type == "done"
    assert first[-1].usage is not None
    assert (first[-1].usage.input_tokens, first[-1].usage.output_tokens) == (12, 2)
    calls = [e.tool_call for e in second if e.type == "tool_call"]
    assert [(c.name, c.arguments) for c in calls if c] == [("read", '{"path": "a.txt"}')]
    assert server.requests[1]["messages"][0] == {"role": "system", "content": "Be brief."}
    assert {t["function"]["name"] for t in server.requests[1]["tools"]} >= {"read", "bash"}
    assert [e.type for e in third] == ["error"]
    assert "the model does not exist" in third[0].content


# -- the documents' module paths ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("module", "name", "source"),
    [
        ("rho_agent.core.agent", "Agent", "rho_entry.facade"),
        ("rho_agent.core.session", "Session", "rho_entry.facade"),
        ("rho_agent.core.session", "ApprovalInterrupt", "rho_domain.ports.approver"),
        ("rho_agent.core.state", "State", "rho_entry.seed_api.state"),
        ("rho_agent.core.config", "AgentConfig", "rho_entry.facade"),
        ("rho_agent.core.session_store", "SessionStore", "rho_entry.stored"),
        ("rho_agent.permissions", "PermissionProfile", "rho_domain.permissions"),
        ("rho_agent.permissions", "ApprovalMode", "rho_domain.permissions"),
        ("rho_agent.permissions.factory", "ToolFactory", "rho_entry.seed_api.handlers"),
        ("rho_agent.capabilities", "ToolFactory", "rho_entry.seed_api.handlers"),
        ("rho_agent.tools.base", "ToolHandler", "rho_entry.seed_api.tools"),
        ("rho_agent.tools.registry", "ToolRegistry", "rho_entry.seed_api.tools"),
        ("rho_agent.tools.handlers", "ReadHandler", "rho_domain.tools.read"),
        ("rho_agent.client.model", "ModelClient", "rho_entry.seed_api.model_client"),
        ("rho_agent.runtime", "create_runtime", "rho_entry.runtime"),
        ("rho_agent.cli", "main", "rho_entry.cli"),
    ],
)
def test_the_documents_module_paths_hand_the_same_objects(
    module: str, name: str, source: str
) -> None:
    import importlib

    assert getattr(importlib.import_module(module), name) is getattr(
        importlib.import_module(source), name
    )


def test_seed_000s_capabilities_are_the_permissions() -> None:
    import rho_agent.capabilities

    assert rho_agent.capabilities.CapabilityProfile is PermissionProfile


class Blocking(Shout):
    """A documents' tool whose ``handle`` is sync and blocks (a request without a timeout):
    it waits for ``release`` (set by the test at its end; 30 s bound against a hang)."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()
        self.threads: list[str] = []

    def handle(self, invocation: ToolInvocation) -> ToolOutput:  # type: ignore[override]
        self.threads.append(threading.current_thread().name)
        self.release.wait(30)
        return ToolOutput(content="late")


async def test_a_sync_tool_that_blocks_is_bounded_by_its_timeout(tmp_path: Path) -> None:
    """Before, a sync ``handle`` ran on the event loop: blocked, it held the tool's timeout,
    ``cancel()`` and the time budget with it, and the run waited for it to return."""
    blocking = Blocking()
    model = ScriptedModel([tools(call("shout", {"word": "hi"}, id="b")), text("done")])
    config = AgentConfig(profile="eval", working_dir=str(tmp_path), tool_timeout=0.2)
    session = Session(Agent(config, tools=[blocking]), model=model)
    seen: list[Any] = []
    try:
        result = await session.run("go", on_event=seen.append)
    finally:
        blocking.release.set()
    assert (result.status, blocking.threads) == ("completed", ["rho-tool shout"])
    (end,) = [e for e in seen if e.type == "tool_end"]
    assert end.is_error
    assert end.tool_result.startswith("Tool 'shout' timed out after 0.2 s and was stopped")
