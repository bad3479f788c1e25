"""An output schema's ``pattern`` keywords come from outside (a server client's request, a
config, a stored session): they run in a killable worker (the session's ``LineSearcher``),
never on the event loop. Before, ``json_schema`` ran ``re.search`` in the loop itself, and
``^(a+)+$`` against 30 ``a`` and a ``!`` held the loop (every session of a server) for
minutes."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import pytest
from domain_support import make_session

from rho_adapters.fakes import InlineLineSearcher, text
from rho_adapters.local.line_search import ProcessLineSearcher
from rho_domain.errors import ConfigError
from rho_domain.json_schema import check_schema, validate
from rho_domain.loop import output_check
from rho_domain.run import RunStatus

CATASTROPHIC = {"type": "string", "pattern": "^(a+)+$"}


async def test_a_backtracking_pattern_runs_off_the_loop_and_is_judged_not_matching(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(output_check, "PATTERN_SECONDS", 0.3)
    answer = text(json.dumps("a" * 30 + "!"))
    session = make_session([answer, answer], output_schema=CATASTROPHIC)
    session.line_searcher = ProcessLineSearcher()
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0)
            ticks += 1

    beside = asyncio.create_task(ticker())
    try:
        result = await session.run("go")
    finally:
        beside.cancel()
    assert result.status is RunStatus.ERROR
    assert result.error_type == "OutputInvalid"
    assert "patterns did not finish within 0.3 s" in (result.error or "")
    assert ticks > 10  # the loop ran other tasks while the pattern was judged


async def test_the_worker_judges_the_whole_text_and_a_match_completes() -> None:
    # a pattern across lines: found in the whole answer, not line by line
    schema = {"type": "object", "properties": {"a": {"type": "string", "pattern": "x\ny$"}}}
    session = make_session([text('{"a": "x\\ny"}')], output_schema=schema)
    session.line_searcher = ProcessLineSearcher()
    result = await session.run("go")
    assert result.status is RunStatus.COMPLETED, result.error
    assert result.output == {"a": "x\ny"}


async def test_a_session_without_a_searcher_refuses_to_judge_a_pattern() -> None:
    session = make_session([text('"abc"')], output_schema={"pattern": "^a"})
    session.line_searcher = None
    result = await session.run("go")
    assert result.status is RunStatus.ERROR
    assert "SessionPorts.line_searcher" in (result.error or "")


async def test_a_pattern_that_does_not_compile_ends_the_run_before_the_model_is_called() -> None:
    """A schema no server or runtime checked (a config file's, ``--output-schema``'s, a
    stored session's): its invalid pattern was reported at the first answer, after two model
    calls (the answer and its correction) for nothing. Now the run ends before the first,
    naming the pattern's place; a valid pattern still lets the run go on."""
    schema = {"properties": {"a": {"pattern": "(?<=a+)b"}}}
    for searcher in (InlineLineSearcher(), ProcessLineSearcher()):
        session = make_session([text('{"a": "ab"}'), text('{"a": "ab"}')], output_schema=schema)
        session.line_searcher = searcher
        result = await session.run("go")
        assert result.status is RunStatus.ERROR
        assert "the pattern at #/properties/a is not a valid regex" in (result.error or "")
        assert session.model.requests == []  # type: ignore[attr-defined]
    session = make_session([text('{"a": "ab"}')], output_schema={"pattern": "b"})
    session.line_searcher = InlineLineSearcher()
    assert (await session.run("go")).status is RunStatus.COMPLETED


def _found(pattern: str, texts: str) -> bool:
    return re.search(pattern, texts) is not None


JUDGED: list[tuple[dict[str, Any], list[Any]]] = [
    (
        {"anyOf": [{"pattern": "^x"}, {"pattern": "y$"}], "not": {"pattern": "z"}},
        ["xa", "ay", "b", "xz", 3],
    ),
    (
        {"oneOf": [{"pattern": "a"}, {"pattern": "b"}], "items": {"pattern": "^[0-9]+$"}},
        ["a", "ab", "c", ["1", "22"], ["1", "x"]],
    ),
    (
        {"properties": {"k": {"allOf": [{"pattern": "^k"}, {"not": {"pattern": "k$"}}]}}},
        [{"k": "kx"}, {"k": "kk"}, {"k": "xk"}, {}],
    ),
]


@pytest.mark.parametrize(("schema", "values"), JUDGED, ids=["any-not", "one-items", "all"])
async def test_judging_in_rounds_agrees_with_matching_in_place(
    schema: dict[str, Any], values: list[Any]
) -> None:
    check_schema(schema)
    for value in values:
        judged = await output_check.judged(value, schema, InlineLineSearcher())
        assert judged == validate(value, schema, _found), (schema, value)


async def test_a_schemas_pattern_is_never_compiled_in_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``check_schema`` (a server's request, a runtime dispatch, a config) compiled each
    pattern on the caller's loop, and compiling is not linear: 400 classes under ``(?i)``
    (2.4 KB of a 256 KB body) took 3 s of CPU. It now never compiles one; the server and the
    runtime compile them in the worker (``check_patterns``), which refuses what does not
    compile, and so does the worker that judges an answer."""

    def compiled(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("a schema's pattern was compiled in-process")

    stall = "(?i)" + "".join(f"[\x01-\U0010fffe{chr(0x30 + i)}]" for i in range(40))
    invalid = {"properties": {"a": {"pattern": "a{2,1}"}}}
    with monkeypatch.context() as patched:
        patched.setattr(re._compiler, "compile", compiled)  # type: ignore[attr-defined]
        re.purge()
        check_schema({"type": "string", "pattern": stall})
        check_schema(invalid)
    searcher = ProcessLineSearcher()
    with pytest.raises(ConfigError) as refused:
        await output_check.check_patterns(invalid, searcher)
    assert str(refused.value) == (
        "output_schema: the pattern at #/properties/a is not a valid regex: invalid regular "
        "expression: min repeat greater than max repeat at position 2"
    )
    behind = {"pattern": "(?<=a+)b"}  # what judging meets when no one checked the schema
    problem = await output_check.judged("ab", behind, searcher)
    assert problem is not None
    assert "could not be judged: invalid regular expression: look-behind" in problem.message
