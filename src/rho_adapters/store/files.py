"""FileSessionStore: sessions as directories, trace.jsonl as the source of truth.

Durability: every ``append`` writes its lines and flushes them to the OS (they survive the
process being killed); run boundaries, compaction and approvals are also fsynced, together
with an atomic rewrite of meta.json. Nothing else is fsynced: creating, opening and closing a
session rewrite meta.json as a heartbeat does (what they record, the holder, a crash makes
stale anyway; the summary is the trace's), so a session that runs once costs four fsyncs,
two at each run boundary (the disk's fsyncs, ~3 ms each here, are what bounds 1,000
file-backed sessions at once). Blocking work that can be slow (fsync, directory scans,
reading a trace) runs in a worker thread; a plain append is one buffered write.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import attrs

from rho_adapters.codec import config_to_dict, encode_event_line
from rho_adapters.finish import finished
from rho_adapters.store.confined import directory_fd, open_file
from rho_adapters.store.held_session import HeldSession, what_to_do
from rho_adapters.store.layout import HEARTBEAT_SECONDS, SessionPaths, named_in, resolve
from rho_adapters.store.leftovers import remove_created, remove_left_temps
from rho_adapters.store.lock import SessionLock
from rho_adapters.store.meta import MetaFile, initial_meta, profile_label, stored_config
from rho_adapters.store.reserve import DiskRooms
from rho_adapters.store.yaml_emit import emit
from rho_domain import events as ev
from rho_domain.errors import RhoError, StoreError
from rho_domain.ports.signals import SignalSource
from rho_domain.ports.store import SessionRecord, SessionStore, SignalingStore

if TYPE_CHECKING:
    from rho_domain.ports.session_info import SessionInfo

DURABLE_KINDS = frozenset(
    {"run_start", "run_end", "compact", "approval_requested", "approval_resolved"}
)


@contextlib.contextmanager
def _store_errors(what: str) -> Iterator[None]:
    """The one place where OS errors become StoreError (config.yaml's YAML errors become
    ConfigError where it is parsed, ``recording.read_record``)."""
    try:
        yield
    except RhoError:
        raise
    except OSError as exc:
        named = f" ({exc.filename})" if exc.filename and str(exc.filename) not in what else ""
        raise StoreError(f"{what}: {exc.strerror or exc}{named}") from exc


def _in_thread(work: Callable[..., None], *args: object) -> asyncio.Future[None]:
    """``work(*args)`` in the loop's default executor (``asyncio.to_thread``'s threads), as
    the executor's own future: a session's create, two syncs and close cost the loop 16
    callbacks and no task this way, 20 and two tasks through ``to_thread`` wrapped in a
    task for ``finished`` (issue 33: 1,000 sessions' ends land in the same turns of the
    loop). The work reads no context variable, so none is copied into the thread."""
    return asyncio.get_running_loop().run_in_executor(None, work, *args)


def _stored_label(directory: Path) -> str:
    """The profile label of the session in ``directory`` from its config.yaml."""
    from rho_adapters.store.recording import read_record

    try:
        return profile_label(read_record(SessionPaths(directory)).config.profile)
    except RhoError as exc:
        return f"? ({type(exc).__name__})"


class FileSessionStore(SessionStore, SignalingStore):
    """Sessions under ``root`` (``<home>/sessions``), one directory each.

    ``open`` accepts an id, a unique prefix, ``latest`` or a session directory path.
    ``heartbeat`` is how often an open session rewrites meta.json.
    """

    def __init__(self, root: Path | str, *, heartbeat: float = HEARTBEAT_SECONDS) -> None:
        self.root = Path(os.path.expanduser(root))
        self._heartbeat = heartbeat
        self._open: dict[str, HeldSession] = {}
        self._last_config: tuple[str, bytes] | None = None  # see _config_text
        self._rooms = DiskRooms()  # for a run's end, on each session's disk (reserve.py)

    def signals(self) -> SignalSource:
        """See ``SignalingStore.signals``: the sentinel files in each session directory
        (``FileSignals``)."""
        from rho_adapters.store.signals import FileSignals

        return FileSignals(self.session_dir)

    def session_dir(self, session_id: str) -> Path:
        """The directory of an open session, or where a session with this id lives. Raises
        ``StoreError`` for an id that is not one name in the root (``named_in``): the signals
        clear, write and read files there before the session is created (or refused)."""
        held = self._open.get(session_id)
        return held.paths.dir if held else named_in(self.root, session_id)

    async def create(self, record: SessionRecord) -> None:
        """See ``SessionStore.create``."""
        await _in_thread(self._create, record)

    def _create(self, record: SessionRecord) -> None:
        paths = SessionPaths(named_in(self.root, record.id))
        config = self._config_text(config_to_dict(record.config))  # refused: nothing written
        with _store_errors(f"cannot create session {record.id} in {self.root}"):
            lock = SessionLock(paths.lock)
            try:
                self._make_dir(paths.dir)
                left_half = False
            except FileExistsError:
                if paths.trace.exists():
                    raise StoreError(f"session {record.id} already exists in {self.root}") from None
                # A creation a dead process left half done (no trace: nothing was recorded),
                # as a durable run's worker killed inside `create` leaves it: taken over under
                # its lock (SessionLocked while a live process still holds it).
                left_half = True
            with directory_fd(paths.dir) as parent:
                lock.acquire(record.id, parent=parent)
                if left_half:
                    paths.config.unlink(missing_ok=True)
                self._fill(paths, lock, record, config, parent)

    def _make_dir(self, directory: Path) -> None:
        """Make a new session's directory (``FileExistsError`` when the name is taken), and
        the root with the first one: tried after, not before each (a ``mkdir`` and a
        ``stat`` a session), and again when the root was removed meanwhile."""
        try:
            directory.mkdir(mode=0o700)
        except FileNotFoundError:
            self.root.mkdir(parents=True, exist_ok=True)
            directory.mkdir(mode=0o700)

    def _fill(
        self,
        paths: SessionPaths,
        lock: SessionLock,
        record: SessionRecord,
        config: bytes,
        parent: int,
    ) -> None:
        """Write a new session's files, holding its lock, through its directory opened once
        (``parent``: four files, one walk of the path, each opened never through a link)."""
        try:
            with open_file(paths.config, "xb", parent=parent) as handle:
                handle.write(config)
            # created and kept open for appending at once (see HeldSession.write)
            trace = open_file(paths.trace, "xab", buffering=0, parent=parent)
            self._hold(paths, lock, initial_meta(record), trace=trace, parent=parent)
        except BaseException:
            remove_created(paths)  # a half session would be listed for good
            lock.release()
            raise

    def _config_text(self, config: dict[str, Any]) -> bytes:
        """config.yaml's bytes for ``config`` (``config_to_dict``'s form): the last ones
        again when the config's JSON is the last one's, as a service's sessions of one agent
        are. Written by ``yaml_emit`` (CSafeDumper's text, without importing yaml: a session
        that is only written, as a one-shot's is, never needs it); json's C encoder is
        faster still, and its text tells apart what ``==`` would not (``1``, ``1.0`` and
        ``true``). Called from worker threads: the pair is replaced whole, never half."""
        try:
            key = json.dumps(config)
        except TypeError:  # a value YAML cannot hold either: emit's StoreError names it
            return emit(stored_config(config)).encode()
        last = self._last_config
        if last is not None and last[0] == key:
            return last[1]
        text = emit(stored_config(config)).encode()
        self._last_config = (key, text)
        return text

    def _hold(
        self,
        paths: SessionPaths,
        lock: SessionLock,
        meta: dict[str, Any],
        *,
        trace: IO[bytes] | None = None,
        parent: int | None = None,
    ) -> None:
        """Hold the session open: its trace (``trace``, or opened for appending now), its
        meta.json started; the lock released (and the trace closed) if that fails."""
        try:
            if trace is None:
                trace = open_file(paths.trace, "ab", buffering=0)  # see HeldSession.write
            holder = MetaFile(paths, meta, heartbeat=self._heartbeat)
            holder.start(parent=parent)
            room = self._rooms.hold(paths.dir)
        except BaseException:
            if trace is not None:
                trace.close()
            lock.release()
            raise
        held = HeldSession(paths=paths, lock=lock, meta=holder, trace=trace, room=room)
        self._open[paths.id] = held

    async def open(self, session_id: str) -> tuple[SessionRecord, tuple[ev.Event, ...]]:
        """See ``SessionStore.open``."""
        return await asyncio.to_thread(self._open_sync, session_id)

    def _open_sync(self, ref: str) -> tuple[SessionRecord, tuple[ev.Event, ...]]:
        # loaded with the first session opened: a run of a new one (a one-shot) reads none
        from rho_adapters.store.reopen import load, refreshed_meta

        paths = resolve(self.root, ref)
        with _store_errors(f"cannot open session {paths.id}"):
            lock = SessionLock(paths.lock)
            lock.acquire(paths.id)
            remove_left_temps(paths)  # what a writer killed before left (we hold the lock)
            try:
                record, events = load(paths)
            except BaseException:
                lock.release()
                raise
            self._hold(paths, lock, refreshed_meta(paths, record, events))
        return record, events

    async def append(self, session_id: str, events: Sequence[ev.Event]) -> None:
        """See ``SessionStore.append``."""
        held = self._open.get(session_id)
        if held is None:
            raise StoreError(f"session {session_id} is not open in this store; create or open it")
        persistent = [e for e in events if ev.is_persistent(e)]
        if not persistent:
            return
        try:  # inline rather than _store_errors: this runs for every event
            start = held.write(b"".join([encode_event_line(e) for e in persistent]))
        except OSError as exc:  # the path: a full disk is fixed where the file is
            raise StoreError(
                f"cannot write the trace of session {session_id} ({held.paths.trace}): "
                f"{exc.strerror or exc}; none of its {len(persistent)} events was written"
                + what_to_do(exc, held.paths, freed=held.freed_room)
            ) from exc
        if held.meta.fold(persistent) or any(e.kind in DURABLE_KINDS for e in persistent):
            try:
                with _store_errors(f"cannot sync session {session_id} ({held.paths.trace})"):
                    # cancelled meanwhile (a worker stopping at a run's end), the lines are
                    # taken all the same (the port's contract): their sync is waited for
                    await finished(_in_thread(held.sync))
            except StoreError as exc:
                # not taken (the port's contract): the journal appends these lines again
                held.cut(start)
                if not held.named():  # the trace's lines went to a nameless file
                    raise StoreError(
                        f"cannot save session {session_id}: its directory {held.paths.dir} "
                        "was removed, moved or replaced while it ran; nothing more of it is "
                        "saved"
                    ) from exc
                # as a failed write says it: what the user lost if the disk stays full
                kept = f"{exc}; none of its {len(persistent)} events was kept"
                raise StoreError(kept + what_to_do(exc, held.paths, freed=held.freed_room)) from exc

    async def list(self, *, limit: int = 50) -> tuple[SessionInfo, ...]:
        """See ``SessionStore.list``. The profile shown is what each config.yaml grants
        (``meta.profile_label``), not meta.json's claim: anyone writing a session directory
        writes both, and only the config is what a resume would run."""
        return await asyncio.to_thread(self._list, limit)

    def _list(self, limit: int) -> tuple[SessionInfo, ...]:
        from rho_adapters.store.listing import list_sessions

        infos = list_sessions(self.root, limit=limit)
        return tuple(attrs.evolve(i, profile=_stored_label(self.root / i.id)) for i in infos)

    async def release(self, session_id: str) -> None:
        """See ``SessionStore.release``."""
        held = self._open.pop(session_id, None)
        if held is not None:
            room = held.room  # no session left to end on its disk: its descriptor goes
            if room is not None and all(h.room is not room for h in self._open.values()):
                room.let_go()
            with _store_errors(f"cannot close session {session_id}"):
                await _in_thread(held.close)
