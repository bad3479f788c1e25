"""``rho-agent export ID [--dir DIR | --store URL] [--format rho|atif|trace]``: print a session.

``rho`` (default): ``{"session": <its listing>, "config": <its stored config>, "events":
[<every trace event>]}``; events are validated through the codec (a torn last line is skipped
with a warning on stderr). ``atif``: Harbor's ATIF v1.8 trajectory (``rho_adapters.atif``);
each delegated child session is embedded in ``subagent_trajectories`` and referred to by
``trajectory_id``. ``trace``: the trace.jsonl bytes, the same from PostgreSQL as from files.
Read through the store's ``SessionCatalog`` (``rho_entry.config.stores``). ``-o FILE`` writes
the document to FILE instead of standard output and refuses an existing FILE unless ``--force``
(the reference implementation overwrote it without asking).
"""

from __future__ import annotations

import contextlib
import json
import logging
import sys
import warnings
from collections.abc import Coroutine, Iterator, Sequence
from typing import Any, TypeVar

from rho_domain.errors import ConfigError, RhoError, StoreError
from rho_domain.events import Event, ToolEnded
from rho_domain.ports.session_control import SessionCatalog
from rho_domain.ports.store import SessionRecord
from rho_domain.run import spelled_whole
from rho_entry.cli.terminal_text import json_visible, visible
from rho_entry.config.stores import run_sync
from rho_entry.usage import UsageParser, parsed

T = TypeVar("T")
log = logging.getLogger("rho_entry.export")


def main(argv: Sequence[str]) -> int:
    """``rho-agent export ID``: print a session as one JSON document; returns the exit code."""
    parser = UsageParser(
        prog="rho-agent export", description="Print a session's trace as one JSON document."
    )
    parser.add_argument("id", help="session id, unique prefix, 'latest' or a directory")
    parser.add_argument("-d", "--dir", help="rho-agent home or sessions directory")
    parser.add_argument("-o", "--output", metavar="FILE", help="write to FILE, not stdout")
    parser.add_argument("--force", action="store_true", help="overwrite an existing -o FILE")
    parser.add_argument("--store", metavar="URL", help="the session store (as rho-agent --store)")
    parser.add_argument("--indent", type=int, default=None, help="pretty-print")
    parser.add_argument(
        "--format",
        choices=("rho", "atif", "trace"),
        default="rho",
        help="rho: the session and its events as JSON (default); atif: Harbor's ATIF v1.8 "
        "trajectory; trace: trace.jsonl's bytes, from any store",
    )
    ns = parsed(parser, argv)
    if isinstance(ns, int):
        return ns
    if ns.force and ns.output is None:
        print("rho-agent export: --force only goes with -o FILE", file=sys.stderr)
        return 1
    logging.basicConfig(format="rho-agent export: %(message)s", level=logging.WARNING)
    try:
        if ns.format == "trace":
            data = export_trace(ns.id, ns.dir, store=ns.store)
            if ns.output is not None:
                return _write(ns.output, data, force=ns.force)
            if sys.stdout.isatty():  # a trace is data: a terminal is shown it, never obeys it
                sys.stdout.write(visible(data.decode("utf-8", "backslashreplace")))
                return 0
            sys.stdout.flush()
            sys.stdout.buffer.write(data)  # a file or a pipe gets the bytes as stored
            sys.stdout.flush()
            return 0
        if ns.format == "atif":
            document = export_atif(ns.id, ns.dir, store=ns.store)
        else:
            document = export_session(ns.id, ns.dir, store=ns.store)
    except RhoError as exc:
        print(visible(f"rho-agent export: {exc}"), file=sys.stderr)
        return 1
    text = json_visible(json.dumps(document, indent=ns.indent, ensure_ascii=False))
    if ns.output is not None:
        return _write(ns.output, (text + "\n").encode(), force=ns.force)
    print(text)
    return 0


def _write(path: str, data: bytes, *, force: bool) -> int:
    """``data`` into ``path``: created, or replaced only when ``force``; the exit code. An
    existing file is refused at the open itself (``x``), so one made meanwhile is kept too."""
    try:
        with open(path, "wb" if force else "xb") as out:
            out.write(data)
    except FileExistsError:
        print(
            visible(
                f"rho-agent export: --output {path}: the file exists; add --force to overwrite it"
            ),
            file=sys.stderr,
        )
        return 1
    except OSError as exc:
        print(visible(f"rho-agent export: --output {path}: {exc.strerror or exc}"), file=sys.stderr)
        return 1
    print(visible(f"exported to {path}"), file=sys.stderr)
    return 0


def export_session(
    ref: str, directory: str | None = None, *, store: str | None = None
) -> dict[str, object]:
    """The export document of one session: its listing (``session``), its stored config and
    its events, read through the store's ``SessionCatalog``. The config is shown as a store
    keeps one now (``stores.kept_config``: no secrets), whatever an older version wrote."""
    import attrs

    from rho_adapters.codec import config_to_dict, event_to_dict
    from rho_entry.config.stores import kept_config

    with _catalog(directory, store) as catalog:
        info = _run(catalog.info(ref))
        record, events = _recording(catalog, spelled_whole(info.id))
    session = attrs.asdict(info)
    session["labels"] = dict(info.labels)
    return {
        "format": "rho-agent.session",
        "version": 1,
        "session": session,
        "config": None if record is None else kept_config(config_to_dict(record.config)),
        "events": [event_to_dict(e) for e in events],
    }


def _recording(
    catalog: SessionCatalog, session_id: str
) -> tuple[SessionRecord | None, Sequence[Event]]:
    """The session's record and events; when its stored config cannot be read (another
    version's key, a hand edit, a file cut short) its events alone, the refusal logged as a
    warning: an export loses nothing the store still holds. Before, such a session's events
    could not be exported at all."""
    try:
        return _run(catalog.recording(session_id))
    except ConfigError as exc:  # the config's words; a missing file or trace still refuses
        refused = exc
    from rho_adapters.codec import decode_event_line

    try:
        lines = _run(catalog.trace(session_id))
    except RhoError:
        raise refused from None  # the trace is unreadable too: the first refusal says why
    log.warning('%s; its events are exported without it ("config": null)', refused)
    # a line that does not decode is refused as the store's reading refuses one
    return None, [decode_event_line(line.data) for line in lines]


def export_trace(ref: str, directory: str | None = None, *, store: str | None = None) -> bytes:
    """The session's trace as stored: the bytes of its trace.jsonl (from any store: a session
    kept in PostgreSQL exports the same bytes a file store would have written)."""
    with _catalog(directory, store) as catalog:
        lines = _run(catalog.trace(_run(catalog.info(ref)).id))
    return b"".join(line.data + b"\n" for line in lines)


def export_atif(
    ref: str, directory: str | None = None, *, store: str | None = None
) -> dict[str, object]:
    """The ATIF v1.8 trajectory of one session (model name from its first model call, else
    the listing's), its delegated children embedded (each read from the same store, by its
    exact id; one that is gone is named in the result's ``extra``)."""
    from rho_adapters.atif import trajectory
    from rho_entry.version import VERSION

    with _catalog(directory, store) as catalog:

        def document(
            session_id: str, model: object, events: Sequence[Event], depth: int
        ) -> dict[str, object]:
            children: dict[str, dict[str, object]] = {}
            for child in _child_ids(events) if depth < _MAX_DEPTH else ():
                # the trace is data: a child is named exactly, never by a prefix or "latest"
                try:
                    info = _run(catalog.info(child))
                    if info.id != child:
                        continue
                    _, child_events = _recording(catalog, child)
                except StoreError:  # gone (or unreadable): named in the result, not embedded
                    continue
                children[child] = document(child, info.model, child_events, depth + 1)
            return trajectory(
                events,
                session_id=session_id,
                agent_version=VERSION,
                model_name=None if any(e.kind == "llm_end" for e in events) else _text(model),
                children=children,
            )

        info = _run(catalog.info(ref))
        _, events = _recording(catalog, info.id)
        return document(info.id, info.model, events, 0)


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


@contextlib.contextmanager
def _catalog(directory: str | None, flag: str | None) -> Iterator[SessionCatalog]:
    """The store's catalog, closed when the block ends (a PostgreSQL one holds a share of
    the process's pool for its URL)."""
    from rho_entry.cli.monitor import sessions_root
    from rho_entry.config.settings import environment
    from rho_entry.config.stores import choose_operator, close_store_sync, store_setting

    env = environment()
    url, origin = store_setting(flag, env)
    if url is None or directory is not None:
        url, origin = str(sessions_root(directory)), "--dir" if directory else origin
    catalog = choose_operator(url, env, origin=origin).sessions
    try:
        yield catalog
    finally:
        close_store_sync(catalog)


def _run(work: Coroutine[Any, Any, T]) -> T:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the store logs a torn line; do not print it twice
        return run_sync(work)


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None
