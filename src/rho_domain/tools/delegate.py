"""delegate: hand a focused subtask to a child agent.

The child inherits the parent's profile, model, tools (minus ``delegate``: one level only),
executor, databases and approver — so its tool calls are approved exactly like the parent's
— and is stored with ``parent_id`` so the monitor shows it. Cancelling the parent cancels the
child. A child that waits for approval makes the delegate call the parent's pending approval
(``ToolBatch``); a child's rejected call reaches the parent as a rejection. ``full_context``
gives the child the parent's history up to (not including) the turn that is delegating, so it
never starts with tool calls that have no result.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rho_domain.tools.base import ToolContext, ToolHandler, ToolOutput, ToolPolicy
from rho_domain.tools.children import ChildOutcome, Delegator

__all__ = ["ChildOutcome", "DelegateTool", "Delegator", "outcome_output"]

DELEGATES = ToolPolicy(read_only=False, dangerous=False)


class DelegateTool(ToolHandler):
    """Runs a child agent on one instruction and returns its final answer."""

    name = "delegate"
    description = (
        "Delegate a focused subtask to a sub-agent with the same tools and permissions (it "
        "cannot delegate further). It starts with an empty conversation unless full_context "
        "is true. Returns the sub-agent's final answer. Use it for self-contained "
        "investigations that would otherwise fill your context."
    )
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "instruction": {
                "type": "string",
                "description": "What the sub-agent must do and what it must report back.",
            },
            "full_context": {
                "type": "boolean",
                "description": "Give the sub-agent a copy of this conversation so far.",
            },
        },
        "required": ["instruction"],
        "additionalProperties": False,
    }

    def policy_for(self, arguments: Mapping[str, Any]) -> ToolPolicy:
        """Not dangerous in itself: every call of the child is decided by the same profile
        and approver. Not read-only: the child may change things (once approved)."""
        return DELEGATES

    async def handle(self, arguments: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
        """See ``ToolHandler.handle``."""
        instruction = str(arguments["instruction"]).strip()
        if not instruction:
            return ToolOutput(content="delegate needs a non-empty instruction", is_error=True)
        if ctx.delegate is None:
            return ToolOutput(
                content="delegation is not available here (sub-agents cannot delegate)",
                is_error=True,
            )
        outcome = await ctx.delegate(
            instruction, full_context=bool(arguments.get("full_context", False))
        )
        return outcome_output(outcome)


def outcome_output(outcome: ChildOutcome) -> ToolOutput:
    """The delegate call's result for a child's outcome.

    A child waiting for approval gives ``metadata["child_pending"]`` (its waiting calls, as
    ``PendingApproval`` values): the tool batch turns that into the parent's own pending
    approval instead of a result. A call the user rejected is reported as such, with the
    reason, so the parent model knows the user said no (not that the child failed).
    """
    metadata: dict[str, Any] = {
        "child_session_id": outcome.session_id,
        "child_status": outcome.status,
        "child_input_tokens": outcome.usage.input_tokens,
        "child_output_tokens": outcome.usage.output_tokens,
        # what the session's limits count of the child (State.children): the parent's trace
        # keeps it, as a resumed or a next run's budget needs it
        "child_model_calls": outcome.model_calls,
        "child_tool_calls": outcome.tool_calls,
        "child_cost_usd": outcome.usage.cost_usd or 0.0,
        # what its calls wrote that no human reviewed: the parent's later bash lines are
        # judged on these files instead of on unknown ones (``State``)
        "child_written": list(outcome.written),
    }
    if outcome.status == "awaiting_approval" and outcome.pending:
        metadata["child_pending"] = outcome.pending
        return ToolOutput(content="The sub-agent waits for approval.", metadata=metadata)
    if outcome.rejected:
        return ToolOutput(
            content=f"The user rejected the sub-agent's call {outcome.rejected}. The sub-agent "
            "stopped there; do not retry it without asking the user.",
            is_error=True,
            metadata=metadata,
        )
    if outcome.status != "completed":
        detail = f": {outcome.error}" if outcome.error else ""
        text = f"\n\nIts last answer:\n{outcome.text}" if outcome.text else ""
        return ToolOutput(
            content=f"The sub-agent ended with status {outcome.status}{detail}.{text}",
            is_error=True,
            metadata=metadata,
        )
    return ToolOutput(content=outcome.text or "(the sub-agent gave no answer)", metadata=metadata)
