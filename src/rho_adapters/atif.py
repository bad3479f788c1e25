"""ATIF v1.8 (Harbor's Agent Trajectory Interchange Format, RFC 0001; the version Harbor 0.26
reads and writes) from a session's events.

Mapping (every message, tool call and result of the trace is in the export):

- a user message (prompt, operator directive) → a ``user`` step (``extra.origin`` when not
  typed by the user);
- an assistant message → an ``agent`` step: ``message`` (the text), ``reasoning_content``,
  ``tool_calls`` (arguments parsed; text that is not a JSON object is kept as
  ``{"_raw": text}``), ``metrics`` from the model call that produced it (prompt tokens include
  the cached ones, as the RFC says; reasoning tokens, latency, duration, finish reason and
  retries in ``metrics.extra``), and ``observation.results`` with each call's result
  (``source_call_id``); a ``delegate`` result refers to the child in
  ``subagent_trajectory_ref`` by a key Harbor resolves: ``trajectory_id`` (the child's session
  id) when the child's trajectory is embedded in ``subagent_trajectories``, ``trajectory_path``
  when the caller wrote it to a file; ``session_id`` is informational only (ATIF v1.7+). A child
  that can be resolved by neither (its session is gone) gets no reference: the result's
  ``extra`` names the child session and says so; an MCP call's server and
  tool are in the step's ``extra.mcp_calls`` (call id → ``{server, tool}``);
- a result whose call is not in the export (history seeded into a child) → a ``system`` step
  with that observation; a compaction → a ``system`` step whose message is the summary;
- ``final_metrics``: the session's usage (compaction calls included) and the step count;
- ``trajectory_id``: the session id (unique in a document: a session delegates to each child
  session once).

The system prompt is not in the trace, so there is no system-prompt step (``notes`` says so).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from rho_domain import events as ev
from rho_domain.messages import AssistantMessage, ToolCall, ToolResultMessage, Usage, UserMessage

SCHEMA_VERSION = "ATIF-v1.8"
NOTES = (
    "Exported by rho-agent from trace.jsonl. The system prompt is not recorded in the trace, "
    "so there is no system step; compactions are system steps whose message is the summary."
)


def timestamp(at: float) -> str:
    """ISO 8601 in UTC with a ``Z`` (``2026-01-31T12:00:00.250000Z``)."""
    return datetime.fromtimestamp(at, UTC).isoformat().replace("+00:00", "Z")


def arguments_object(raw: str) -> dict[str, Any]:
    """A tool call's arguments as the object ATIF requires; other text as ``{"_raw": text}``."""
    try:
        value = json.loads(raw) if raw.strip() else {}
    except (ValueError, RecursionError):  # not JSON, or nested past the parser: as given
        return {"_raw": raw}
    return value if isinstance(value, dict) else {"_raw": raw}


def trajectory(
    events: Iterable[ev.Event],
    *,
    session_id: str,
    agent_version: str,
    model_name: str | None = None,
    child_path: Mapping[str, str] | None = None,
    children: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """The ATIF document of one session. ``children`` maps a child session id to its own
    trajectory (this function's result for it), embedded in ``subagent_trajectories`` and
    referred to by ``trajectory_id``; ``child_path`` maps a child session id to where its
    trajectory was written (``trajectory_path`` of the reference)."""
    builder = _Builder(child_path or {}, children or {})
    for event in events:
        builder.apply(event)
    if not builder.steps:  # ATIF requires a step; a session created but never run has none
        builder.empty()
    agent: dict[str, Any] = {"name": "rho-agent", "version": agent_version}
    model = model_name or builder.first_model
    if model:
        agent["model_name"] = model
    document: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "session_id": session_id,
        "trajectory_id": session_id,
        "agent": agent,
        "steps": builder.steps,
        "notes": NOTES,
        "final_metrics": _final_metrics(builder.usage, len(builder.steps)),
    }
    if builder.embedded:
        document["subagent_trajectories"] = [dict(c) for c in builder.embedded.values()]
    return document


def _metrics(usage: Usage, end: ev.LLMEnded | None) -> dict[str, Any]:
    metrics: dict[str, Any] = {
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "cached_tokens": usage.cached_tokens,
    }
    if usage.cost_usd is not None:
        metrics["cost_usd"] = usage.cost_usd
    extra: dict[str, Any] = {"reasoning_tokens": usage.reasoning_tokens}
    if usage.estimated:
        extra["estimated"] = True
    if end is not None:
        extra.update(
            duration_s=end.duration,
            first_output_after_s=end.first_output_after,
            finish_reason=end.finish_reason,
            retries=end.retries,
        )
    metrics["extra"] = extra
    return metrics


def _final_metrics(usage: Usage, steps: int) -> dict[str, Any]:
    final: dict[str, Any] = {
        "total_prompt_tokens": usage.input_tokens,
        "total_completion_tokens": usage.output_tokens,
        "total_cached_tokens": usage.cached_tokens,
        "total_steps": steps,
        "extra": {"total_reasoning_tokens": usage.reasoning_tokens},
    }
    if usage.cost_usd is not None:
        final["total_cost_usd"] = usage.cost_usd
    return final


class _Builder:
    def __init__(
        self, child_path: Mapping[str, str], children: Mapping[str, Mapping[str, Any]]
    ) -> None:
        self.child_path = child_path
        self.children = children
        self.embedded: dict[str, Mapping[str, Any]] = {}  # by child session id, in call order
        self.steps: list[dict[str, Any]] = []
        self.usage = Usage()
        self.first_model = ""
        self.last_end: ev.LLMEnded | None = None
        self.step_of_call: dict[str, dict[str, Any]] = {}
        self.tool_metadata: dict[str, Mapping[str, Any]] = {}

    def _step(self, source: str, at: float, message: str, **fields: Any) -> dict[str, Any]:
        step = {"step_id": len(self.steps) + 1, "timestamp": timestamp(at), "source": source}
        step.update(message=message, **{k: v for k, v in fields.items() if v is not None})
        self.steps.append(step)
        return step

    def empty(self) -> None:
        """The one step of a trajectory without messages."""
        self._step("system", 0.0, "(no messages: the session has not run)")

    def apply(self, event: ev.Event) -> None:
        match event:
            case ev.LLMEnded():
                self.last_end = event
                self.first_model = self.first_model or event.model
            case ev.UsageRecorded(usage=usage):
                self.usage = self.usage + usage
            case ev.ToolEnded():
                self.tool_metadata[event.call_id] = event.metadata
            case ev.MessageAdded(message=message):
                self._message(event.at, message)
            case ev.Compacted():
                extra = {
                    "kind": "compaction",
                    "trigger": event.trigger,
                    "tokens_before": event.tokens_before,
                    "tokens_after": event.tokens_after,
                    "replaced_count": event.replaced_count,
                }
                self._step("system", event.at, event.summary, extra=extra)
            case _:
                pass

    def _message(self, at: float, message: Any) -> None:
        match message:
            case UserMessage():
                extra = None if message.origin == "user" else {"origin": message.origin}
                self._step("user", at, message.content, extra=extra)
            case AssistantMessage():
                self._agent_step(at, message)
            case ToolResultMessage():
                self._result(at, message)
            case _:  # a system message is never added to history by the loop
                self._step("system", at, message.content)

    def _agent_step(self, at: float, message: AssistantMessage) -> None:
        end, self.last_end = self.last_end, None
        extra = {"refusal": message.refusal} if message.refusal else None
        step = self._step(
            "agent",
            at,
            message.text,
            model_name=end.model if end is not None and end.model else None,
            reasoning_content=message.reasoning or None,
            tool_calls=[_call(c) for c in message.tool_calls] or None,
            metrics=_metrics(end.usage, end) if end is not None else None,
            extra=extra,
        )
        for tool_call in message.tool_calls:
            self.step_of_call[tool_call.id] = step

    def _result(self, at: float, message: ToolResultMessage) -> None:
        result: dict[str, Any] = {"source_call_id": message.call_id, "content": message.content}
        metadata = self.tool_metadata.get(message.call_id, {})
        child = metadata.get("child_session_id")
        if isinstance(child, str) and child:
            ref: dict[str, Any] = {"session_id": child, "extra": {}}
            if child in self.children:
                ref["trajectory_id"] = str(self.children[child].get("trajectory_id", child))
                self.embedded[child] = self.children[child]
            if child in self.child_path:
                ref["trajectory_path"] = self.child_path[child]
            if "child_status" in metadata:
                ref["extra"]["status"] = metadata["child_status"]
            if "trajectory_id" in ref or "trajectory_path" in ref:
                result["subagent_trajectory_ref"] = [ref]
            else:  # session_id alone is no reference (ATIF v1.7+): say what is missing
                result["extra"] = {
                    "child_session_id": child,
                    "child_trajectory": "not exported: the child session was not found",
                    **({"child_status": ref["extra"]["status"]} if ref["extra"] else {}),
                }
        step = self.step_of_call.get(message.call_id)
        if step is None:
            step = self._step("system", at, "", extra={"kind": "tool_result"})
        step.setdefault("observation", {"results": []})["results"].append(result)
        if isinstance(server := metadata.get("mcp_server"), str):  # an MCP call's server
            mcp = step.setdefault("extra", {}).setdefault("mcp_calls", {})
            mcp[message.call_id] = {"server": server, "tool": metadata.get("mcp_tool")}
        if message.is_error:  # ATIF results have no error flag: listed in the step's extra
            step.setdefault("extra", {}).setdefault("failed_calls", []).append(message.call_id)


def _call(call: ToolCall) -> dict[str, Any]:
    return {
        "tool_call_id": call.id,
        "function_name": call.name,
        "arguments": arguments_object(call.arguments),
    }
