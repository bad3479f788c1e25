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
"""

from __future__ import annotations

import os
from typing import Any, TextIO


class QuietPipe:
    """A text stream whose writes never raise ``BrokenPipeError``; see the module docstring."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self.broken = False

    def write(self, text: str) -> int:
        """Write ``text``; after the reader has gone, discard it. Returns ``len(text)``."""
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._discard_from_now_on()
            return len(text)

    def flush(self) -> None:
        """Flush; a reader that has gone is not an error."""
        try:
            self._stream.flush()
        except BrokenPipeError:
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
        except BrokenPipeError:  # pragma: no cover - the descriptor is /dev/null now
            return
