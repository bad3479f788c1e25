"""FileSignals: control a session through files in its directory, from any process.

- ``cancel``: present means "stop". The session consumes it (``clear_cancel``) at the start
  and end of a run, so a cancel never leaks into the next run or a resume. Present means a
  regular file; anything else at the name is no signal (``sentinels``).
- ``pause``: present means "wait before the next model call or tool"; removing it resumes.
  A run that ends removes it (``clear_pause``): the next run never starts paused.
- ``directives.jsonl``: the operator's instructions, one line each (``directive_lines``:
  ``add_directive``, ``read_directives``); a line that is no whole directive (a torn or
  interleaved write) is skipped, with a warning once.
- ``exports/ID.request``: a context export asked for (``request_export``); the session writes
  ``exports/ID.md`` atomically between steps and then removes the request (``read_export``).
"""

from __future__ import annotations

import asyncio
import logging
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from rho_adapters.store import sentinels
from rho_adapters.store.cancel_watch import cancel_watch
from rho_adapters.store.confined import directory_fd, read_bytes, touch
from rho_adapters.store.directive_lines import DIRECTIVES_BYTES as DIRECTIVES_BYTES  # re-exported
from rho_adapters.store.directive_lines import add_directive as add_directive  # re-exported
from rho_adapters.store.directive_lines import read_directives
from rho_adapters.store.layout import named_in
from rho_domain.errors import StoreError
from rho_domain.ports.signals import SignalSource

if TYPE_CHECKING:  # built when an operator sent one
    from rho_domain.ports.directive import Directive

POLL_SECONDS = 0.2
log = logging.getLogger(__name__)


def request_cancel(session_dir: Path) -> None:
    """Ask the session in ``session_dir`` to stop at its next checkpoint."""
    _touch(session_dir / "cancel")


def request_pause(session_dir: Path) -> None:
    """Ask the session to wait before its next model call or tool (it keeps its heartbeat)."""
    _touch(session_dir / "pause")


def request_resume(session_dir: Path) -> bool:
    """Lift a pause; False when the session was not paused (what is at ``pause`` and is no
    sentinel is removed too, or named in a warning: ``sentinels.clear``)."""
    path = session_dir / "pause"
    if sentinels.clear(path):
        return True
    if os.path.lexists(path):  # a directory with something in it: the operator is told
        raise StoreError(
            f"{path} is a directory, not the pause file rho-agent writes: it pauses nothing "
            "and was left as it is; remove it yourself"
        )
    return False


EXPORT_BYTES = 64 << 20
"""The most an export's answer may hold: a context rendered as text, which fits a model's
window many times over; one planted past it is refused, not read whole."""


def request_export(session_dir: Path, request_id: str) -> None:
    """Ask the session for a context export under ``request_id`` (a plain id: it names a
    file), the id ``read_export`` reads the answer by."""
    from rho_domain.ports.session_control import check_request_id

    check_request_id(request_id)
    if not session_dir.is_dir():
        raise StoreError(f"{session_dir} is not a session directory")
    _touch_in(session_dir / "exports", f"{request_id}.request")


def read_export(session_dir: Path, request_id: str) -> str | None:
    """The export the session wrote for ``request_id``, or None while it has not."""
    try:
        data = read_bytes(
            session_dir / "exports" / f"{request_id}.md", levels=2, limit=EXPORT_BYTES
        )
    except FileNotFoundError:
        return None
    except StoreError:
        raise
    except OSError as exc:
        raise StoreError(f"cannot read the export {request_id}: {exc.strerror or exc}") from exc
    return data.decode("utf-8", errors="replace")


def _touch_in(directory: Path, name: str) -> None:
    try:
        with directory_fd(directory.parent) as parent:
            os.mkdir(directory.name, 0o700, dir_fd=parent)
    except FileExistsError:
        pass  # a link there is refused when the file is made below
    except OSError as exc:
        raise StoreError(f"cannot write {directory}: {exc.strerror or exc}") from exc
    _touch(directory / name, levels=2)


def _touch(path: Path, *, levels: int = 1) -> None:
    if not path.parent.is_dir():
        raise StoreError(f"{path.parent} is not a session directory")
    try:
        touch(path, levels=levels)  # never through a link: a sentinel links nowhere
    except OSError as exc:
        raise StoreError(f"cannot write {path}: {exc.strerror or exc}") from exc


EXPORTS_PAGE = 64
"""The most export requests one checkpoint's look lists (the PostgreSQL store's page too)."""
EXPORTS_SCANNED = 1024
"""The most entries of ``exports/`` one look reads, requests or not."""


def pending_requests(directory: Path) -> tuple[str, ...]:
    """The export requests in ``directory`` (``exports/``), least first, among its first
    ``EXPORTS_SCANNED`` entries and at most ``EXPORTS_PAGE`` of them: the rest are listed
    once those are answered (each answer removes its request). Only what ``request_export``
    makes: a file named by a plain id; a foreign entry (a directory a.request, "b c.request"
    by hand) was answered at every checkpoint, and its answer's failure stopped the requests
    sorted after it from ever being answered."""
    from rho_domain.run import is_plain_id

    found: list[str] = []
    try:
        with os.scandir(directory) as entries:
            for scanned, entry in enumerate(entries, 1):
                name = entry.name
                stem = name.removesuffix(".request")
                if stem != name and is_plain_id(stem) and entry.is_file(follow_symlinks=False):
                    found.append(stem)
                if len(found) >= EXPORTS_PAGE or scanned >= EXPORTS_SCANNED:
                    break
    except OSError:
        return ()  # gone or unreadable: nothing asked that this process can answer
    return tuple(sorted(found))


def _lstat_mode(path: Path) -> int:
    """``path``'s own mode (a link's, not its target's), 0 where nothing is."""
    try:
        return os.lstat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return 0


def _present(path: Path) -> bool:
    """Whether anything is at ``path``, a dangling link included (one lstat)."""
    return _lstat_mode(path) != 0


class _Places:
    """Where one session's signals are: its directory and the files in it read at each
    checkpoint (built once per session: a session asks ~14 times, each a path join)."""

    __slots__ = ("cancel", "dir", "directives", "exports", "pause")

    def __init__(self, directory: Path) -> None:
        self.dir = directory
        self.cancel = directory / "cancel"
        self.pause = directory / "pause"
        self.directives = directory / "directives.jsonl"
        self.exports = directory / "exports"


PLACES_KEPT = 4096
"""The most sessions whose signal paths one ``FileSignals`` keeps (the oldest go first)."""


class FileSignals(SignalSource):
    """SignalSource over session directories. ``locate(session_id)`` gives a session's
    directory (pass ``FileSessionStore.session_dir``); a ``Path`` means ``<path>/<id>``."""

    def __init__(
        self, locate: Callable[[str], Path] | Path | str, *, poll: float = POLL_SECONDS
    ) -> None:
        if isinstance(locate, Path | str):
            root = Path(locate)
            self._locate: Callable[[str], Path] = lambda session_id: named_in(root, session_id)
        else:
            self._locate = locate
        self._poll = poll
        # the (directory, offset) of each directive line found not whole, warned about once
        self._refused: set[tuple[str, int]] = set()
        self._places: dict[str, _Places] = {}

    def _of(self, session_id: str) -> _Places:
        """The session's signal paths, remembered: a session's directory never moves (the
        store names it by the id alone), so only ``locate``'s first answer is asked for."""
        places = self._places.get(session_id)
        if places is None:
            places = _Places(self._locate(session_id))  # a bad id raises: nothing kept
            if len(self._places) >= PLACES_KEPT:
                del self._places[next(iter(self._places))]
            self._places[session_id] = places
        return places

    async def cancel_requested(self, session_id: str) -> bool:
        """True while the session's ``cancel`` file exists (``sentinels.is_set``)."""
        return sentinels.is_set(self._of(session_id).cancel)

    async def clear_cancel(self, session_id: str) -> None:
        """See ``SignalSource.clear_cancel``."""
        sentinels.clear(self._of(session_id).cancel)

    async def clear_pause(self, session_id: str) -> None:
        """See ``SignalSource.clear_pause``."""
        sentinels.clear(self._of(session_id).pause)

    async def wait_for_cancel(self, session_id: str) -> None:
        """See ``SignalSource.wait_for_cancel``."""
        # Another process writes the file: there is no event to wait on, so it is polled,
        # by one task for every waiting session of this loop (``cancel_watch``).
        await cancel_watch(self._poll).wait(self._of(session_id).cancel)

    async def is_paused(self, session_id: str) -> bool:
        """See ``SignalSource.is_paused``."""
        return sentinels.is_set(self._of(session_id).pause)

    async def directives(self, session_id: str, *, after: int) -> tuple[Directive, ...]:
        """See ``SignalSource.directives``."""
        places = self._of(session_id)
        directory = places.dir
        if not _present(places.directives):
            return ()

        def refused(offset: int, why: str) -> None:
            if (where := (str(directory), offset)) not in self._refused:  # once, not each poll
                self._refused.add(where)
                log.warning(
                    "%s line %d is not a whole directive (%s): skipped, nothing of it reached "
                    "the model; send it again (rho-agent monitor directive)",
                    directory / "directives.jsonl",
                    offset + 1,
                    why,
                )

        return await asyncio.to_thread(read_directives, directory, after=after, refused=refused)

    async def export_requests(self, session_id: str) -> tuple[str, ...]:
        """See ``SignalSource.export_requests``."""
        directory = self._of(session_id).exports
        # Asked at every checkpoint: one lstat (a directory, not a link to one), not two stats.
        if not stat.S_ISDIR(_lstat_mode(directory)):
            return ()
        # read in a thread and bounded: a million requests planted there (anyone writing the
        # directory can) were listed and sorted on the event loop at every checkpoint
        return await asyncio.to_thread(pending_requests, directory)

    async def answer_export(self, session_id: str, request_id: str, text: str) -> None:
        """See ``SignalSource.answer_export``."""
        from rho_adapters.store.layout import write_atomic

        directory = self._of(session_id).exports
        try:
            await asyncio.to_thread(
                write_atomic, directory / f"{request_id}.md", text.encode(), levels=2
            )
            with directory_fd(directory, 2) as exports:
                os.unlink(f"{request_id}.request", dir_fd=exports)
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise StoreError(f"cannot write the export {request_id}: {exc}") from exc
