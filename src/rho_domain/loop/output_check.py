"""The final answer against ``AgentConfig.output_schema``: parsed, validated, corrected once.

When a turn ends without tool calls and the agent has an output schema, its text is parsed as
JSON (a fenced ```json block is accepted) and validated (``rho_domain.json_schema``). A match
becomes ``RunResult.output``. The first failure is sent back as a user message of origin
``correction`` that quotes the problem and its path, and the next model call may not call
tools (``tool_choice: none``, which lets a server with grammar-constrained decoding constrain
that answer); a second failure ends the run ``error`` with ``OutputInvalid`` naming the path.

The schema's ``pattern`` keywords come from outside (a client's request, a config, a stored
session) and Python's ``re`` backtracks without interruption (``^(a+)+$`` on a 30-character
answer runs for minutes): they run in the session's ``LineSearcher`` (a worker process), all
of one answer within ``PATTERN_SECONDS``, never on the event loop every session shares.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from rho_domain.errors import ConfigError, OutputInvalid, ToolError
from rho_domain.loop.journal import Journal
from rho_domain.loop.tally import RunTally
from rho_domain.messages import UserMessage

if TYPE_CHECKING:
    from rho_domain.json_schema import SchemaProblem
    from rho_domain.ports.line_search import LineSearcher

_NO_SEARCHER = (
    "output_schema: its 'pattern' keywords run only in a LineSearcher (a killable worker) "
    "and this session has none; give one in SessionPorts.line_searcher "
    "(rho_entry.wiring.build_ports does)"
)

PATTERN_SECONDS = 5.0
"""How long the ``pattern`` keywords of one answer may take in all; past it the answer is
judged not to match (the pattern backtracks) and the worker is killed."""

COMPILE_SECONDS = 5.0
"""How long compiling one pattern may take, its worker's start included; past it the schema
is refused (``check_patterns``)."""

_COMPILED: set[str] = set()
"""Patterns this process has seen compile (the worker is this interpreter): every run checks
its schema before its first model call, and one worker per pattern per run would double what
judging costs. Bounded: cleared when full."""
_COMPILED_MAX = 1024


async def accepted(
    schema: Mapping[str, Any] | None,
    journal: Journal,
    tally: RunTally,
    searcher: LineSearcher | None = None,
) -> bool:
    """Judge the final answer in ``tally.text``. True: the run is complete (``tally.output``
    holds the value; always True without a schema). False: a correction was sent and the
    loop goes on. Raises ``OutputInvalid`` when the corrected answer fails too, and
    ``ConfigError`` when the schema has a pattern to judge and there is no ``searcher``."""
    if schema is None:
        return True
    from rho_domain.answer_shape import parse  # a run with an output schema

    value, problem = parse(tally.text)
    if problem is None:
        problem = await judged(value, schema, searcher)
    if problem is None:
        tally.output = value
        return True
    if tally.corrected:
        raise OutputInvalid(f"the final answer does not match the output schema at {problem}")
    tally.corrected = True
    await journal.message(
        UserMessage(
            f"[rho-agent] Your final answer does not match the required JSON Schema at "
            f"{problem}. Answer again with only the corrected JSON value.",
            origin="correction",
        )
    )
    return False


async def judged(
    value: Any, schema: Mapping[str, Any], searcher: LineSearcher | None
) -> SchemaProblem | None:
    """``json_schema.validate``, its patterns answered by ``searcher``. A pass of the pure
    validator records the (pattern, text) pairs it has no answer for (taking them as found),
    the searcher answers them, and the pass runs again, until one asks nothing new: each
    round answers at least one pair, and an answer has finitely many, so it ends, with the
    validator's own result."""
    from rho_domain.json_schema import SchemaProblem, validate

    known: dict[tuple[str, str], bool] = {}
    asked: dict[str, dict[str, None]] = {}  # this pass's unanswered texts, by pattern

    def matches(pattern: str, text: str) -> bool:
        if (pattern, text) in known:
            return known[pattern, text]
        asked.setdefault(pattern, {})[text] = None
        return True

    try:
        async with asyncio.timeout(PATTERN_SECONDS):
            while True:
                asked.clear()
                problem = validate(value, schema, matches)
                if not asked:
                    return problem
                if searcher is None:
                    raise ConfigError(_NO_SEARCHER)
                for pattern, texts in asked.items():
                    answers = await searcher.found(pattern, list(texts))
                    known.update(zip([(pattern, text) for text in texts], answers, strict=True))
    except TimeoutError:
        return SchemaProblem(
            "$",
            f"the schema's patterns did not finish within {PATTERN_SECONDS:g} s on this answer "
            "(a pattern that backtracks, such as a repeated group inside a repetition: "
            "(a+)+); it is judged not to match",
        )
    except ToolError as exc:
        return SchemaProblem("$", f"a pattern of the schema could not be judged: {exc}")


async def check_patterns(
    schema: Mapping[str, Any], searcher: LineSearcher, where: str = "output_schema"
) -> None:
    """Raise ``ConfigError`` naming the first ``pattern`` of ``schema`` (checked by
    ``check_schema``) that does not compile, compiled in ``searcher``'s worker, each within
    ``COMPILE_SECONDS``: what a server or a runtime checks before it takes a schema, and a
    run before its first model call, since ``check_schema`` never compiles one in-process."""
    from rho_domain.schema_keywords import patterns_of

    for at, pattern in patterns_of(schema).items():
        if pattern in _COMPILED:
            continue
        try:
            async with asyncio.timeout(COMPILE_SECONDS):
                await searcher.found(pattern, ())
        except TimeoutError:
            raise ConfigError(
                f"{where}: the pattern at {at} did not compile within {COMPILE_SECONDS:g} s; "
                "give a simpler one"
            ) from None
        except ToolError as exc:
            raise ConfigError(f"{where}: the pattern at {at} is not a valid regex: {exc}") from None
        if len(_COMPILED) >= _COMPILED_MAX:
            _COMPILED.clear()
        _COMPILED.add(pattern)


async def check_before_run(schema: Mapping[str, Any] | None, searcher: LineSearcher | None) -> None:
    """Raise ``ConfigError`` before a run's first model call when ``schema`` has a
    ``pattern`` no answer could be judged by: there is no ``searcher``, or one does not
    compile (``check_patterns``). A schema from a config file, ``--output-schema`` or a
    stored session is checked by no server or runtime, and was refused only at the first
    answer, after the model had been called (twice: the correction too) for nothing."""
    if schema is None:
        return
    from rho_domain.schema_keywords import patterns_of

    if not patterns_of(schema):
        return
    if searcher is None:
        raise ConfigError(_NO_SEARCHER)
    await check_patterns(schema, searcher)
