"""The filesystem session store and signals: ``<home>/sessions/<id>/``.

- ``FileSessionStore`` (SessionStore): config.yaml, meta.json, trace.jsonl, a lock, heartbeat.
- ``FileSignals`` (SignalSource): the ``cancel``, ``pause`` and ``directives.jsonl`` files, and
  ``request_cancel`` / ``request_pause`` / ``request_resume`` / ``add_directive`` for the
  process that controls a session from outside.
- ``state_from_jsonl``: resume by replaying a trace.
- ``load_recording``: read a session (record and events) without its lock, for replay and fork.

Names are imported lazily so that the monitor (layout and signals only) never loads yaml or
cattrs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rho_domain.lazy_names import lazy_names

_EXPORTS = {
    "FileSessionStore": ".files",
    "FileSessions": ".control",
    "list_sessions": ".listing",
    "SessionPaths": ".layout",
    "resolve": ".layout",
    "FileSignals": ".signals",
    "add_directive": ".directive_lines",
    "read_directives": ".directive_lines",
    "request_cancel": ".signals",
    "request_pause": ".signals",
    "request_resume": ".signals",
    "TornTraceWarning": ".trace",
    "parse_trace": ".trace",
    "read_trace": ".trace",
    "state_from_jsonl": ".trace",
    "Recording": ".recording",
    "load_recording": ".recording",
}

__all__ = [
    "FileSessionStore",
    "FileSessions",
    "FileSignals",
    "Recording",
    "SessionPaths",
    "TornTraceWarning",
    "add_directive",
    "list_sessions",
    "load_recording",
    "parse_trace",
    "read_directives",
    "read_trace",
    "request_cancel",
    "request_pause",
    "request_resume",
    "resolve",
    "state_from_jsonl",
]

if TYPE_CHECKING:
    from rho_adapters.store.control import FileSessions
    from rho_adapters.store.directive_lines import add_directive, read_directives
    from rho_adapters.store.files import FileSessionStore
    from rho_adapters.store.layout import SessionPaths, resolve
    from rho_adapters.store.listing import list_sessions
    from rho_adapters.store.recording import Recording, load_recording
    from rho_adapters.store.signals import (
        FileSignals,
        request_cancel,
        request_pause,
        request_resume,
    )
    from rho_adapters.store.trace import (
        TornTraceWarning,
        parse_trace,
        read_trace,
        state_from_jsonl,
    )


__getattr__ = lazy_names(__name__, _EXPORTS)
