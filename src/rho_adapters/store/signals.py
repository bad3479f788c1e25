"""FileSignals: control a session through files in its directory, from any process.

- ``cancel``: present means "stop". The session consumes it (``clear_cancel``) at the start
  and end of a run, so a cancel never leaks into the next run or a resume.
- ``pause``: present means "wait before the next model call or tool"; removing it resumes.
  A run that ends removes it (``clear_pause``): the next run never starts paused.
- ``directives.jsonl``: one JSON object ``{"text", "at"}`` per line, appended under an
  exclusive flock. A directive's offset is its line index; the file is never truncated, and the
  session records applied offsets in its trace, so a directive is applied exactly once.
- ``exports/ID.request``: a context export asked for (``request_export``); the session writes
  ``exports/ID.md`` atomically between steps and then removes the request (``read_export``).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import os
import stat
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING

from rho_adapters.store.cancel_watch import cancel_watch
from rho_adapters.store.confined import directory_fd, open_file, read_bytes, touch
from rho_adapters.store.layout import named_in
from rho_domain.errors import StoreError
from rho_domain.ports.signals import SignalSource

if TYPE_CHECKING:  # built when an operator sent one
    from rho_domain.ports.directive import Directive

POLL_SECONDS = 0.2


@contextlib.contextmanager
def _locked(path: Path, mode: str, lock: int) -> Iterator[IO[bytes]]:
    try:
        with open_file(path, mode) as handle:
            fcntl.flock(handle.fileno(), lock)
            yield handle  # closing the file drops the lock
    except OSError as exc:
        raise StoreError(f"cannot use {path}: {exc.strerror or exc}") from exc


def request_cancel(session_dir: Path) -> None:
    """Ask the session in ``session_dir`` to stop at its next checkpoint."""
    _touch(session_dir / "cancel")


def request_pause(session_dir: Path) -> None:
    """Ask the session to wait before its next model call or tool (it keeps its heartbeat)."""
    _touch(session_dir / "pause")


def request_resume(session_dir: Path) -> bool:
    """Lift a pause; False when the session was not paused."""
    try:
        (session_dir / "pause").unlink()
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise StoreError(f"cannot resume {session_dir}: {exc.strerror or exc}") from exc
    return True


DIRECTIVES_BYTES = 16 << 20
"""The most directives.jsonl may hold: thousands of an operator's instructions. The running
session reads it at every step and ``add_directive`` to count its lines: one planted past
this (a sparse file of gigabytes), read whole, cost its size in memory each time (the run and
``monitor directive`` ended in MemoryError); past it, it is refused (a StoreError naming
it)."""

EXPORT_BYTES = 64 << 20
"""The most an export's answer may hold: a context rendered as text, which fits a model's
window many times over; one planted past it is refused, not read whole."""


def _read_directives_file(handle: IO[bytes], path: Path) -> bytes:
    data = handle.read(DIRECTIVES_BYTES + 1)
    if len(data) > DIRECTIVES_BYTES:
        raise StoreError(
            f"{path}: more than {DIRECTIVES_BYTES} bytes, far more than rho-agent writes "
            "there; not read (remove it, or restore the file the operators wrote)"
        )
    return data


def add_directive(session_dir: Path, text: str) -> int:
    """Append an instruction for the session; return its offset (line index)."""
    if not session_dir.is_dir():
        raise StoreError(f"{session_dir} is not a session directory")
    line = json.dumps({"text": text, "at": time.time()}, ensure_ascii=False).encode() + b"\n"
    with _locked(session_dir / "directives.jsonl", "a+b", fcntl.LOCK_EX) as handle:
        handle.seek(0)
        data = _read_directives_file(handle, session_dir / "directives.jsonl")
        if data and not data.endswith(b"\n"):
            handle.write(b"\n")  # a writer died mid-line: that fragment stays one bad line
            data += b"\n"
        offset = data.count(b"\n")
        handle.write(line)
        handle.flush()
    return offset


def read_directives(session_dir: Path, *, after: int = 0) -> tuple[Directive, ...]:
    """Directives with offset >= ``after``. Only complete lines count."""
    path = session_dir / "directives.jsonl"
    if not os.path.lexists(path):
        return ()
    with _locked(path, "rb", fcntl.LOCK_SH) as handle:
        data = _read_directives_file(handle, path)
    lines = data.split(b"\n")[:-1]  # the piece after the last newline is not complete
    if len(lines) <= after:
        return ()
    from rho_domain.ports.directive import Directive

    # a blank line (``echo >> directives.jsonl``, an editor's) says nothing: injected, it
    # was an empty "[Directive from the operator]" message the model was left to interpret
    return tuple(
        Directive(offset=i, text=_text(line))
        for i, line in enumerate(lines)
        if i >= after and line.strip()
    )


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


def _text(line: bytes) -> str:
    try:
        data = json.loads(line)
    except (ValueError, RecursionError):
        return line.decode(errors="replace")  # a hand-written plain line is still a directive
    text = data.get("text") if isinstance(data, dict) else None
    if isinstance(text, str):
        return text
    return line.decode(errors="replace")


def _touch(path: Path, *, levels: int = 1) -> None:
    if not path.parent.is_dir():
        raise StoreError(f"{path.parent} is not a session directory")
    try:
        touch(path, levels=levels)  # never through a link: a sentinel links nowhere
    except OSError as exc:
        raise StoreError(f"cannot write {path}: {exc.strerror or exc}") from exc


def _lstat_mode(path: Path) -> int:
    """``path``'s own mode (a link's, not its target's), 0 where nothing is."""
    try:
        return os.lstat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return 0


def _present(path: Path) -> bool:
    """Whether anything is at ``path``, a dangling link included (one lstat)."""
    return _lstat_mode(path) != 0


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

    async def cancel_requested(self, session_id: str) -> bool:
        """True while the session's ``cancel`` file exists."""
        return (self._locate(session_id) / "cancel").exists()

    async def clear_cancel(self, session_id: str) -> None:
        """See ``SignalSource.clear_cancel``."""
        try:
            (self._locate(session_id) / "cancel").unlink(missing_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot clear the cancel request: {exc.strerror or exc}") from exc

    async def clear_pause(self, session_id: str) -> None:
        """See ``SignalSource.clear_pause``."""
        try:
            (self._locate(session_id) / "pause").unlink(missing_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot clear the pause: {exc.strerror or exc}") from exc

    async def wait_for_cancel(self, session_id: str) -> None:
        """See ``SignalSource.wait_for_cancel``."""
        # Another process writes the file: there is no event to wait on, so it is polled,
        # by one task for every waiting session of this loop (``cancel_watch``).
        await cancel_watch(self._poll).wait(self._locate(session_id) / "cancel")

    async def is_paused(self, session_id: str) -> bool:
        """See ``SignalSource.is_paused``."""
        return (self._locate(session_id) / "pause").exists()

    async def directives(self, session_id: str, *, after: int) -> tuple[Directive, ...]:
        """See ``SignalSource.directives``."""
        if not _present(self._locate(session_id) / "directives.jsonl"):
            return ()
        return await asyncio.to_thread(read_directives, self._locate(session_id), after=after)

    async def export_requests(self, session_id: str) -> tuple[str, ...]:
        """See ``SignalSource.export_requests``."""
        directory = self._locate(session_id) / "exports"
        # Asked at every checkpoint: one lstat (a directory, not a link to one), not two stats.
        if not stat.S_ISDIR(_lstat_mode(directory)):
            return ()
        return tuple(sorted(p.stem for p in directory.glob("*.request")))

    async def answer_export(self, session_id: str, request_id: str, text: str) -> None:
        """See ``SignalSource.answer_export``."""
        from rho_adapters.store.layout import write_atomic

        directory = self._locate(session_id) / "exports"
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
