"""The session directory layout and the small file primitives shared by store and monitor.

``<root>/<id>/`` holds ``config.yaml``, ``meta.json``, ``trace.jsonl``, ``lock`` and the control
files ``cancel``, ``pause`` and ``directives.jsonl``. ``root`` is ``<home>/sessions``; the entry
layer decides ``home`` ($RHO_AGENT_HOME, else $XDG_CONFIG_HOME/rho-agent, else
~/.config/rho-agent) and passes the path in.
"""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import attrs

from rho_adapters import unnamed
from rho_adapters.store.confined import parent_fd, read_bytes
from rho_domain.errors import SessionNotFound, StoreError
from rho_domain.ports.store import EMPTY_ID
from rho_domain.run import ambiguous, is_plain_id, takes_exact, whole_id_of
from rho_domain.value_methods import value_eq, value_hash, value_repr

HEARTBEAT_SECONDS = 2.0
"""How often an open session rewrites meta.json, even while paused or idle."""

STALE_AFTER_SECONDS = 15.0
"""A heartbeat older than this means the process is gone (several missed beats)."""

FINAL_STATUSES = frozenset(
    {
        "completed",
        "cancelled",
        "error",
        "max_turns",
        "budget_exceeded",
        "awaiting_approval",
        "stuck",
    }
)


@attrs.frozen
class SessionPaths:
    """Where each file of one session lives."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    dir: Path

    @property
    def id(self) -> str:
        """The session id (the directory's name)."""
        return self.dir.name

    @property
    def config(self) -> Path:
        """``config.yaml``: the config snapshot."""
        return self.dir / "config.yaml"

    @property
    def meta(self) -> Path:
        """``meta.json``: the cache of the trace plus liveness."""
        return self.dir / "meta.json"

    @property
    def trace(self) -> Path:
        """``trace.jsonl``: the events, the source of truth."""
        return self.dir / "trace.jsonl"

    @property
    def torn(self) -> Path:
        """Where a torn trace tail is moved on open, kept for forensics."""
        return self.dir / "trace.torn"

    @property
    def lock(self) -> Path:
        """``lock``: held with flock by the driving process."""
        return self.dir / "lock"

    @property
    def cancel(self) -> Path:
        """``cancel``: present while a cancel is requested."""
        return self.dir / "cancel"

    @property
    def pause(self) -> Path:
        """``pause``: present while the session is paused."""
        return self.dir / "pause"

    @property
    def directives(self) -> Path:
        """``directives.jsonl``: operator directives, one per line, never truncated."""
        return self.dir / "directives.jsonl"


def host_name() -> str:
    """This machine's host name (meta.json records it with the pid)."""
    return socket.gethostname()


def write_atomic(
    path: Path, data: bytes, *, durable: bool = True, levels: int = 1, parent: int | None = None
) -> None:
    """Replace ``path`` with ``data`` so that readers see the old or the new file, never half:
    an unnamed file in the same directory (``rho_adapters.unnamed``: a process killed while
    writing leaves no temp file behind), fsync (unless not ``durable``), then linked to a temp
    name renamed over ``path``, inside the directory opened without following links
    (``confined``); a link at ``path`` is replaced, not followed. Without ``O_TMPFILE``, the
    temp file is named from the start (created new: ``O_EXCL``, never through a link).
    ``parent``: that directory already open (``confined.parent_fd``)."""
    # unpredictable: a name planted in advance (O_EXCL, linkat refuse it) cannot block the
    # write (os.urandom is what secrets.token_hex reads, without importing hmac and hashlib)
    tmp = f".{path.name}.{os.getpid()}.{os.urandom(6).hex()}.tmp"

    def fill(fd: int) -> None:
        unnamed.write_all(fd, data)
        if durable:
            os.fsync(fd)

    with parent_fd(path, levels, parent) as opened:
        unnamed.replace_whole(opened, path.name, tmp, 0o600, fill)


META_BYTES = 1 << 20
"""The most meta.json may hold: what rho-agent writes there is a summary of a few KiB (its
first prompt and labels are cut short); every listing reads every session's, so one planted
past this (a sparse file of gigabytes) made ``--list``, ``monitor ps`` and a server's
``GET /api/sessions`` fail for every session (MemoryError)."""


def read_meta(paths: SessionPaths) -> dict[str, Any]:
    """meta.json as a dict; empty when missing, unreadable, a link or larger than
    ``META_BYTES`` (a listing must not fail, and never reads a file outside the session
    directory), and without a known field of another type (``meta_fields.typed_meta``)."""
    try:
        data = json.loads(read_bytes(paths.meta, limit=META_BYTES))
    except (OSError, ValueError, RecursionError, StoreError):
        return {}
    if not isinstance(data, dict):
        return {}
    from rho_adapters.store.meta_fields import typed_meta  # another version's: fields dropped

    return typed_meta(data, paths.meta)


NAME_MAX = 255
"""The longest file name, in bytes, Linux file systems take (ext4, xfs, tmpfs, btrfs)."""


def _a_name(text: str) -> bool:
    """Whether ``text`` can be one file name: not empty, ``.`` or ``..``, without a separator
    or NUL, at most ``NAME_MAX`` bytes as the file system encodes it."""
    try:
        size = len(os.fsencode(text))
    except UnicodeEncodeError:  # a lone surrogate: no file name holds it
        return False
    return (
        text not in ("", ".", "..")
        and size <= NAME_MAX
        and not any(c in text for c in (os.sep, os.altsep or os.sep, "\0"))
    )


def _shown(ref: str) -> str:
    return ref if len(ref) <= 300 else ref[:300] + "..."


def named_in(root: Path, session_id: str) -> Path:
    """The directory of session ``session_id`` in ``root``. Raises ``StoreError`` unless the id
    is one file name (not empty, ``.`` or ``..``, without a separator or NUL, at most
    ``NAME_MAX`` bytes as the file system encodes it): joined to the root as it came, ``../x``
    or an absolute path would name a directory elsewhere, and a longer name or one the file
    system cannot encode failed later, past the store, as a bare ``OSError``."""
    if not _a_name(session_id):
        shown = _shown(session_id)
        raise StoreError(
            f"session id {shown!r} is not a name in {root}: a session id is one file "
            f"name (not empty, '.' or '..', without '/' or NUL, at most {NAME_MAX} bytes); "
            "nothing was created"
        )
    return root / session_id


def session_dirs(root: Path) -> Iterator[SessionPaths]:
    """Every session directory under ``root`` (those with a trace or a meta file)."""
    if not root.is_dir():
        return
    for entry in root.iterdir():
        if entry.is_symlink() or not entry.is_dir():  # a linked directory is not a session
            continue
        if (entry / "meta.json").exists() or (entry / "trace.jsonl").exists():
            yield SessionPaths(entry)


def resolve(root: Path, ref: str) -> SessionPaths:
    """A session from an id, a unique id prefix, ``latest`` or a directory path.

    Raises ``SessionNotFound``; an ambiguous prefix lists the candidates.
    """
    if not ref.strip():  # ``"$ID"`` with ID unset: "no session matches ''" said no more
        raise SessionNotFound(f"session {ref!r}: {EMPTY_ID}")
    whole = whole_id_of(ref)
    if whole is not None:  # ``=ID``: that whole id and nothing else
        if not (is_plain_id(whole) and (root / whole / "meta.json").exists()):
            raise SessionNotFound(f"no session has the whole id {whole!r} in {root}")
        ref = whole
    if os.sep in ref or ref.startswith("."):
        path = Path(os.path.expanduser(ref))
        # os.path.exists: a name past NAME_MAX raised OSError out of Path.exists
        if os.path.exists(path / "trace.jsonl") or os.path.exists(path / "meta.json"):
            return SessionPaths(path.resolve())
        raise SessionNotFound(
            f"{_shown(ref)} is not a session directory (no trace.jsonl or meta.json)"
        )
    if ref != "latest" and not _a_name(ref):  # nor a prefix of one: nothing to look up
        raise SessionNotFound(f"no session matches {_shown(ref)!r} in {root}")
    exact = root / ref
    if ref and exact.is_symlink():
        raise StoreError(
            f"{exact} is a symbolic link; a session directory is never followed through a link"
        )
    if (whole or takes_exact(ref)) and (exact / "meta.json").exists():
        return SessionPaths(exact)
    sessions = list(session_dirs(root))
    if ref == "latest":
        if not sessions:
            raise SessionNotFound(f"no sessions in {root}")
        from rho_adapters.store.meta_fields import order_time  # with the first "latest" asked

        now = time.time()
        return max(sessions, key=lambda p: (order_time(created_at(p), now), p.id))
    matches = sorted(p.id for p in sessions if p.id.startswith(ref)) if ref else []
    if len(matches) == 1:
        return SessionPaths(root / matches[0])
    if not matches:
        raise SessionNotFound(f"no session matches {ref!r} in {root}")
    raise SessionNotFound(ambiguous(ref, matches))


def created_at(paths: SessionPaths) -> float:
    """When the session was created: meta.json's ``created_at``, else the directory's mtime."""
    value = read_meta(paths).get("created_at")
    if isinstance(value, int | float):
        return float(value)
    try:
        return paths.dir.stat().st_mtime
    except OSError:
        return 0.0


def pid_alive(pid: int) -> bool:
    """True when a process with this pid exists on this host (a pid no ``pid_t`` holds:
    none; ``os.kill`` raised ``OverflowError`` for it)."""
    if not 0 < pid < 2**31:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists, owned by someone else
    return True


def liveness(meta: Mapping[str, Any], *, paused: bool, now: float) -> str:
    """running, paused, idle (open but waiting for input), stale (process gone while it was
    driving), or the final status of a closed session (``session_control.judge_liveness``
    over meta.json's facts: a holder is alive while its pid lives on this host and its
    heartbeat is younger than ``STALE_AFTER_SECONDS``)."""
    status = str(meta.get("status", "created"))
    pid, host, beat = meta.get("pid"), meta.get("host"), meta.get("heartbeat")
    held = isinstance(pid, int) and isinstance(beat, int | float)
    if held and host == host_name():
        held = pid_alive(int(pid))  # type: ignore[arg-type]
    # a beat from the future as stale as an old one: one written as 1e18 (meta.json is
    # anyone's who writes the directory; pid 1, or another host, whose pid is not asked)
    # held the session forever: a watch followed it for ever, a server refused its chat
    if held and abs(now - float(beat)) > STALE_AFTER_SECONDS:  # type: ignore[arg-type]
        held = False
    # Imported here: a run writes sessions and never lists them (the operator's ports stay
    # out of a one-shot, tests/cli/test_cli_oneshot_imports.py).
    from rho_domain.ports.session_control import judge_liveness

    return judge_liveness(status=status, held=held, paused=paused)
