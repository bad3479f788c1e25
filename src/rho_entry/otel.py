"""OpenTelemetry for library users: ``instrument(session)`` / ``with traced(session):``.

Needs the ``otel`` extra (opentelemetry-api). Without it nothing here is imported by the rest of
rho-agent, so sessions that are not instrumented pay nothing; calling ``instrument`` without
the extra raises ``MissingExtra`` naming it. Spans go to the tracer provider given, else the
global one (configure the SDK and an exporter yourself, see docs/observability.md). The session
span ends when the session closes (``Session.close``, ``async with``). The CLI records spans
for every session when the process has an SDK set up (``instrument_if_configured``).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeAlias

from rho_adapters.extras import missing_extra

if TYPE_CHECKING:
    from rho_adapters.otel import SpanRecorder
    from rho_domain.loop.session import Session as DomainSession
    from rho_entry.facade import Session as LibrarySession

    Session: TypeAlias = DomainSession | LibrarySession  # both show id, agent, journal

TRACER_NAME = "rho-agent"


def instrument(
    session: Session,
    *,
    tracer_provider: Any = None,
    provider: str | None = None,
    capture_content: bool = False,
) -> SpanRecorder:
    """Record ``session``'s spans (and its delegated children's) from now on.

    ``tracer_provider``: an OpenTelemetry ``TracerProvider`` (default: the global one).
    ``provider``: the ``gen_ai.provider.name`` to stamp (``openai``, ``anthropic``...).
    ``capture_content``: also record prompts, tool arguments and tool results (off: they may
    hold secrets). Call ``end()`` on the result when the session is done (``traced`` does).
    """
    try:
        from opentelemetry import trace
    except ImportError as exc:
        raise missing_extra("opentelemetry-api", "otel", "OpenTelemetry spans") from exc
    from rho_adapters.otel import SpanRecorder
    from rho_entry.version import VERSION

    source = tracer_provider if tracer_provider is not None else trace.get_tracer_provider()
    recorder = SpanRecorder(
        source.get_tracer(TRACER_NAME, VERSION),
        session_id=session.id,
        provider=provider or session.agent.config.provider,
        capture_content=capture_content,
    )
    session.journal.listeners.append(recorder)
    return recorder


def instrument_if_configured(session: Session, **options: Any) -> SpanRecorder | None:
    """``instrument(session, **options)`` when this process has set OpenTelemetry up (an SDK
    tracer provider is the global one, as ``opentelemetry-instrument rho-agent ...`` or a
    ``sitecustomize`` does), else None. Imports nothing that is not already imported: the CLI
    asks for every session, and costs nothing when tracing is not set up."""
    trace = sys.modules.get("opentelemetry.trace")
    if trace is None:
        return None
    unset = (trace.ProxyTracerProvider, trace.NoOpTracerProvider)
    if isinstance(trace.get_tracer_provider(), unset):
        return None
    return instrument(session, **options)


@contextmanager
def traced(session: Session, **options: Any) -> Iterator[SpanRecorder]:
    """``instrument(session, **options)`` for the ``with`` block; the session span ends with
    the block and the recorder is detached."""
    recorder = instrument(session, **options)
    try:
        yield recorder
    finally:
        recorder.end()
        if recorder in session.journal.listeners:
            session.journal.listeners.remove(recorder)
