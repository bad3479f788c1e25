"""``rho-agent export ID [--dir DIR] [--format rho|atif]``: print a session as one JSON document.

``rho`` (default): ``{"session": <meta.json>, "config": <config.yaml>, "events": [<every trace
event>]}``; events are validated through the codec (a torn last line is skipped with a warning
on stderr). ``atif``: Harbor's ATIF v1.8 trajectory (``rho_adapters.atif``); each delegated
child session is embedded in ``subagent_trajectories`` and referred to by ``trajectory_id``.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Sequence

from rho_domain.errors import RhoError, StoreError
from rho_domain.events import Event, ToolEnded
from rho_entry.terminal_text import json_visible, visible
from rho_entry.usage import UsageParser


def main(argv: Sequence[str]) -> int:
    """``rho-agent export ID``: print a session as one JSON document; returns the exit code."""
    parser = UsageParser(
        prog="rho-agent export", description="Print a session's trace as one JSON document."
    )
    parser.add_argument("id", help="session id, unique prefix, 'latest' or a directory")
    parser.add_argument("--dir", help="rho-agent home or sessions directory")
    parser.add_argument("--indent", type=int, default=None, help="pretty-print")
    parser.add_argument(
        "--format",
        choices=("rho", "atif"),
        default="rho",
        help="rho: the trace as stored (default); atif: Harbor's ATIF v1.8 trajectory",
    )
    try:
        ns = parser.parse_args(list(argv))
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 1
    logging.basicConfig(format="rho-agent export: %(message)s", level=logging.WARNING)
    try:
        if ns.format == "atif":
            document = export_atif(ns.id, ns.dir)
        else:
            document = export_session(ns.id, ns.dir)
    except RhoError as exc:
        print(visible(f"rho-agent export: {exc}"), file=sys.stderr)
        return 1
    print(json_visible(json.dumps(document, indent=ns.indent, ensure_ascii=False)))
    return 0


def export_session(ref: str, directory: str | None = None) -> dict[str, object]:
    """The export document of one session."""
    import warnings

    import yaml

    from rho_adapters.codec import event_to_dict
    from rho_adapters.store.confined import read_bytes
    from rho_adapters.store.layout import read_meta, resolve
    from rho_adapters.store.trace import read_trace
    from rho_entry.cli.monitor import sessions_root

    paths = resolve(sessions_root(directory), ref)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the store logs the torn line; do not print it twice
        events = read_trace(paths.trace).events
    try:  # never through a link (``confined``): an export must not carry an outside file
        config = yaml.safe_load(read_bytes(paths.config).decode("utf-8", errors="replace"))
    except (OSError, StoreError, yaml.YAMLError):
        config = None
    return {
        "format": "rho-agent.session",
        "version": 1,
        "session": read_meta(paths),
        "config": config,
        "events": [event_to_dict(e) for e in events],
    }


def export_atif(ref: str, directory: str | None = None) -> dict[str, object]:
    """The ATIF v1.8 trajectory of one session (model name from its first model call, else
    meta.json), its delegated children embedded (each read from its own session directory;
    one that is gone is named in the result's ``extra``)."""
    import warnings

    from rho_adapters.atif import trajectory
    from rho_adapters.store.layout import SessionPaths, read_meta, resolve
    from rho_adapters.store.trace import read_trace
    from rho_entry.cli.monitor import sessions_root
    from rho_entry.version import VERSION

    def document(paths: SessionPaths, depth: int) -> dict[str, object]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the store logs the torn line; do not print it twice
            events = read_trace(paths.trace).events
        children: dict[str, dict[str, object]] = {}
        for child in _child_ids(events) if depth < _MAX_DEPTH else ():
            # A child is a sibling directory named exactly by its id (the trace is data: never
            # a prefix, "latest" or a path), and never a link.
            found = paths.dir.parent / child
            if not found.is_symlink() and (found / "trace.jsonl").is_file():
                children[child] = document(SessionPaths(found), depth + 1)
        model = read_meta(paths).get("model")
        return trajectory(
            events,
            session_id=paths.id,
            agent_version=VERSION,
            model_name=None if any(e.kind == "llm_end" for e in events) else _text(model),
            children=children,
        )

    return document(resolve(sessions_root(directory), ref), 0)


# Delegation is one level deep; a stored trace claiming more is not followed further.
_MAX_DEPTH = 2


def _child_ids(events: Sequence[Event]) -> list[str]:
    """The child session ids a session's delegate results name, in order, once each."""
    found: dict[str, None] = {}
    for event in events:
        child = event.metadata.get("child_session_id") if isinstance(event, ToolEnded) else None
        if isinstance(child, str) and child and "/" not in child and not child.startswith("."):
            found[child] = None
    return list(found)


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None
