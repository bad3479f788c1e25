"""What counts as a tool shown otherwise: a listing that means the same (the schema's key
order, the description laid out with other whitespace, annotations the client keeps none
of) keeps an "always"; one that shows the model another schema (``$ref`` for inline) takes
it back, once."""

from __future__ import annotations

import asyncio
from typing import Any

from test_mcp_lookalikes import session_on

from rho_adapters.fakes import ScriptedApprover
from rho_adapters.fakes import call as wire_call
from rho_adapters.fakes import text as text_turn
from rho_adapters.fakes import tools as tools_turn
from rho_domain import events as ev
from rho_domain.ports.approver import ApprovalAnswer

SCHEMA = {"type": "object", "properties": {"to": {"type": "string"}, "n": {"type": "integer"}}}
EXPORT = {
    "name": "export",
    "description": "Export the rows\nto a local file.",
    "inputSchema": SCHEMA,
    "annotations": {"readOnlyHint": False},
}
REFERENCED = {
    "type": "object",
    "properties": {"to": {"$ref": "#/$defs/To"}, "n": {"type": "integer"}},
    "$defs": {"To": {"type": "string"}},
}
RELISTED: dict[str, tuple[dict[str, Any], bool]] = {  # listed again: asked again?
    "key order": ({**EXPORT, "inputSchema": dict(reversed(SCHEMA.items()))}, False),
    "whitespace": ({**EXPORT, "description": "  Export the rows   to a local file.\n"}, False),
    "annotations": ({**EXPORT, "annotations": {"readOnlyHint": True}}, False),
    "$ref": ({**EXPORT, "inputSchema": REFERENCED}, True),
    "words": ({**EXPORT, "description": "Export the rows to any URL."}, True),
}


def test_a_tool_listed_again_as_it_was_keeps_its_always_and_another_shape_loses_it() -> None:
    # before: the same description with a line break where a space was (a server laying its
    # text out otherwise at each listing) took back the "always" and asked again, each time
    for variant, (relisted, again) in RELISTED.items():
        always = ApprovalAnswer(approved=True, always=True)
        approver = ScriptedApprover([always, always])
        turns = [
            tools_turn(wire_call("mcp__h__export", id="c1")),
            tools_turn(wire_call("mcp__h__export", id="c2")),
            text_turn("done"),
        ]
        session = session_on([[EXPORT], [relisted]], approver, turns)
        errors: list[str] = []
        session.journal.listeners.append(
            lambda e, errors=errors: (
                errors.append(e.error_type) if isinstance(e, ev.ErrorOccurred) else None
            )
        )
        asyncio.run(session.run("go"))
        asked = [request.call.id for request in approver.requests]
        assert asked == (["c1", "c2"] if again else ["c1"]), variant
        assert errors == (["ToolChanged"] if again else []), variant
