"""``directives.jsonl``: the operator's instructions to a session, one line each.

A line is one JSON object ``{"text", "at"}``, appended by ``add_directive`` under an exclusive
flock; a hand-written plain line is a directive too. A directive's offset is its line index;
the file is never truncated, and the session records applied offsets in its trace, so a
directive is applied exactly once. A directive is applied whole or not at all: a line that
is no whole directive (a torn or interleaved write, ``directive_text``) is skipped, and the
reader told of it.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING

from rho_adapters.store.confined import open_file, read_at_most
from rho_domain.errors import StoreError

if TYPE_CHECKING:  # built when an operator sent one
    from rho_domain.ports.directive import Directive


@contextlib.contextmanager
def _locked(path: Path, mode: str, lock: int) -> Iterator[IO[bytes]]:
    try:
        with open_file(path, mode) as handle:
            fcntl.flock(handle.fileno(), lock)
            yield handle  # closing the file drops the lock
    except OSError as exc:
        raise StoreError(f"cannot use {path}: {exc.strerror or exc}") from exc


_WRITER = "the operators"  # who writes directives.jsonl, for the refusal of a huge one
DIRECTIVES_BYTES = 16 << 20
"""The most directives.jsonl may hold: thousands of an operator's instructions. The running
session reads it at every step and ``add_directive`` to count its lines: one planted past
this (a sparse file of gigabytes), read whole, cost its size in memory each time (the run and
``monitor directive`` ended in MemoryError); past it, it is refused (a StoreError naming
it)."""


def add_directive(session_dir: Path, text: str) -> int:
    """Append an instruction for the session; return its offset (line index)."""
    if not session_dir.is_dir():
        raise StoreError(f"{session_dir} is not a session directory")
    line = json.dumps({"text": text, "at": time.time()}, ensure_ascii=False).encode() + b"\n"
    with _locked(session_dir / "directives.jsonl", "a+b", fcntl.LOCK_EX) as handle:
        handle.seek(0)
        data = read_at_most(
            handle, session_dir / "directives.jsonl", DIRECTIVES_BYTES, writer=_WRITER
        )
        if data and not data.endswith(b"\n"):
            handle.write(b"\n")  # a writer died mid-line: that fragment stays one bad line
            data += b"\n"
        offset = data.count(b"\n")
        handle.write(line)
        handle.flush()
    return offset


def read_directives(
    session_dir: Path, *, after: int = 0, refused: Callable[[int, str], None] | None = None
) -> tuple[Directive, ...]:
    """Directives with offset >= ``after``. Only complete lines count, and only whole
    directives: a line that is not one (``directive_text``) is skipped, and ``refused(offset, why)``
    told of it. Before, a torn write (a writer that died mid-line, the line then ended by the
    next ``add_directive``) or two writers interleaving without the lock reached the model
    raw, as an operator's instruction (``{"text": "stop deleting the da``)."""
    path = session_dir / "directives.jsonl"
    if not os.path.lexists(path):
        return ()
    with _locked(path, "rb", fcntl.LOCK_SH) as handle:
        data = read_at_most(handle, path, DIRECTIVES_BYTES, writer=_WRITER)
    lines = data.split(b"\n")[:-1]  # the piece after the last newline is not complete
    if len(lines) <= after:
        return ()
    from rho_domain.ports.directive import Directive

    found = []
    for offset, line in enumerate(lines[after:], start=after):
        # a blank line (``echo >> directives.jsonl``, an editor's) says nothing: injected, it
        # was an empty "[Directive from the operator]" message the model was left to interpret
        if not line.strip():
            continue
        try:
            found.append(Directive(offset=offset, text=directive_text(line)))
        except ValueError as exc:
            if refused is not None:
                refused(offset, str(exc))
    return tuple(found)


def directive_text(line: bytes) -> str:
    """The directive a line holds: a JSON object's ``text``, or a hand-written plain line.
    Raises ``ValueError`` saying why for a line that is no whole directive: not UTF-8, or
    shaped as JSON (beginning with ``{`` or ending with ``}``) without being an object with a
    text, which is what a torn or interleaved write leaves. A plain line meant to look so is
    written as JSON (``monitor directive``)."""
    try:
        said = line.decode()
    except UnicodeDecodeError:
        raise ValueError("not UTF-8 text, as a write cut inside a character leaves") from None
    try:
        data = json.loads(said)
    except (ValueError, RecursionError):
        if said.strip().startswith("{") or said.strip().endswith("}"):
            torn = "a piece of a JSON line, as a torn or interleaved write leaves"
            raise ValueError(torn) from None
        return said  # a hand-written plain line is still a directive
    if not isinstance(data, dict):
        return said  # a plain line that happens to be JSON: "42", "true"
    text = data.get("text")
    if isinstance(text, str):
        return text
    raise ValueError("a JSON object without a text string")
