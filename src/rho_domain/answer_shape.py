"""The final answer's JSON against ``AgentConfig.output_schema``: pure parts.

What the system prompt says about the shape (``instruction``), the answer read as JSON
(``parse``, a fenced ```json block accepted), and whether the model is being asked to correct
it (``correcting``). The loop's judgement (``rho_domain.loop.output_check``) validates it,
sends the one correction and ends the run when it fails too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from rho_domain.messages import Message, UserMessage

if TYPE_CHECKING:
    from rho_domain.json_schema import SchemaProblem

# compiled by re (and kept in its cache) at the first answer parsed, not at import: a run
# without an output schema never parses one
_FENCED = r"^```(?:json)?\s*\n(.*)\n```$"


def instruction(schema: Mapping[str, Any]) -> str:
    """What the system prompt adds: the answer's shape, for every server (where the server
    also constrains decoding, this is what the model reads about it)."""
    return (
        "When you have finished, give your final answer as one JSON value, with no other "
        "text, that matches this JSON Schema:\n" + json.dumps(schema, sort_keys=True)
    )


def parse(text: str) -> tuple[Any, SchemaProblem | None]:
    """The answer's JSON value, or the problem reading it as JSON (the schema is judged
    by ``rho_domain.loop.output_check``, whose ``pattern`` keywords run off the loop)."""
    # the validator loads with the first answer judged: an agent without an output schema
    # (a one-shot, the facade's import) never builds it
    from rho_domain.json_schema import SchemaProblem

    body = text.strip()
    if fenced := re.match(_FENCED, body, re.DOTALL):
        body = fenced.group(1).strip()
    try:
        value = json.loads(body)
    except ValueError as exc:
        return None, SchemaProblem("$", f"the answer is not JSON ({exc})")
    except RecursionError:
        return None, SchemaProblem("$", "the answer nests arrays or objects too deeply to read")
    return value, None


def correcting(messages: Sequence[Message]) -> bool:
    """True when the last message asks the model to correct its answer (its next call is an
    answer, not a tool call)."""
    last = messages[-1] if messages else None
    return isinstance(last, UserMessage) and last.origin == "correction"
