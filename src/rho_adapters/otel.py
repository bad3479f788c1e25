"""OpenTelemetry spans from a session's events (the ``otel`` extra: opentelemetry-api only).

``SpanRecorder`` is a session listener: it turns the domain's events into spans that follow
the OpenTelemetry GenAI semantic conventions, timed by the events' own clock (``at``), so a
span's times are the trace's times:

- ``rho.session`` (``gen_ai.conversation.id``), from the first event to ``end()``;
- ``invoke_agent rho-agent`` per run (``gen_ai.operation.name=invoke_agent``, run id, status,
  the run's usage);
- ``chat {model}`` per model call (``gen_ai.request.model``, ``gen_ai.usage.input_tokens``,
  ``gen_ai.usage.output_tokens``, ``gen_ai.usage.cache_read.input_tokens``,
  ``gen_ai.response.finish_reasons``, latency to first output, retries, cost);
- ``execute_tool {name}`` per tool call (``gen_ai.tool.name``, ``gen_ai.tool.call.id``,
  ``gen_ai.tool.type``; an error status when the call failed or was blocked; an MCP call
  also ``rho.mcp.server`` and, once it ran, ``rho.mcp.tool``, the server's name for it).

A delegated child session gets ``for_child(id)``: its spans are children of the parent's
running ``delegate`` tool span, so one trace holds the parent and its children. Message
content is recorded only with ``capture_content=True`` (prompts and tool output may be secret),
each text cut to ``CONTENT_CHARS`` (``content``): a prompt, a call's arguments or an error may
be megabytes, and one oversized span made the exporter's whole batch fail.
This module imports opentelemetry; only ``rho_entry.otel`` imports it, lazily.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer

from rho_domain import events as ev
from rho_domain.loop.journal import EndsWithSession, FollowsChildren, Listener
from rho_domain.mcp_names import server_of
from rho_domain.messages import Usage

AGENT_NAME = "rho-agent"
CONTENT_CHARS = 32_768  # above the tools' default output limit: their results are kept whole


def content(text: str, limit: int = CONTENT_CHARS) -> str:
    """``text`` as a span attribute carries it: whole, or its first ``limit`` characters and
    how many were cut (an OTLP collector refuses a request over 4 MB, the whole batch with it;
    the SDK bounds nothing by default)."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... [{len(text) - limit} more characters cut]"


def _ns(at: float) -> int:
    return int(at * 1_000_000_000)


def usage_attributes(usage: Usage, prefix: str = "gen_ai.usage.") -> dict[str, Any]:
    """GenAI usage attributes of ``usage`` (cost and reasoning under ``rho.`` names)."""
    attributes: dict[str, Any] = {
        f"{prefix}input_tokens": usage.input_tokens,
        f"{prefix}output_tokens": usage.output_tokens,
        f"{prefix}cache_read.input_tokens": usage.cached_tokens,
        "rho.usage.reasoning_tokens": usage.reasoning_tokens,
        "rho.usage.estimated": usage.estimated,
    }
    if usage.cost_usd is not None:
        attributes["rho.usage.cost_usd"] = usage.cost_usd
    return attributes


class SpanRecorder(FollowsChildren, EndsWithSession):
    """A session listener that records spans with ``tracer`` (see the module docstring)."""

    def __init__(
        self,
        tracer: Tracer,
        *,
        session_id: str,
        parent: Context | None = None,
        provider: str | None = None,
        capture_content: bool = False,
        session_span: bool = True,
    ) -> None:
        self.tracer = tracer
        self.session_id = session_id
        self.parent = parent
        self.provider = provider
        self.capture_content = capture_content
        self._session: Span | None = None
        self._run: Span | None = None
        self._model: Span | None = None
        self._tools: dict[str, Span] = {}
        self._delegates: list[str] = []  # call ids of running delegate calls
        self._with_session_span = session_span
        self._last_at = 0.0

    # ------------------------------------------------------------------ spans

    def _start(self, name: str, at: float, parent: Span | None, attrs: Mapping[str, Any]) -> Span:
        context = trace.set_span_in_context(parent) if parent is not None else self.parent
        kind = SpanKind.CLIENT if name.startswith("chat") else SpanKind.INTERNAL
        return self.tracer.start_span(
            name, context=context, kind=kind, attributes=dict(attrs), start_time=_ns(at)
        )

    def _session_span(self, at: float) -> Span | None:
        if self._session is None and self._with_session_span:
            self._session = self._start(
                "rho.session",
                at,
                None,
                {"gen_ai.conversation.id": self.session_id, "gen_ai.agent.name": AGENT_NAME},
            )
        return self._session

    def _common(self) -> dict[str, Any]:
        common: dict[str, Any] = {"gen_ai.conversation.id": self.session_id}
        if self.provider:
            common["gen_ai.provider.name"] = self.provider
        return common

    # ------------------------------------------------------------------ listener

    def __call__(self, event: ev.Event) -> None:
        """Record ``event`` (streaming deltas are ignored)."""
        self._last_at = max(self._last_at, event.at)
        match event:
            case ev.RunStarted():
                self._run_started(event)
            case ev.RunEnded():
                self._run_ended(event)
            case ev.LLMStarted():
                self._abandon_model(event.at, "the call failed before it ended")
                self._model = self._start(
                    f"chat {event.model}".strip(),
                    event.at,
                    self._run or self._session_span(event.at),
                    {
                        **self._common(),
                        "gen_ai.operation.name": "chat",
                        "gen_ai.request.model": event.model,
                        "rho.call_index": event.call_index,
                        "rho.context_tokens": event.context_tokens,
                    },
                )
            case ev.LLMEnded():
                self._model_ended(event)
            case ev.ToolStarted() | ev.ToolBlocked():
                self._tool_started(event)
            case ev.ToolEnded():
                self._tool_ended(event)
            case ev.ErrorOccurred() if self._model is not None:
                attributes = {"error.type": event.error_type, "rho.message": content(event.message)}
                self._model.add_event("error", attributes, timestamp=_ns(event.at))
            case _:
                pass

    def _run_started(self, event: ev.RunStarted) -> None:
        attributes = {
            **self._common(),
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": AGENT_NAME,
            "rho.run.id": event.run_id,
        }
        if self.capture_content and event.prompt:
            attributes["rho.prompt"] = content(event.prompt)
        self._run = self._start(
            f"invoke_agent {AGENT_NAME}", event.at, self._session_span(event.at), attributes
        )

    def _abandon_model(self, at: float, why: str) -> None:
        if self._model is not None:
            self._model.set_status(Status(StatusCode.ERROR, why))
            self._model.end(end_time=_ns(at))
            self._model = None

    def _run_ended(self, event: ev.RunEnded) -> None:
        self._abandon_model(event.at, f"run ended: {event.status}")
        for span in self._tools.values():  # calls the run ended under (cancelled, crashed)
            span.set_status(Status(StatusCode.ERROR, f"run ended: {event.status}"))
            span.end(end_time=_ns(event.at))
        self._tools, self._delegates = {}, []
        if self._run is None:
            return
        self._run.set_attributes({"rho.run.status": str(event.status)})
        self._run.set_attributes(usage_attributes(event.usage))
        if event.error:
            self._run.set_status(Status(StatusCode.ERROR, content(event.error)))
        self._run.end(end_time=_ns(event.at))
        self._run = None

    def _model_ended(self, event: ev.LLMEnded) -> None:
        span, self._model = self._model, None
        if span is None:
            return
        attributes = usage_attributes(event.usage)
        attributes["gen_ai.response.finish_reasons"] = [event.finish_reason or "unknown"]
        attributes["rho.retries"] = event.retries
        if event.first_output_after is not None:
            attributes["rho.first_output_after_s"] = event.first_output_after
        span.set_attributes(attributes)
        span.end(end_time=_ns(event.at))

    def _tool_started(self, event: ev.ToolStarted | ev.ToolBlocked) -> None:
        call = event.call
        attributes: dict[str, Any] = {
            **self._common(),
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": call.name,
            "gen_ai.tool.call.id": call.id,
            "gen_ai.tool.type": "function",
        }
        if (server := server_of(call.name)) is not None:
            attributes["rho.mcp.server"] = server
        if self.capture_content:
            attributes["gen_ai.tool.call.arguments"] = content(call.arguments)
        span = self._start(
            f"execute_tool {call.name}",
            event.at,
            self._run or self._session_span(event.at),
            attributes,
        )
        if isinstance(event, ev.ToolBlocked):
            span.set_attributes({"rho.tool.blocked_by": event.by})
            span.set_status(
                Status(StatusCode.ERROR, f"blocked by {event.by}: {event.reason[:200]}")
            )
            span.end(end_time=_ns(event.at))
            return
        self._tools[call.id] = span
        if call.name == "delegate":
            self._delegates.append(call.id)

    def _tool_ended(self, event: ev.ToolEnded) -> None:
        span = self._tools.pop(event.call_id, None)
        if event.call_id in self._delegates:
            self._delegates.remove(event.call_id)
        if span is None:
            return
        span.set_attributes({"rho.tool.output_bytes": len(event.content.encode("utf-8"))})
        if self.capture_content:
            span.set_attributes({"gen_ai.tool.call.result": content(event.content)})
        child = event.metadata.get("child_session_id")
        if isinstance(child, str):
            span.set_attributes({"rho.child_session_id": child})
        for key in ("mcp_server", "mcp_tool"):  # an MCP call: its server and the server's name
            if isinstance(value := event.metadata.get(key), str):
                span.set_attributes({f"rho.{key.replace('_', '.')}": value})
        if event.is_error:
            span.set_status(Status(StatusCode.ERROR, event.content[:200]))
        span.end(end_time=_ns(event.at))

    # ------------------------------------------------------------------ children, end

    def for_child(self, child_session_id: str) -> Listener:
        """A recorder for a delegated child: its spans nest under the running ``delegate``
        call (the latest one, when several run), else under this session's run."""
        if self._delegates:
            parent_span: Span | None = self._tools[self._delegates[-1]]
        else:
            parent_span = self._run or self._session
        parent = trace.set_span_in_context(parent_span) if parent_span is not None else self.parent
        return SpanRecorder(
            self.tracer,
            session_id=child_session_id,
            parent=parent,
            provider=self.provider,
            capture_content=self.capture_content,
            session_span=False,  # the child's runs nest under the delegate call
        )

    def session_closed(self) -> None:
        """See ``EndsWithSession``: the session span ends with the session."""
        self.end()

    def end(self, at: float | None = None) -> None:
        """End the session span (at ``at``, else the last event's time). Idempotent."""
        if self._session is not None:
            self._session.end(end_time=_ns(at if at is not None else self._last_at))
            self._session = None
