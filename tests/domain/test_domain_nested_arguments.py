"""Tool-call arguments nested past what Python's json parses (100,000 ``[`` deep, legal
JSON) are a malformed call, answered to the model as such like any other arguments that do
not parse; json's RecursionError ended the run with an internal error before."""

from __future__ import annotations

import pytest
from domain_support import make_session

from rho_adapters.fakes.scripted_model import Turn, call
from rho_domain.answer_shape import parse
from rho_domain.errors import ConfigError
from rho_domain.json_schema import check_schema
from rho_domain.messages import ToolResultMessage
from rho_domain.run import RunStatus

DEEP = "[" * 100_000 + "]" * 100_000


async def test_arguments_nested_too_deep_are_answered_as_malformed_and_the_run_goes_on() -> None:
    deep = '{"text": ' + DEEP + "}"
    session = make_session([Turn(tool_calls=(call("echo", deep),)), Turn(text="done")])
    result = await session.run("hi")
    assert result.status is RunStatus.COMPLETED, result.error
    answers = [m for m in session.state.messages if isinstance(m, ToolResultMessage)]
    assert len(answers) == 1
    assert "nest" in answers[0].content


def test_a_final_answer_nested_too_deep_is_a_problem_of_its_shape() -> None:
    """The answer read against an output schema: the same nesting is a problem the model
    is told to correct, not an error of the run."""
    value, problem = parse(DEEP)
    assert value is None
    assert problem is not None
    assert "too deeply" in problem.message


def test_an_output_schema_nested_too_deep_is_refused_naming_the_field() -> None:
    schema: dict[str, object] = {"type": "string"}
    for _ in range(600):
        schema = {"type": "array", "items": schema}
    with pytest.raises(ConfigError, match=r"output_schema: the schema nests .* more than 100"):
        check_schema(schema)
    shallow: dict[str, object] = {"type": "string"}
    for _ in range(40):
        shallow = {"type": "array", "items": shallow}
    check_schema(shallow)  # 81 levels of objects and arrays: taken
