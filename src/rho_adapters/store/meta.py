"""meta.json: the session's summary for listings, kept current while the session is open.

The trace is the source of truth; meta.json is a cache of it plus process facts (pid, host,
heartbeat). It is rewritten atomically on status changes and by the process's one heartbeat
thread (``heartbeat.py``), so a reader never sees half a file and liveness works even while a
session is paused or idle.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from rho_adapters.store.heartbeat import HEARTBEATS, Heartbeats
from rho_adapters.store.layout import SessionPaths, host_name, write_atomic
from rho_adapters.store.stored_config import stored_config, without_secrets
from rho_domain import events as ev
from rho_domain.messages import Usage
from rho_domain.permissions import BUILTIN_PROFILES, PermissionProfile, builtin_as_made
from rho_domain.placement import Placement, kept
from rho_domain.ports.store import SessionRecord, first_prompt_summary

if TYPE_CHECKING:
    from rho_domain.ports.session_info import SessionInfo

__all__ = [
    "MetaFile",
    "fold_events",
    "info_from_meta",
    "initial_meta",
    "meta_text",
    "profile_label",
    "stored_config",
    "summarize_trace",
    "usage_of",
    "without_secrets",
]

log = logging.getLogger("rho_adapters.store")


def initial_meta(record: SessionRecord) -> dict[str, Any]:
    """meta.json for a new session."""
    profile = record.config.profile
    return {
        "id": record.id,
        "status": "created",
        "created_at": record.created_at,
        "updated_at": record.created_at,
        "model": record.config.model,
        # what the profile grants, not only its name (``profile_grants.label``)
        "profile": profile_label(profile),
        "working_dir": record.config.working_dir,
        "first_prompt": "",
        "labels": dict(record.labels),
        "parent_id": record.parent_id,
        "pid": None,
        "host": None,
        "heartbeat": None,
        "runs": 0,
        "usage": attrs.asdict(Usage()),
    }


def profile_label(profile: str | PermissionProfile) -> str:
    """How listings show a stored profile: a built-in name when it grants exactly that
    built-in, else the name with a ``*`` and what it grants; a profile named by a file path
    is marked too (what it grants is checked when the session is resumed)."""
    if isinstance(profile, PermissionProfile):
        if builtin_as_made(profile):
            return profile.name
        # Grants are compared (and their module imported) for a profile not built-in as made.
        from rho_domain.profile_grants import label

        return label(profile)
    if profile in BUILTIN_PROFILES:
        return profile
    return f"{profile}* (a profile file, checked when the session is resumed)"


# Compaction and approvals: by kind, so that the events of a run that goes as planned never
# ask for these classes (``rho_domain.events`` imports them with the first one emitted or read).
_DURABLE_KINDS = frozenset({"compact", "approval_requested", "approval_resolved"})


def fold_events(meta: dict[str, Any], events: Iterable[ev.Event]) -> bool:
    """Update ``meta`` from events; True when the status changed (worth a durable write)."""
    changed = False
    for event in events:
        meta["updated_at"] = max(float(meta.get("updated_at") or 0.0), event.at)
        match event:
            case ev.RunStarted(prompt=prompt, placement=placement):
                meta["status"], meta["runs"], changed = "running", meta.get("runs", 0) + 1, True
                if prompt and not meta.get("first_prompt"):
                    meta["first_prompt"] = first_prompt_summary(prompt)
                _keep_placement(meta, placement)
            case ev.RunEnded(status=status, session_usage=usage, placement=placement):
                meta["status"], meta["usage"], changed = status, usage, True
                _keep_placement(meta, placement)
            case _ if event.kind == "placed":  # a sandbox the run has just made
                _keep_placement(meta, event.placement)  # type: ignore[union-attr]
                changed = True  # durable now: the run may die before its end
            case ev.UsageRecorded(usage=usage):
                meta["usage"] = usage_of(meta) + usage  # a Usage until written: cheaper
            case ev.LLMStarted(model=model) if model:
                meta["model"] = model  # the model in use now (a resume may have changed it)
            case _ if event.kind in _DURABLE_KINDS:
                changed = True
    return changed


def _keep_placement(meta: dict[str, Any], told: Placement | None) -> None:
    """meta.json's ``placement`` after a run told ``told`` (``placement.kept``)."""
    known = Placement.from_plain(meta.get("placement"))
    now = kept(known, told)
    if now is not None and now != known:
        meta["placement"] = {"backend": now.backend, "id": now.id}


def summarize_trace(meta: dict[str, Any], events: Sequence[ev.Event]) -> None:
    """``fold_events`` over a whole trace, in time proportional to the last run only: the last
    ``run_end`` already carries the session's status and usage totals."""
    last_end = next(
        (i for i in range(len(events) - 1, -1, -1) if isinstance(events[i], ev.RunEnded)), None
    )
    first = next((e for e in events if isinstance(e, ev.RunStarted) and e.prompt), None)
    if first is not None:
        meta["first_prompt"] = first_prompt_summary(first.prompt or "")
    latest = next((e for e in reversed(events) if isinstance(e, ev.LLMStarted) and e.model), None)
    if latest is not None:
        meta["model"] = latest.model
    if last_end is not None:
        fold_events(meta, events[last_end : last_end + 1])
    fold_events(meta, events[0 if last_end is None else last_end + 1 :])
    meta["runs"] = sum(1 for e in events if isinstance(e, ev.RunStarted))
    if events:
        meta["updated_at"] = max(float(meta["updated_at"]), events[-1].at)


def info_from_meta(
    session_id: str,
    meta: Mapping[str, Any],
    *,
    status: str,
    liveness: str,
    labels: object,
    holder: str | None,
) -> SessionInfo:
    """A listing line from a meta.json summary (a file's, or the one PostgreSQL keeps): the
    store gives what it judges itself (status, liveness, the holder) and the labels it
    keeps; a label map that is not one counts as none."""
    # Imported by the listings, which alone build one: a run writes meta.json, never a line.
    from rho_domain.ports.session_info import SessionInfo

    created = float(meta.get("created_at") or 0.0)
    updated = float(meta.get("updated_at") or created)
    beat = meta.get("heartbeat")
    if liveness == "stale" and isinstance(beat, int | float) and not isinstance(beat, bool):
        # its process died: the last heartbeat is its last sign of life (a long tool call or
        # a stalled model call records no event), not the last event
        updated = max(updated, float(beat))
    return SessionInfo(
        id=session_id,
        status=status,
        liveness=liveness,
        created_at=created,
        updated_at=updated,
        model=str(meta.get("model", "")),
        profile=str(meta.get("profile", "")),
        first_prompt=str(meta.get("first_prompt", "")),
        usage=usage_of(meta),
        working_dir=meta.get("working_dir"),
        parent_id=meta.get("parent_id"),
        labels={str(k): str(v) for k, v in labels.items()} if isinstance(labels, Mapping) else {},
        holder=holder,
        placement=Placement.from_plain(meta.get("placement")),
    )


def usage_of(meta: Mapping[str, Any]) -> Usage:
    """Usage from its meta.json form (missing keys are zero)."""
    raw = meta.get("usage")
    if isinstance(raw, Usage):
        return raw
    if not isinstance(raw, Mapping):
        return Usage()
    fields = {f.name for f in attrs.fields(Usage)}
    try:
        return Usage(**{k: v for k, v in raw.items() if k in fields})
    except TypeError:
        return Usage()


class MetaFile:
    """meta.json of one open session: an in-memory dict written atomically, under a lock
    shared with the process's heartbeat thread (``heartbeat.HEARTBEATS``)."""

    def __init__(
        self,
        paths: SessionPaths,
        meta: dict[str, Any],
        *,
        heartbeat: float,
        beats: Heartbeats | None = None,
    ) -> None:
        self.paths = paths
        self._path = paths.meta  # built once: each write (four a session) names it
        self.data = meta
        self._lock = threading.Lock()
        self._interval = heartbeat
        self._beats = beats or HEARTBEATS
        self._beating = False
        self._written = 0.0  # time.monotonic() of the last write

    def fold(self, events: Iterable[ev.Event]) -> bool:
        """Apply events to the summary (see ``fold_events``); True when the status changed."""
        with self._lock:
            return fold_events(self.data, events)

    def write(self, *, durable: bool = True, parent: int | None = None) -> None:
        """Write meta.json atomically (``write_atomic``; ``durable=False`` skips the fsync;
        ``parent``: the session directory already open)."""
        with self._lock:
            if self.data.get("pid") is not None:
                self.data["heartbeat"] = time.time()
            payload = meta_text(self.data).encode()
            write_atomic(self._path, payload, durable=durable, parent=parent)
            self._written = time.monotonic()

    def beat(self) -> None:
        """A heartbeat: rewrite meta.json unless a write in the last half interval already
        carried a fresh heartbeat. Not fsynced: a heartbeat lost to a crash is a stale one."""
        if time.monotonic() - self._written >= self._interval / 2:
            self.write(durable=False)

    def start(self, *, parent: int | None = None) -> None:
        """Mark the session as held by this process and start beating. Not fsynced: the
        holder it names is what a heartbeat keeps fresh (a crash makes it stale anyway), and
        what the summary says is the trace's, which the run's start syncs together with
        meta.json (a session is created at its first run, so that sync follows at once)."""
        self.data.update(pid=os.getpid(), host=host_name())
        self.write(durable=False, parent=parent)
        self._beats.add(self, self._interval)
        self._beating = True

    def stop(self) -> None:
        """Stop beating and record that no process holds the session. Idempotent. Not
        fsynced: "no holder" is also what a crash leaves true (the heartbeat goes stale), and
        the status and usage it carries were synced with the run's end (``_Open.sync``);
        each fsync costs the store's worker threads ~3 ms of disk, and 1,000 sessions ending
        at once wait for them in turn."""
        if self._beating:
            self._beats.remove(self)
            self._beating = False
        self.data.update(pid=None, heartbeat=None)
        self.write(durable=False)


def meta_text(data: Mapping[str, Any]) -> str:
    """meta.json's text: one top-level key a line, sorted, as ``indent=2`` lays them out, each
    value on its key's line. Written with json's C encoder: ``indent=`` takes the pure-Python
    one, several times slower and leaving ~30 objects in reference cycles per write (its
    closures), which the garbage collector then had to find while the loop waited."""
    if not data:
        return "{}"
    lines = [f"  {_key(key)}: {_value(data[key])}" for key in sorted(data)]
    return "{\n" + ",\n".join(lines) + "\n}"


def _plain(value: Any) -> Any:
    if isinstance(value, Usage):
        return attrs.asdict(value)
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


# One encoder for every value: ``json.dumps`` with any argument builds a new JSONEncoder per
# call, two calls a key and ~16 keys a write, 4 writes a session (a third of a write's CPU,
# in the store's worker threads, which hold the GIL the loop waits for). A key is a str,
# which ``json.dumps`` encodes with this same function.
_value = json.JSONEncoder(sort_keys=True, default=_plain).encode
_key = json.encoder.encode_basestring_ascii
