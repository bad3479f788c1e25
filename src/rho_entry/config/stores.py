"""Which session store: one URL, from a flag, the environment or the agent's YAML.

``--store URL`` (every command that touches sessions) wins over ``$RHO_AGENT_STORE``, which
wins over ``store:`` in the AgentConfig YAML; without any, sessions are files in the config
directory (``<home>/sessions``), as always.

- ``postgresql://user@host:port/db`` (or ``postgres://``): PostgreSQL, shared by every host with
  the URL (``rho_adapters.pgstore``; extra ``postgres``).
- a path, or ``file:///path``: the file store in that directory (holding the sessions).

A URL that is neither, a missing driver, an unreachable server or missing rights is one error
naming the URL (password hidden) and its setting. The password never reaches a trace, a log
line or a message: sessions do not record where they are stored.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Callable, Coroutine, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import unquote, urlsplit

from rho_domain import events as ev
from rho_domain.errors import ConfigError
from rho_domain.lazy_names import lazy_names
from rho_domain.ports.signals import SignalSource
from rho_domain.ports.store import SessionStore, signals_of
from rho_entry.config.home import expanded

if TYPE_CHECKING:  # the store's faces: built with the first choose_store or choose_operator
    from rho_domain.ports.session_control import SessionControl
    from rho_entry.config.store_faces import Operator as Operator
    from rho_entry.config.store_faces import StoreChoice as StoreChoice
    from rho_entry.config.store_faces import close_store as close_store

ENV_VAR = "RHO_AGENT_STORE"
STALE_VAR = "RHO_AGENT_STORE_STALE_AFTER"
"""Seconds after which a PostgreSQL store holder that stopped beating is gone (its sessions
``stale``, for another host to take over; default ``STALE_AFTER_SECONDS``, 8). The beat is a
quarter of it, at most ``HEARTBEAT_SECONDS`` (2): a shorter window costs more beats."""
T = TypeVar("T")
_POSTGRES = ("postgresql://", "postgres://")
# a run never builds a StoreChoice or an Operator (~5 M instructions): imported when asked
_FACES = "rho_entry.config.store_faces"
__getattr__ = lazy_names(
    __name__, {"StoreChoice": _FACES, "Operator": _FACES, "close_store": _FACES}
)


def run_sync(work: Coroutine[Any, Any, T]) -> T:
    """Run a port call to its end from synchronous code (a CLI command); from inside a running
    loop (a caller's async code, a test), on a loop of its own in a worker thread."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(work)
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as worker:
        return worker.submit(asyncio.run, work).result()


def store_setting(
    flag: str | None, env: Mapping[str, str], config_store: str | None = None
) -> tuple[str | None, str]:
    """The store URL in force and the setting that gave it (for messages)."""
    if flag:
        return flag, "--store"
    if env.get(ENV_VAR):
        return env[ENV_VAR], f"${ENV_VAR}"
    if config_store:
        return config_store, "store: in the agent config"
    return None, "the default (the config directory)"


def choose_store(
    value: str | Path | None, env: Mapping[str, str], *, origin: str = "store="
) -> StoreChoice:
    """The store for ``value`` (a URL, a path, or None for the config directory's)."""
    if isinstance(value, str) and value.strip().startswith(_POSTGRES):
        return _postgres(value.strip(), origin, env)
    return _files(_file_root(value, env, origin), origin)


def session_store(
    value: str | Path | None, env: Mapping[str, str], *, origin: str = "store="
) -> SessionStore:
    """``choose_store(value, env, origin=origin).store`` alone, for what only runs sessions
    (a run of the CLI, the facade): a file store is built without the operator's face
    (``FileSessions``: listing and answering sessions from outside), which a run never asks."""
    if isinstance(value, str) and value.strip().startswith(_POSTGRES):
        return choose_store(value, env, origin=origin).store
    return file_store(_file_root(value, env, origin))


def choose_operator(value: str | None, env: Mapping[str, str], *, origin: str) -> Operator:
    """The ``SessionCatalog`` / ``SessionControl`` of a store (as ``choose_store`` reads it).
    Close it after use (``Operator.aclose``): a PostgreSQL one holds a share of the process's
    pool for its URL."""
    from rho_entry.config.store_faces import Operator

    if value is not None and value.strip().startswith(_POSTGRES):
        from rho_adapters.pgstore import postgres_sessions

        url = value.strip()
        shown = _checked_postgres(url, origin)
        sessions = postgres_sessions(url, origin=origin, **staleness(env))
        return Operator(sessions=sessions, shown=shown, origin=origin)
    root = _file_root(value, env, origin)
    from rho_adapters.store import FileSessions

    return Operator(sessions=FileSessions(root), shown=str(root), origin=origin, root=root)


def _file_root(value: str | Path | None, env: Mapping[str, str], origin: str) -> Path:
    if value is None:
        from rho_entry.config.home import sessions_dir

        return sessions_dir(env)
    if isinstance(value, Path):
        return _a_directory(expanded(value, by=origin), origin)
    text = value.strip()
    if text.startswith("file://"):
        parts = urlsplit(text)
        if parts.netloc not in ("", "localhost"):
            raise _bad(text, origin, "a file:// URL names a path on this host (file:///path)")
        return _a_directory(Path(unquote(parts.path)), origin)
    if "://" in text:
        raise _bad(text, origin, "the scheme is not one rho-agent knows")
    if not text:
        raise _bad(text, origin, "it is empty")
    return _a_directory(expanded(text, by=origin), origin)


def _a_directory(root: Path, origin: str) -> Path:
    """``root``, unless it or the nearest of its parents that exists is not a directory: a
    ``ConfigError`` naming the path and the setting. Checked wherever a setting names a file
    store (a run, ``monitor``, ``ps``, ``export``, ``fork``, ``stats``, ``queue``, ``serve``,
    a worker): listing a file read as "no sessions in FILE", which named no problem."""
    there = next((p for p in (root, *root.parents) if p.exists()), None)
    if there is None or there.is_dir():
        return root
    raise ConfigError(
        f"cannot keep sessions in {root}: Not a directory (set by {origin}; give a directory "
        "rho-agent can write)"
    )


def as_store(
    value: SessionStore | str | os.PathLike[str] | None, env: Mapping[str, str]
) -> SessionStore | None:
    """A store object as it is, a URL or path (``os.PathLike``) opened, None as None."""
    if isinstance(value, str | os.PathLike):
        return session_store(os.fspath(value), env)
    return value


def close_store_sync(store: object) -> None:
    """``close_store`` from synchronous code (a CLI command's end); no loop for files."""
    if getattr(store, "aclose", None) is not None:
        from rho_entry.config.store_faces import close_store

        run_sync(close_store(store))


def signals_for(store: SessionStore) -> SignalSource | None:
    """The signals of a store (``SignalingStore``: a file store's sentinels, PostgreSQL's
    notifications); None for one that carries none (a fake, a caller's own)."""
    return signals_of(store)


def session_dirs(store: SessionStore | None) -> Callable[[str], Path] | None:
    """Where a file store keeps each session's directory (``session_dir``), for what is saved
    beside a trace (an MCP call's full output); None for another store (the seeds' store: by
    the store it holds)."""
    from rho_adapters.store import FileSessionStore

    held = store if isinstance(store, FileSessionStore) else getattr(store, "backend", None)
    return held.session_dir if isinstance(held, FileSessionStore) else None


def file_store(root: Path | str) -> SessionStore:
    """The file store of the session directories under ``root`` (the seeds' default)."""
    from rho_adapters.store import FileSessionStore

    return FileSessionStore(root)


def files_root(store: SessionStore) -> Path | None:
    """The directory of a file store's session directories; None for another store."""
    from rho_adapters.store import FileSessionStore

    return store.root if isinstance(store, FileSessionStore) else None


def kept_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """A config mapping as a store keeps one (no secrets, no store URL): for what shows a
    stored config, whatever version wrote it (``rho-agent export``)."""
    from rho_adapters.store.meta import stored_config

    return stored_config(dict(config))


def trace_events(source: Path | str | bytes) -> tuple[ev.Event, ...]:
    """The events of a ``trace.jsonl`` the caller names (or its bytes), read as the file store
    reads it (a torn or unreadable line skipped with a warning; a newer format version:
    ``TraceFormatError``; a link: ``StoreError``)."""
    from rho_adapters.store import parse_trace, read_trace

    read = parse_trace(source) if isinstance(source, bytes) else read_trace(Path(source))
    return read.events


def _files(root: Path, origin: str) -> StoreChoice:
    from rho_adapters.store import FileSessions, FileSessionStore, FileSignals
    from rho_entry.config.store_faces import StoreChoice

    store = FileSessionStore(root)
    return StoreChoice(
        store=store,
        signals=FileSignals(store.session_dir),
        sessions=FileSessions(store.root),
        shown=str(store.root),
        origin=origin,
        root=store.root,
    )


def staleness(env: Mapping[str, str]) -> dict[str, float]:
    """The PostgreSQL store's ``stale_after`` and ``heartbeat`` from
    ``$RHO_AGENT_STORE_STALE_AFTER`` (empty when it is unset: the adapter's defaults). A value
    that is not a number of seconds from 1 to 3600 is a ConfigError saying so: a window under
    a beat would make a live host look dead."""
    text = env.get(STALE_VAR, "").strip()
    if not text:
        return {}
    try:
        seconds = float(text)
    except ValueError:
        seconds = float("nan")
    if not 1.0 <= seconds <= 3600.0:  # NaN fails too
        raise ConfigError(
            f"${STALE_VAR}={text!r} is not usable: give the seconds after which a PostgreSQL "
            "store holder that stopped beating is stale, from 1 to 3600 (default 8)"
        )
    from rho_adapters.pgstore.backend import HEARTBEAT_SECONDS

    return {"stale_after": seconds, "heartbeat": min(HEARTBEAT_SECONDS, seconds / 4)}


def _checked_postgres(url: str, origin: str) -> str:
    """``url`` as messages show it; ConfigError when it cannot name a server."""
    from rho_adapters.pgstore import shown_url

    try:
        parts = urlsplit(url)
        _ = parts.port  # a port that is not a number raises here
    except ValueError as exc:
        raise _bad(url, origin, str(exc)) from None
    if not parts.hostname and "host=" not in parts.query:
        raise _bad(url, origin, "it names no host (postgresql://user@host:5432/database)")
    return shown_url(url)


def _postgres(url: str, origin: str, env: Mapping[str, str]) -> StoreChoice:
    from rho_adapters.pgstore import postgres_store
    from rho_entry.config.store_faces import StoreChoice

    shown = _checked_postgres(url, origin)
    made = postgres_store(url, origin=origin, **staleness(env))
    return StoreChoice(
        store=made.store, signals=made.signals, sessions=made.sessions, shown=shown, origin=origin
    )


def _bad(url: str, origin: str, why: str) -> ConfigError:
    from rho_adapters.pgstore.connection import shown_url  # light: no driver, no cattrs

    return ConfigError(
        f"the session store {shown_url(url)!r} (set by {origin}) is not usable: {why}; give "
        "postgresql://user@host:port/database, file:///path or a directory path"
    )


def control_of(store: SessionStore) -> SessionControl | None:
    """The ``SessionControl`` over ``store``'s sessions (a ``DurableHandle``'s cancel asks a
    started run to stop through it); None for a store that is neither files nor PostgreSQL."""
    from rho_adapters.store import FileSessions, FileSessionStore

    if isinstance(store, FileSessionStore):
        return FileSessions(store.root)
    pg = sys.modules.get("rho_adapters.pgstore.store")  # loaded when the store is one
    if pg is not None and isinstance(store, pg.PgSessionStore):
        from rho_adapters.pgstore.control import PgSessions  # the store's share covers it

        return PgSessions(store.backend, owner=False)
    return None
