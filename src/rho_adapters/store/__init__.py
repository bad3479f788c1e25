"""The filesystem session store and signals: ``<home>/sessions/<id>/``.

- ``FileSessionStore`` (SessionStore): config.yaml, meta.json, trace.jsonl, a lock, heartbeat.
- ``FileSignals`` (SignalSource): the ``cancel``, ``pause`` and ``directives.jsonl`` files, and
  ``request_cancel`` / ``request_pause`` / ``request_resume`` / ``add_directive`` for the
  process that controls a session from outside.
- ``state_from_jsonl``: resume by replaying a trace.
"""

from rho_adapters.store.files import FileSessionStore, list_sessions
from rho_adapters.store.layout import SessionPaths, resolve
from rho_adapters.store.signals import (
    FileSignals,
    add_directive,
    request_cancel,
    request_pause,
    request_resume,
)
from rho_adapters.store.trace import TornTraceWarning, parse_trace, read_trace, state_from_jsonl

__all__ = [
    "FileSessionStore",
    "FileSignals",
    "SessionPaths",
    "TornTraceWarning",
    "add_directive",
    "list_sessions",
    "parse_trace",
    "read_trace",
    "request_cancel",
    "request_pause",
    "request_resume",
    "resolve",
    "state_from_jsonl",
]
