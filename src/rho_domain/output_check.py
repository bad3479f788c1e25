"""The final answer against ``AgentConfig.output_schema``: parsed, validated, corrected once.

When a turn ends without tool calls and the agent has an output schema, its text is parsed as
JSON (a fenced ```json block is accepted) and validated (``rho_domain.json_schema``). A match
becomes ``RunResult.output``. The first failure is sent back as a user message of origin
``correction`` that quotes the problem and its path, and the next model call may not call
tools (``tool_choice: none``, which lets a server with grammar-constrained decoding constrain
that answer); a second failure ends the run ``error`` with ``OutputInvalid`` naming the path.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from rho_domain.errors import OutputInvalid
from rho_domain.journal import Journal
from rho_domain.json_schema import SchemaProblem, validate
from rho_domain.messages import Message, UserMessage
from rho_domain.run import RunTally

_FENCED = re.compile(r"^```(?:json)?\s*\n(.*)\n```$", re.DOTALL)


def instruction(schema: Mapping[str, Any]) -> str:
    """What the system prompt adds: the answer's shape, for every server (where the server
    also constrains decoding, this is what the model reads about it)."""
    return (
        "When you have finished, give your final answer as one JSON value, with no other "
        "text, that matches this JSON Schema:\n" + json.dumps(schema, sort_keys=True)
    )


def parse(text: str, schema: Mapping[str, Any]) -> tuple[Any, SchemaProblem | None]:
    """The answer's JSON value and the first problem with it (None: it matches)."""
    body = text.strip()
    if fenced := _FENCED.match(body):
        body = fenced.group(1).strip()
    try:
        value = json.loads(body)
    except ValueError as exc:
        return None, SchemaProblem("$", f"the answer is not JSON ({exc})")
    return value, validate(value, schema)


def correcting(messages: Sequence[Message]) -> bool:
    """True when the last message asks the model to correct its answer (its next call is an
    answer, not a tool call)."""
    last = messages[-1] if messages else None
    return isinstance(last, UserMessage) and last.origin == "correction"


async def accepted(schema: Mapping[str, Any] | None, journal: Journal, tally: RunTally) -> bool:
    """Judge the final answer in ``tally.text``. True: the run is complete (``tally.output``
    holds the value; always True without a schema). False: a correction was sent and the
    loop goes on. Raises ``OutputInvalid`` when the corrected answer fails too."""
    if schema is None:
        return True
    value, problem = parse(tally.text, schema)
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
