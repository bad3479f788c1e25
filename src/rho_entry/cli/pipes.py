"""Standard output and error that survive their reader going away
(``rho-agent ... 2>&1 | head -1``).

Unix tools end quietly when the program reading their output exits. Python instead raises
``BrokenPipeError`` from the next ``write`` or ``flush``, which here would surface inside an event
listener, end the run as an error and print a traceback at interpreter shutdown.

``QuietPipe`` wraps a text stream: the first ``BrokenPipeError`` points the stream's file
descriptor at ``/dev/null`` (the recipe of Python's ``signal`` documentation), so everything
written afterwards, including what is still buffered, is discarded without another error. The
run itself goes on and ends as it would have: its answer is in the session, where ``--resume``
and ``export`` find it.

Any other failed write (a full disk behind ``> file``, ``/dev/full``, an I/O error) is handled
the same way, and remembered (``failure``): ``main`` then says on standard error that the
output was lost, and exits 1 instead of 0, as ``--output`` does when its file cannot be
written. A standard stream that was closed when the process started (``>&-``, ``2>&-``,
``<&-``) is one whose every write fails: ``standard_streams`` points its descriptor at
``/dev/null`` first, so that the first file the process opens (a session's trace) does not
take descriptor 1 or 2 and receive whatever is written there, and standard input reads as
empty.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from typing import Any, TextIO

CLOSED = "it was closed when rho-agent started"


class QuietPipe:
    """A text stream whose writes never raise ``OSError``; see the module docstring.
    ``failure`` says why output was lost, other than a reader going away (None: it was not);
    ``closed`` streams lose every write (``CLOSED``)."""

    def __init__(self, stream: TextIO, *, closed: bool = False) -> None:
        self._stream = stream
        self.broken = False
        self.closed = closed
        self.failure: str | None = None

    def write(self, text: str) -> int:
        """Write ``text``; after the reader has gone, discard it. Returns ``len(text)``."""
        if self.closed:
            if text and self.failure is None:
                self.failure = CLOSED
            return len(text)
        try:
            return self._stream.write(text)
        except OSError as exc:
            self._lost(exc)
            return len(text)

    def flush(self) -> None:
        """Flush; a reader that has gone, or a failed write, is not an error."""
        try:
            self._stream.flush()
        except OSError as exc:
            self._lost(exc)

    def _lost(self, exc: OSError) -> None:
        if not isinstance(exc, BrokenPipeError) and self.failure is None:
            self.failure = exc.strerror or str(exc)
        self._discard_from_now_on()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)

    def _discard_from_now_on(self) -> None:
        self.broken = True
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            try:
                os.dup2(devnull, self._stream.fileno())
            finally:
                os.close(devnull)
        except (OSError, ValueError):  # no real descriptor (an in-memory stream): drop it
            return
        # What is still buffered now goes to /dev/null instead of raising again at exit.
        try:
            self._stream.flush()
        except OSError:  # pragma: no cover - the descriptor is /dev/null now
            return


@contextlib.contextmanager
def standard_streams(*, process: bool) -> Iterator[tuple[QuietPipe, QuietPipe]]:
    """``sys.stdout`` and ``sys.stderr`` as ``QuietPipe``s for the body, put back after it.
    With ``process`` (the process's own command line), a standard descriptor that is closed
    is pointed at ``/dev/null`` first, and Python's missing stream for it (None) replaced by
    one on it: the pipe of a closed output is ``closed``; a closed input reads as empty."""
    saved = sys.stdin, sys.stdout, sys.stderr
    stand_ins: list[TextIO] = []
    closed = _fill_closed_descriptors() if process else frozenset[int]()
    streams = []
    for fd, stream in enumerate(saved):
        if stream is None and fd in closed:
            stream = _on_descriptor(fd)
            stand_ins.append(stream)
        streams.append(stream)
    out = QuietPipe(streams[1], closed=1 in closed)
    err = QuietPipe(streams[2], closed=2 in closed)
    sys.stdin, sys.stdout, sys.stderr = streams[0], out, err
    try:
        yield out, err
    finally:
        out.flush()  # now, not at interpreter exit, where a broken pipe would print
        err.flush()
        sys.stdin, sys.stdout, sys.stderr = saved
        for stand_in in stand_ins:
            stand_in.close()


def _on_descriptor(fd: int) -> TextIO:
    """A text stream on standard descriptor ``fd`` that leaves it open when closed."""
    if fd == 0:
        return open(fd, encoding="utf-8", closefd=False)
    return open(fd, "w", encoding="utf-8", closefd=False)


def _fill_closed_descriptors() -> frozenset[int]:
    """The standard descriptors (0, 1, 2) that were closed, each now open on /dev/null."""
    closed = []
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            closed.append(fd)
    for fd in closed:
        devnull = os.open(os.devnull, os.O_RDWR)
        if devnull != fd:
            os.dup2(devnull, fd)
            os.close(devnull)
    return frozenset(closed)
