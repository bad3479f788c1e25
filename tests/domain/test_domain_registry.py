"""The registry: specs, coercion, and every error-to-result path; truncation."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import pytest
from domain_support import BrokenTool, EchoTool, SlowTool

from rho_adapters.fakes import FakeClock, MemoryExecutor
from rho_domain.errors import PathOutsideWorkspace, ToolArgumentsError
from rho_domain.messages import ToolCall
from rho_domain.permissions import builtin_profile
from rho_domain.tools.base import READ_ONLY, ToolContext, ToolHandler, ToolOutput, ToolPolicy
from rho_domain.tools.registry import ToolRegistry
from rho_domain.tools.schema import coerce_and_validate
from rho_domain.tools.truncation import truncate_middle, unicode_text


def ctx() -> ToolContext:
    return ToolContext(
        session_id="s",
        call_id="c",
        executor=MemoryExecutor(),
        profile=builtin_profile("readonly"),
        clock=FakeClock(),
    )


async def dispatch(registry: ToolRegistry, name: str, arguments: str, **kw: Any) -> ToolOutput:
    return await registry.dispatch(ToolCall(id="c", name=name, arguments=arguments), ctx(), **kw)


def test_specs_are_sorted_for_a_stable_prompt_prefix() -> None:
    registry = ToolRegistry([SlowTool(), EchoTool(), BrokenTool()])
    assert [s.name for s in registry.specs()] == ["broken", "echo", "slow"]
    assert registry.specs()[1].to_openai()["function"]["parameters"]["required"] == ["text"]
    assert "slow" not in registry.without("slow")


def test_a_custom_schema_is_sent_with_a_top_type_and_every_arrays_items() -> None:
    """probecorners24b: a custom tool's schema without a top ``type`` (pydantic's
    ``model_json_schema()`` of a recursive model: ``$defs`` and a ``$ref``) or with a bare
    ``"type": "array"`` passed ``Agent(tools=[...])``'s check and was sent as given, and
    OpenAI refuses every request carrying either ("schema must be a JSON Schema of 'type:
    "object"', got 'type: "None"'", "array schema missing items"); MCP tools were
    already sent repaired. The handler's own schema stays as given."""
    node = {"type": "object", "properties": {"tags": {"type": "array"}}}
    recursive = {"$defs": {"Node": node}, "$ref": "#/$defs/Node"}

    class Tree(EchoTool):
        name = "tree"
        parameters: Mapping[str, Any] = recursive

    sent = ToolRegistry([Tree(), EchoTool()]).specs()
    tags = {"type": "array", "items": {}}
    assert sent[1].parameters == {
        "type": "object",
        "$defs": {"Node": {"type": "object", "properties": {"tags": tags}}},
        "$ref": "#/$defs/Node",
    }
    assert sent[0].parameters is EchoTool.parameters  # nothing to add: not copied
    assert Tree.parameters == {"$defs": {"Node": node}, "$ref": "#/$defs/Node"}
    assert node == {"type": "object", "properties": {"tags": {"type": "array"}}}


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ({"text": "a", "times": "3"}, {"text": "a", "times": 3}),
        ({"text": "a", "loud": "true"}, {"text": "a", "loud": True}),
        ({"text": "a", "loud": "False"}, {"text": "a", "loud": False}),
        ({"text": "a", "times": 2.0}, {"text": "a", "times": 2}),
        ({"text": "a", "tags": '["x", "y"]'}, {"text": "a", "tags": ["x", "y"]}),
        ({"text": "a", "times": None}, {"text": "a"}),
    ],
)
def test_coercion_repairs_what_models_get_wrong(raw: dict, expected: dict) -> None:  # type: ignore[type-arg]
    assert coerce_and_validate(raw, EchoTool.parameters) == expected


def test_validation_reports_every_problem_with_its_path() -> None:
    with pytest.raises(ToolArgumentsError) as info:
        coerce_and_validate({"times": "many", "colour": "red", "tags": [1]}, EchoTool.parameters)
    message = str(info.value)
    for fragment in (
        "arguments.text is required",
        "arguments.times must be integer",
        "arguments.colour is not a known parameter",
        "arguments.tags[0]",
    ):
        assert fragment in message


async def test_unknown_tool_names_the_available_ones() -> None:
    out = await dispatch(ToolRegistry([EchoTool()]), "ehco", "{}")
    assert out.is_error
    assert "Unknown tool 'ehco'" in out.content
    assert "echo" in out.content


async def test_invalid_json_arguments_are_reported_not_replaced_by_empty() -> None:
    echo = EchoTool()
    out = await dispatch(ToolRegistry([echo]), "echo", '{"text": "a"')
    assert out.is_error
    assert "not valid JSON" in out.content
    assert echo.calls == []
    not_object = await dispatch(ToolRegistry([echo]), "echo", "[1, 2]")
    assert "must be a JSON object" in not_object.content


async def test_schema_mismatch_is_a_result_the_model_can_fix() -> None:
    out = await dispatch(ToolRegistry([EchoTool()]), "echo", '{"times": 0}')
    assert out.is_error
    assert "text is required" in out.content
    assert ">= 1" in out.content


async def test_handler_exceptions_and_tool_errors_become_results() -> None:
    out = await dispatch(ToolRegistry([BrokenTool()]), "broken", "{}")
    assert out.is_error
    assert "ZeroDivisionError" in out.content

    class Escaping(EchoTool):
        async def handle(self, arguments: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
            raise PathOutsideWorkspace("../etc/passwd is outside the workspace")

    escaped = await dispatch(ToolRegistry([Escaping()]), "echo", '{"text": "a"}')
    assert escaped.is_error
    assert "outside the workspace" in escaped.content


async def test_timeout_becomes_a_result() -> None:
    out = await dispatch(ToolRegistry([SlowTool()]), "slow", "{}", timeout=0.01)
    assert out.is_error
    assert "timed out" in out.content


async def test_cancellation_propagates_through_dispatch() -> None:
    slow = SlowTool()
    task = asyncio.create_task(dispatch(ToolRegistry([slow]), "slow", "{}"))
    await slow.started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert slow.cancelled


async def test_output_over_the_limit_is_cut_head_and_tail_with_a_marker() -> None:
    class Big(EchoTool):
        async def handle(self, arguments: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
            return ToolOutput(content="HEAD" + "m\n" * 50_000 + "TAIL")

    out = await dispatch(ToolRegistry([Big()], output_limit=1_000), "echo", '{"text": "a"}')
    assert out.content.startswith("HEAD")
    assert out.content.endswith("TAIL")
    assert "characters" in out.content
    assert "cut from the middle" in out.content
    assert len(out.content) < 1_200


def test_truncation_leaves_short_text_alone_and_counts_what_it_cut() -> None:
    assert truncate_middle("short", 100) == "short"
    cut = truncate_middle("a" * 50 + "\n" * 10 + "b" * 50, 40)
    assert cut.startswith("a" * 20)
    assert cut.endswith("b" * 20)
    assert "70 characters (10 lines)" in cut


class PolicyByArgs(ToolHandler):
    name = "sql"
    description = "x"
    parameters: Mapping[str, Any] = {"type": "object", "properties": {"q": {"type": "string"}}}

    def policy_for(self, arguments: Mapping[str, Any]) -> ToolPolicy:
        return (
            READ_ONLY
            if arguments.get("q", "").startswith("select")
            else ToolPolicy(read_only=False, dangerous=True)
        )

    async def handle(self, arguments: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
        return ToolOutput(content="")


def test_policy_depends_on_the_call() -> None:
    registry = ToolRegistry([PolicyByArgs()])
    assert registry.policy_for(ToolCall(id="1", name="sql", arguments='{"q": "select 1"}')) == (
        READ_ONLY
    )
    dropping = registry.policy_for(ToolCall(id="2", name="sql", arguments='{"q": "drop"}'))
    assert dropping is not None
    assert dropping.dangerous
    assert registry.policy_for(ToolCall(id="3", name="nope", arguments="{}")) is None


@pytest.mark.parametrize(
    ("given", "kept"),
    [
        ("plain", "plain"),
        ("café ✓", "café ✓"),
        ("caf\udce9.txt", "caf\\xe9.txt"),  # a byte that is not UTF-8, as os.listdir gives it
        ("x \ud800 y", "x \\ud800 y"),  # a surrogate that stands for no byte
    ],
)
def test_tool_output_holds_no_lone_surrogate(given: str, kept: str) -> None:
    assert unicode_text(given) == kept
    kept.encode("utf-8")  # anything downstream can encode it
