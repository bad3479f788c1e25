"""A newcomer's wrong calls to the library, each refused at once with what to fix.

Before: ``session.run(123)`` recorded 123 as a user message, the run ended ``error`` on
"TypeError: object of type 'int' has no len()", and so did every later run of that session,
``run("hi")`` included (one wrong call broke the conversation for good); ``max_turns="3"``
ended the run on "'>=' not supported between instances of 'int' and 'str'".
``Session(AgentConfig(...))`` said "'AgentConfig' object has no attribute 'config'" and
``Agent({...})`` "'dict' object has no attribute 'hooks'". ``Session(agent, model="gpt-5")``
was accepted and every run ended ``error`` on "'str' object has no attribute 'stream'";
``executor="/srv"`` "completed" runs whose every tool call failed."""

from __future__ import annotations

from pathlib import Path

import pytest

from rho_adapters.fakes import FakeClock, MemoryExecutor, ScriptedModel, text
from rho_domain.errors import ConfigError
from rho_entry import Agent, AgentConfig, RunStatus, Session


async def test_a_wrong_prompt_or_max_turns_is_refused_and_the_session_goes_on() -> None:
    session = Session(
        Agent(AgentConfig()),
        model=ScriptedModel([text("hi")]),
        executor=MemoryExecutor(),
        clock=FakeClock(),
    )
    wrong = [
        ({"prompt": 123}, TypeError, r"prompt must be a str .* not int 123"),
        ({"prompt": ["a"]}, TypeError, r"prompt must be a str .* not list"),
        ({"prompt": "x", "max_turns": "3"}, TypeError, r"max_turns must be a whole number"),
        ({"prompt": "x", "max_turns": True}, TypeError, r"max_turns .* not bool"),
        ({"prompt": "x", "max_turns": -1}, ValueError, r"max_turns must be >= 0 .* not -1"),
    ]
    for kwargs, kind, message in wrong:
        with pytest.raises(kind, match=message):
            await session.run(**kwargs)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="prompt must be a str"):
        async for _ in session.stream(b"x"):  # type: ignore[arg-type]
            pass
    result = await session.run("hello")  # nothing of the wrong calls was recorded
    assert (result.status, result.text, result.error) == (RunStatus.COMPLETED, "hi", None)
    assert [m.content for m in session.state.messages if m.role == "user"] == ["hello"]
    await session.close()


def test_a_config_or_a_dict_where_an_agent_belongs_says_how_to_build_one() -> None:
    config = AgentConfig()
    with pytest.raises(TypeError, match=r"not AgentConfig: wrap the config: Session\(Agent"):
        Session(config)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"not dict: build one"):
        Session({"model": "m"})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"Agent\(config\): give an AgentConfig .*from_file"):
        Agent({"model": "m"})  # type: ignore[arg-type]


def test_a_port_given_as_a_name_says_where_the_name_goes() -> None:
    agent = Agent(AgentConfig(model="m"))
    wrong = [
        ({"model": "gpt-5-mini"}, r"model=.*not a ChatModel .*AgentConfig\(model=\.\.\.\)"),
        ({"executor": "/srv"}, r"executor=.*not an Executor .*AgentConfig\(working_dir="),
        ({"store": 123}, r"store=.*not a SessionStore .*a URL or a directory"),
        ({"approver": True}, r"approver=.*not an Approver .*approval_callback="),
        ({"databases": {"a": "sqlite:///x"}}, r"databases\['a'\]=.*not a Database"),
        ({"databases": "x"}, r"databases=.*mapping of alias -> Database"),
    ]
    for kwargs, message in wrong:
        with pytest.raises(TypeError, match=message):
            Session(agent, **kwargs)  # type: ignore[arg-type]


def test_a_working_dir_that_is_not_a_directory_names_the_setting(tmp_path: Path) -> None:
    """Before: ``ExecutorError: working directory '.../notes.txt' does not exist`` for a file
    that exists, naming no setting."""
    (tmp_path / "notes.txt").write_text("x")
    for given, state in (("notes.txt", "is not a directory"), ("gone", "does not exist")):
        config = AgentConfig(model="m", working_dir=str(tmp_path / given))
        with pytest.raises(ConfigError, match=rf"^AgentConfig\.working_dir: .*{given}.* {state}"):
            Session(Agent(config), model=ScriptedModel([text("hi")]))


def test_help_of_session_says_what_run_raises_and_that_run_sync_closes() -> None:
    """Before: ``help(rho_agent.Session)`` showed ``run`` as a pointer to the domain's method
    and ``run_sync`` without saying it closes the session after each call."""
    import pydoc

    import rho_agent

    plain = pydoc.plaintext  # type: ignore[attr-defined]  # a module global typeshed omits
    shown = pydoc.render_doc(rho_agent.Session, renderer=plain).replace("|", " ")
    words = " ".join(shown.split())
    assert "Model, tool and store failures end the run ``error`` (not raised)" in words
    assert "``ValueError`` for a prompt, ``max_turns`` or ``on_event`` of the wrong kind" in words
    assert "closes the session after it" in words


async def test_a_listener_tools_or_hooks_of_the_wrong_kind_name_the_keyword() -> None:
    """Before: ``on_event=3`` (to ``Session`` or ``run``) was accepted; the first event called
    it, a warning said the listener failed, and the run went on without the listener meant.
    ``Agent(config, tools=["bash"])`` (or ``tools="bash"``) raised ``AttributeError: 'str'
    object has no attribute 'name'`` and ``hooks=3`` ``'int' object has no attribute ...``."""
    config = AgentConfig(model="m")
    with pytest.raises(TypeError, match=r"^Session\(\.\.\.\): on_event must be a function .*int 3"):
        Session(Agent(config), model=ScriptedModel([text("hi")]), on_event=3)  # type: ignore[arg-type]
    session = Session(Agent(config), model=ScriptedModel([text("hi")]), executor=MemoryExecutor())
    with pytest.raises(TypeError, match=r"^Session\.run: on_event must be a function .*str 'log'"):
        await session.run("x", on_event="log")  # type: ignore[arg-type]
    result = await session.run("hello")  # the refused call recorded nothing
    assert [m.content for m in session.state.messages if m.role == "user"] == ["hello"]
    assert result.text == "hi"
    await session.close()
    wrong = [
        ({"tools": ["bash"]}, r"tools=\.\.\.\): str 'bash' is not a tool handler .*profile="),
        ({"tools": "bash"}, r"tools=\.\.\.\): give a list of tool handlers .*not str 'bash'"),
        ({"tools": 3}, r"tools=\.\.\.\): give a list of tool handlers .*not int 3"),
        ({"hooks": 3}, r"hooks=\.\.\.\): give a rho_domain\.hooks\.Hooks .*not int 3"),
    ]
    for kwargs, message in wrong:
        with pytest.raises(TypeError, match=message):
            Agent(config, **kwargs)  # type: ignore[arg-type]


async def test_a_session_id_of_another_type_names_the_argument(tmp_path: Path) -> None:
    """Before: ``Session.resume(5, store=...)`` failed inside the file store on "'in
    <string>' requires string as left operand, not int", naming no argument; None likewise."""
    for wrong in (5, None):
        with pytest.raises(TypeError) as refused:
            await Session.resume(wrong, store=str(tmp_path))  # type: ignore[arg-type]
        assert str(refused.value) == (
            "Session.resume: session_id must be a str (an id, a prefix of one, latest or a "
            f"session directory), not {type(wrong).__name__} {wrong!r}; nothing was opened"
        )


def test_a_tool_whose_schema_cannot_be_read_or_sent_is_refused_naming_it() -> None:
    """Before: ``Agent(config, tools=[t])`` with a ``parameters`` property that raised let its
    exception out bare (a ``SystemExit`` there ended the process), and a schema holding a
    value JSON cannot (a set) was accepted, then ended every run at its first model call
    with "Object of type set is not JSON serializable", naming no tool."""
    from collections.abc import Mapping
    from typing import Any

    from rho_domain.tools.base import READ_ONLY, ToolHandler, ToolOutput, ToolPolicy

    class Mine(ToolHandler):
        name = "mine"
        description = "a tool of the caller's"
        schema: Any = None

        @property
        def parameters(self) -> Mapping[str, Any]:
            if isinstance(self.schema, BaseException):
                raise self.schema
            return self.schema  # type: ignore[no-any-return]

        def policy_for(self, arguments: Mapping[str, Any]) -> ToolPolicy:
            return READ_ONLY

        async def handle(self, arguments: Mapping[str, Any], ctx: Any) -> ToolOutput:
            return ToolOutput(content="ok")

    wrong = [
        (ValueError("no schema"), r"reading Mine\.parameters raised ValueError: no schema; "),
        (SystemExit(4), r"reading Mine\.parameters raised SystemExit: 4; "),
        ({"type": "object", "enum": {1}}, r"\(tool 'mine'\) is not JSON: Object of type set"),
        ({"type": "object", "maximum": float("nan")}, r"is not JSON: Out of range float"),
        (["type", "object"], r"\(tool 'mine'\) is a list; give a JSON Schema object"),
        # a known keyword's wrong value: before, accepted; "strin" then let every value
        # through, the others were skipped, and a model API refused every request
        (
            {"type": "object", "properties": {"p": {"type": "strin"}}},
            r"\(tool 'mine'\): its input schema's type at #/properties/p is a string \('strin'\)",
        ),
        ({"type": "object", "required": "x"}, r"required at # is a string \('x'\), not a list"),
        ({"type": "object", "properties": []}, r"properties at # is an empty list, not an object"),
        (
            {"type": "object", "properties": {"a": {"items": {"anyOf": [{"minimum": "5"}]}}}},
            r"minimum at #/properties/a/items/anyOf/0 is a string \('5'\), not a number",
        ),
        ({"type": "string"}, r"\(tool 'mine'\): has type 'string' at its top, not \"object\"$"),
        ({"anyOf": [{"type": "object"}]}, r"has anyOf at its top, which a model API refuses"),
    ]
    for schema, message in wrong:
        tool = Mine()
        tool.schema = schema
        with pytest.raises(ConfigError, match=r"^Agent\(tools=\.\.\.\): .*" + message):
            Agent(AgentConfig(model="m"), tools=[tool])
    # keywords rho-agent does not check are the provider's
    tool = Mine()
    tool.schema = {
        "type": "object",
        "properties": {"when": {"type": "string", "format": "date-time", "x-ui": [1]}},
        "patternProperties": {"^x-": {"type": "integer"}},
    }
    Agent(AgentConfig(model="m"), tools=[tool])


async def test_an_approval_callback_that_raises_is_named_by_the_callback() -> None:
    """Before: the run ended on the callback's bare "ValueError: pager down", naming neither
    the callback nor the call; the approver it is wrapped in is named by it now."""
    from collections.abc import Mapping
    from typing import Any

    from rho_adapters.fakes import call, tools
    from rho_domain.tools.base import DANGEROUS, ToolHandler, ToolOutput, ToolPolicy

    class Deploy(ToolHandler):
        name = "deploy"
        description = "deploys"
        parameters: Mapping[str, Any] = {"type": "object", "properties": {}}

        def policy_for(self, arguments: Mapping[str, Any]) -> ToolPolicy:
            return DANGEROUS

        async def handle(self, arguments: Mapping[str, Any], ctx: Any) -> ToolOutput:
            return ToolOutput(content="deployed")

    def ask_pager(tool_name: str, args: object) -> bool:
        raise ValueError("pager down")

    session = Session(
        Agent(AgentConfig(profile="developer"), tools=[Deploy()]),
        model=ScriptedModel([tools(call("deploy", {}, id="c1")), text("done")]),
        executor=MemoryExecutor(),
        clock=FakeClock(),
        approval_callback=ask_pager,
    )
    result = await session.run("go")
    assert result.error is not None
    assert result.error.startswith(
        "ApproverFailed: the approver test_entry_wrong_calls.test_an_approval_callback_that_"
        "raises_is_named_by_the_callback.<locals>.ask_pager raised ValueError: pager down "
        "deciding on call c1 (deploy); "
    )
    await session.close()


def test_a_setting_or_label_of_another_type_names_the_setting() -> None:
    """Before: ``AgentConfig(profile=None)`` and ``working_dir=5`` ended ``Agent(...)`` on
    "expected str, bytes or os.PathLike object, not ...", a bytes ``system_prompt`` on
    "endswith first arg must be bytes", ``model=None`` was accepted, and
    ``Session(labels={"run": 7})`` failed on "object of type 'int' has no len()": none
    named the setting."""
    wrong: list[tuple[dict[str, object], str]] = [
        ({"profile": None}, r"^profile must be a profile's name .* not NoneType None"),
        ({"profile": object()}, r"^profile must be .*; not object <object"),
        ({"working_dir": 5}, r"^working_dir must be a directory's path .* not int 5"),
        ({"working_dir": "/srv/a\0b"}, r"^working_dir '/srv/a\\x00b' has a NUL character"),
        ({"system_prompt": b"x"}, r"^system_prompt must be a text \(str\), not bytes b'x'"),
        ({"model": None}, r"^model must be a text \(str\), not NoneType None"),
        ({"provider": 1}, r"^provider must be a text \(str\) or None, not int 1"),
    ]
    for kwargs, message in wrong:
        with pytest.raises(ConfigError, match=message):
            AgentConfig(**kwargs)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"^session labels: the label 'run': 7 is not text"):
        Session(Agent(AgentConfig()), labels={"run": 7}, model=ScriptedModel([]))  # type: ignore[dict-item]
