"""Reading a stored session without driving it: no lock is taken, nothing is written.

For replaying (``rho_entry.replay``) and forking (``rho-agent fork``) a session that another
process may be running, or that finished long ago.
"""

from __future__ import annotations

import os
from pathlib import Path

import attrs

from rho_adapters.codec import config_from_dict
from rho_adapters.store.confined import read_bytes
from rho_adapters.store.layout import SessionPaths, read_meta
from rho_adapters.store.trace import read_trace
from rho_domain import events as ev
from rho_domain.errors import ConfigError, StoredConfigInvalid, StoreError
from rho_domain.ports.store import SessionRecord
from rho_domain.value_methods import value_eq, value_hash, value_repr

STORED_CONFIG_HINT = (
    ". The session's config was written by another rho-agent version or edited: upgrade "
    "rho-agent to read it, or correct that key in the file; its trace is unchanged"
)
"""Said after a stored config's refusal: it named the key ("unknown key 'new_setting' @
config") but not why a file rho-agent wrote itself would hold one, nor what to do."""


@attrs.frozen(kw_only=True)
class Recording:
    """A stored session: its record (config, parent) and its persisted events."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    record: SessionRecord
    events: tuple[ev.Event, ...]


def load_recording(path: str | Path) -> Recording:
    """Read a session directory (or its ``trace.jsonl``) without taking its lock.

    Raises StoreError naming the path when it is not a session directory, or when a file of it
    is a link (``confined``).
    """
    where = Path(os.path.expanduser(path))
    directory = where.parent if where.name == "trace.jsonl" else where
    paths = SessionPaths(directory)
    if not paths.config.is_file() or not paths.trace.is_file():
        raise StoreError(
            f"{where}: not a session directory (expected config.yaml and trace.jsonl in it)"
        )
    events = read_trace(paths.trace).events
    record = read_record(paths, first_at=events[0].at if events else 0.0)
    return Recording(record=record, events=events)


CONFIG_BYTES = 16 << 20
"""The most config.yaml may hold: four times the text the largest context window holds (its
system prompt is the one long value), so nothing rho-agent runs is refused. Every listing
reads every session's config.yaml (the profile it shows): one planted past this (a sparse
file of gigabytes), read whole, made ``--list``, ``monitor ps`` and a server's listing fail
for every session (MemoryError), and the session's resume with it."""


def read_record(paths: SessionPaths, *, first_at: float = 0.0) -> SessionRecord:
    """The record of a stored session: config.yaml (validated: unknown keys are refused) and
    meta.json's labels and parent. ``first_at`` is the creation time when meta.json has none.

    Raises StoreError when config.yaml is missing, a link or larger than ``CONFIG_BYTES``,
    ConfigError when it is invalid.
    """
    try:
        text = read_bytes(paths.config, limit=CONFIG_BYTES).decode("utf-8")
    except FileNotFoundError:
        raise StoreError(f"{paths.dir} has no config.yaml; it is not a complete session") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise StoreError(f"cannot read {paths.config}: {exc}") from exc
    import yaml  # here: a session that is only written (a one-shot's) never loads it

    from rho_adapters.yaml_aliases import bounded_loader  # a session directory is data

    try:
        # libyaml's loader when present: the pure-Python one costs ~6 ms a config, which a
        # listing that reads every session's config (``FileSessionStore.list``) multiplies
        raw = yaml.load(text, Loader=bounded_loader())  # noqa: S506
    except yaml.YAMLError as exc:
        from rho_adapters.yaml_aliases import yaml_problem

        problem = yaml_problem(exc, text)
        raise StoredConfigInvalid(f"{paths.config}: invalid YAML: {problem}") from exc
    try:
        config = config_from_dict(raw, source=str(paths.config))
    except ConfigError as exc:
        raise StoredConfigInvalid(f"{exc}{STORED_CONFIG_HINT}") from exc
    meta = read_meta(paths)
    labels = meta.get("labels")
    parent = meta.get("parent_id")
    return SessionRecord(
        id=paths.id,
        created_at=float(meta.get("created_at") or first_at),
        config=config,
        parent_id=parent if isinstance(parent, str) else None,
        labels={str(k): str(v) for k, v in labels.items()} if isinstance(labels, dict) else {},
    )
