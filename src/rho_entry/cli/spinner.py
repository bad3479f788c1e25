"""A spinner with elapsed time on stderr, while waiting for the model or a tool.

Drawn only on a terminal: ``enabled`` is False when stderr is not a TTY, so logs and pipes
never receive carriage-return noise. It runs as an asyncio task on the session's loop and
erases its line when stopped.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import TextIO

_FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
_INTERVAL = 0.1


class Spinner:
    """A one-line spinner on ``stream`` while the model works; does nothing when disabled."""

    def __init__(self, stream: TextIO, *, enabled: bool) -> None:
        self.stream, self.enabled = stream, enabled
        self._task: asyncio.Task[None] | None = None

    def start(self, label: str) -> None:
        """Start (or restart with a new label); a no-op when disabled or outside a loop."""
        if not self.enabled:
            return
        self.stop()
        with contextlib.suppress(RuntimeError):  # no running loop: nothing to animate
            self._task = asyncio.get_running_loop().create_task(self._spin(label))

    def stop(self) -> None:
        """Stop and erase the spinner. Idempotent."""
        if self._task is None:
            return
        self._task.cancel()
        self._task = None
        self.stream.write("\r\x1b[2K")
        self.stream.flush()

    async def _spin(self, label: str) -> None:
        # wall time for display only; the domain's clock is not involved
        started = time.monotonic()
        frame = 0
        while True:
            elapsed = time.monotonic() - started
            glyph = _FRAMES[frame % len(_FRAMES)]
            self.stream.write(f"\r\x1b[2K{glyph} {label} {elapsed:.0f}s · Ctrl+C to cancel")
            self.stream.flush()
            frame += 1
            await asyncio.sleep(_INTERVAL)
