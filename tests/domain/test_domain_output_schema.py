"""Structured output (issue 29, item 2): the final answer is parsed and validated against
``output_schema``; one corrective retry with the problem, then status ``error`` naming the
failing path; ``RunResult.output`` holds the parsed value."""

from __future__ import annotations

import re
from typing import Any

import pytest
from domain_support import EchoTool, make_session

from rho_adapters.codec import decode_event_line, encode_event_line
from rho_adapters.fakes import MemorySessionStore, call, text, tools
from rho_domain import events as ev
from rho_domain.config import AgentConfig
from rho_domain.errors import ConfigError
from rho_domain.json_schema import check_schema, validate
from rho_domain.messages import UserMessage
from rho_domain.run import RunStatus

ORDER: dict[str, Any] = {
    "type": "object",
    "properties": {
        "customer": {"type": "string", "minLength": 1},
        "items": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "properties": {
                    "sku": {"type": "string", "pattern": "^[A-Z]{3}-\\d+$"},
                    "price": {"type": "number", "minimum": 0},
                },
                "required": ["sku", "price"],
                "additionalProperties": False,
            },
        },
        "status": {"enum": ["open", "paid"]},
    },
    "required": ["customer", "items", "status"],
}
GOOD = '{"customer": "Ada", "items": [{"sku": "ABC-1", "price": 2.5}], "status": "paid"}'
BAD_PRICE = (
    '{"customer": "Ada", "items": [{"sku": "ABC-1", "price": 2}, {"sku": "ABC-2", '
    '"price": "3"}], "status": "paid"}'
)


def _found(pattern: str, text: str) -> bool:
    """The patterns of these tests, run in-process (the loop runs a schema's in a worker)."""
    return re.search(pattern, text) is not None


def corrections(session: Any) -> list[UserMessage]:
    return [
        m for m in session.state.messages if isinstance(m, UserMessage) and m.origin == "correction"
    ]


async def test_a_matching_answer_is_parsed_into_the_result() -> None:
    session = make_session([tools(call("echo", {"text": "Ada"})), text(GOOD)], output_schema=ORDER)
    result = await session.run("the order as JSON")
    assert result.status is RunStatus.COMPLETED, result.error
    assert result.output == {
        "customer": "Ada",
        "items": [{"sku": "ABC-1", "price": 2.5}],
        "status": "paid",
    }
    request = session.model.requests[0]  # type: ignore[attr-defined]
    assert request.output_schema == ORDER
    assert "matches this JSON Schema" in request.system
    assert request.system.startswith("You are a test agent.")


async def test_a_fenced_json_answer_is_accepted() -> None:
    session = make_session([text(f"```json\n{GOOD}\n```")], output_schema=ORDER)
    result = await session.run("go")
    assert result.status is RunStatus.COMPLETED
    assert result.output["customer"] == "Ada"


async def test_one_correction_then_a_good_answer_completes() -> None:
    session = make_session([text("The order is paid."), text(GOOD)], output_schema=ORDER)
    result = await session.run("go")
    assert result.status is RunStatus.COMPLETED, result.error
    assert result.output["status"] == "paid"
    (correction,) = corrections(session)
    assert "$: the answer is not JSON" in correction.content
    retry = session.model.requests[1]  # type: ignore[attr-defined]
    assert retry.tool_choice == "none"  # the corrected answer is an answer, not a call
    assert retry.messages[-1] == correction


async def test_a_second_failure_ends_the_run_in_error_naming_the_path() -> None:
    session = make_session([text(BAD_PRICE), text(BAD_PRICE)], output_schema=ORDER)
    result = await session.run("go")
    assert result.status is RunStatus.ERROR
    assert result.error_type == "OutputInvalid"
    assert result.error is not None
    assert "$.items[1].price: expected number, got string" in result.error
    assert result.output is None
    assert len(corrections(session)) == 1
    assert "$.items[1].price" in corrections(session)[0].content


async def test_without_a_schema_nothing_is_parsed() -> None:
    session = make_session([text("plain words")])
    result = await session.run("go")
    assert result.status is RunStatus.COMPLETED
    assert result.output is None
    request = session.model.requests[0]  # type: ignore[attr-defined]
    assert request.output_schema is None
    assert request.system == "You are a test agent."


async def test_the_output_is_stored_with_the_run_end() -> None:
    store = MemorySessionStore()
    session = make_session([text(GOOD)], output_schema=ORDER, store=store)
    await session.run("go")
    lines = [encode_event_line(e) for e in store.events(session.id)]
    (end,) = [e for e in map(decode_event_line, lines) if isinstance(e, ev.RunEnded)]
    assert end.output["items"][0]["sku"] == "ABC-1"


async def test_a_sub_agent_answers_in_words_and_the_parent_in_the_schema() -> None:
    from rho_domain.tools.delegate import DelegateTool

    session = make_session(
        [
            tools(call("delegate", {"instruction": "find the order"})),
            text("Ada paid for ABC-1 at 2.5."),  # the child's report: not JSON, not corrected
            text(GOOD),
        ],
        tools=[EchoTool(), DelegateTool()],
        output_schema=ORDER,
    )
    result = await session.run("the order as JSON")
    assert result.status is RunStatus.COMPLETED, result.error
    assert result.output["customer"] == "Ada"
    child_request = session.model.requests[1]  # type: ignore[attr-defined]
    assert child_request.output_schema is None
    assert corrections(session) == []


def test_a_schema_keyword_that_is_not_checked_is_refused_at_configuration() -> None:
    with pytest.raises(ConfigError, match=r"'if' at #/properties/a is a JSON Schema keyword"):
        AgentConfig(output_schema={"type": "object", "properties": {"a": {"if": {}}}})
    with pytest.raises(ConfigError, match="names no definition"):
        AgentConfig(output_schema={"$ref": "#/$defs/missing"})
    with pytest.raises(ConfigError, match="required at # must be a list of property names"):
        AgentConfig(output_schema={"type": "object", "required": "a"})
    with pytest.raises(ConfigError, match="minimum at #/properties/n must be a finite number"):
        AgentConfig(output_schema={"properties": {"n": {"minimum": "3"}}})
    for word, bound in (("maximum", float("nan")), ("minimum", float("-inf"))):
        # no answer meets a NaN bound; a YAML `.nan` or the library's float('nan') took it
        with pytest.raises(ConfigError, match=f"{word} at # must be a finite number"):
            AgentConfig(output_schema={"type": "number", word: bound})
    assert AgentConfig(output_schema={"maximum": 10**400}).output_schema == {"maximum": 10**400}
    with pytest.raises(ConfigError, match="refers to itself"):
        AgentConfig(output_schema={"$defs": {"a": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"})
    with pytest.raises(ConfigError, match="must be a JSON Schema object"):
        AgentConfig(output_schema=True)  # type: ignore[arg-type]
    tree = {
        "$defs": {
            "node": {
                "type": "object",
                "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
            }
        },
        "$ref": "#/$defs/node",
    }  # a recursive schema through values is fine
    assert validate({"kids": [{"kids": []}, {"kids": [{"kids": "x"}]}]}, tree, _found) is not None
    assert validate({"kids": [{"kids": []}]}, tree, _found) is None
    with pytest.raises(ConfigError, match="give one"):
        make_session([], output_schema=ORDER, response_format={"type": "json_object"})
    assert make_session([], tools=[EchoTool()], output_schema=ORDER) is not None


# The validator agrees with jsonschema (the reference implementation, a dev dependency) on
# every case below: valid and invalid values for each keyword it checks.
CASES: list[tuple[dict[str, Any] | bool, list[Any]]] = [
    ({"type": "integer"}, [1, 1.0, 1.5, True, "1", None]),
    ({"type": ["string", "null"]}, ["a", None, 0]),
    ({"type": "number", "minimum": 0, "exclusiveMaximum": 10}, [0, 9.99, 10, -1, False]),
    ({"multipleOf": 0.5}, [1.5, 2, 1.2, "x"]),
    ({"enum": [1, "a", None]}, [1, 1.0, True, "a", None, "b"]),
    ({"const": {"a": [1]}}, [{"a": [1]}, {"a": [1.0]}, {"a": [2]}]),
    (
        {"type": "string", "minLength": 2, "maxLength": 3, "pattern": "^a"},
        ["ab", "a", "abcd", "ba"],
    ),
    (
        {"type": "array", "items": {"type": "integer"}, "minItems": 1, "maxItems": 2},
        [[1], [], [1, 2, 3], [1, "x"]],
    ),
    (
        {"type": "array", "prefixItems": [{"type": "string"}], "items": {"type": "number"}},
        [["a", 1], [1, 1], ["a", "b"]],
    ),
    ({"uniqueItems": True}, [[1, 2], [1, 1], [1, 1.0], [1, True], [{"a": 1}, {"a": 1.0}]]),
    (
        {
            "type": "object",
            "required": ["a"],
            "properties": {"a": {"type": "string"}},
            "additionalProperties": False,
        },
        [{"a": "x"}, {}, {"a": 1}, {"a": "x", "b": 1}],
    ),
    (
        {
            "type": "object",
            "additionalProperties": {"type": "integer"},
            "minProperties": 1,
            "maxProperties": 2,
        },
        [{"a": 1}, {}, {"a": "x"}, {"a": 1, "b": 2, "c": 3}],
    ),
    ({"anyOf": [{"type": "string"}, {"type": "integer"}]}, ["a", 1, 1.5]),
    ({"oneOf": [{"type": "number"}, {"type": "integer"}]}, [1.5, 1, "x"]),
    ({"allOf": [{"minimum": 1}, {"maximum": 3}]}, [2, 0, 4]),
    ({"not": {"type": "null"}}, [1, None]),
    (
        {
            "$defs": {"pos": {"type": "integer", "minimum": 1}},
            "type": "array",
            "items": {"$ref": "#/$defs/pos"},
        },
        [[1, 2], [0], ["a"]],
    ),
    (
        {
            "type": "object",
            "properties": {
                "n": {"type": "integer", "description": "d", "default": 1, "format": "int"}
            },
        },
        [{"n": 1}, {"n": "1"}],
    ),
    (True, [1, None]),
]


@pytest.mark.parametrize(("schema", "values"), CASES, ids=[str(i) for i in range(len(CASES))])
def test_the_validator_agrees_with_jsonschema(schema: Any, values: list[Any]) -> None:
    wrapped = {"items": schema} if isinstance(schema, bool) else schema
    check_schema(wrapped)
    import jsonschema  # here: each xdist worker collects this module, one runs it

    reference = jsonschema.Draft202012Validator(schema)
    for value in values:
        ours = validate([value] if isinstance(schema, bool) else value, wrapped, _found)
        assert (ours is None) == reference.is_valid(value), (schema, value, ours)
