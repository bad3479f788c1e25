"""The final answer against ``AgentConfig.output_schema``: parsed, validated, corrected once.

When a turn ends without tool calls and the agent has an output schema, its text is parsed as
JSON (a fenced ```json block is accepted) and validated (``rho_domain.json_schema``). A match
becomes ``RunResult.output``. The first failure is sent back as a user message of origin
``correction`` that quotes the problem and its path, and the next model call may not call
tools (``tool_choice: none``, which lets a server with grammar-constrained decoding constrain
that answer); a second failure ends the run ``error`` with ``OutputInvalid`` naming the path.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rho_domain.errors import OutputInvalid
from rho_domain.loop.journal import Journal
from rho_domain.loop.tally import RunTally
from rho_domain.messages import UserMessage


async def accepted(schema: Mapping[str, Any] | None, journal: Journal, tally: RunTally) -> bool:
    """Judge the final answer in ``tally.text``. True: the run is complete (``tally.output``
    holds the value; always True without a schema). False: a correction was sent and the
    loop goes on. Raises ``OutputInvalid`` when the corrected answer fails too."""
    if schema is None:
        return True
    from rho_domain.answer_shape import parse  # a run with an output schema

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
