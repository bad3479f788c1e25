"""``rho-agent export ID [--dir DIR]``: print a session as one JSON document.

``{"session": <meta.json>, "config": <config.yaml>, "events": [<every trace event>]}``; events
are validated through the codec (a torn last line is skipped with a warning on stderr).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Sequence

from rho_domain.errors import RhoError


def main(argv: Sequence[str]) -> int:
    """``rho-agent export ID``: print a session as one JSON document; returns the exit code."""
    parser = argparse.ArgumentParser(
        prog="rho-agent export", description="Print a session's trace as one JSON document."
    )
    parser.add_argument("id", help="session id, unique prefix, 'latest' or a directory")
    parser.add_argument("--dir", help="rho-agent home or sessions directory")
    parser.add_argument("--indent", type=int, default=None, help="pretty-print")
    try:
        ns = parser.parse_args(list(argv))
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 1
    logging.basicConfig(format="rho-agent export: %(message)s", level=logging.WARNING)
    try:
        document = export_session(ns.id, ns.dir)
    except RhoError as exc:
        print(f"rho-agent export: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(document, indent=ns.indent, ensure_ascii=False))
    return 0


def export_session(ref: str, directory: str | None = None) -> dict[str, object]:
    """The export document of one session."""
    import warnings

    import yaml

    from rho_adapters.codec import event_to_dict
    from rho_adapters.store.layout import read_meta, resolve
    from rho_adapters.store.trace import read_trace
    from rho_entry.monitor import sessions_root

    paths = resolve(sessions_root(directory), ref)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the store logs the torn line; do not print it twice
        events = read_trace(paths.trace).events
    try:
        config = yaml.safe_load(paths.config.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        config = None
    return {
        "format": "rho-agent.session",
        "version": 1,
        "session": read_meta(paths),
        "config": config,
        "events": [event_to_dict(e) for e in events],
    }
