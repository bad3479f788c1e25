"""The executors a write rule is tested on, each built alike: the local executor on the
workspace, the in-memory fake rooted there, and a Daytona executor over the fake sandbox
(``FakeDaytona``) whose working directory is the workspace. The write rules are the
domain's (``rho_domain.write_rules``); each backend applies them where its files are."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from rho_adapters.daytona import DaytonaExecutor
from rho_adapters.fakes import FakeDaytona, MemoryExecutor
from rho_adapters.local import LocalExecutor
from rho_domain.permissions import FileWriteMode
from rho_domain.ports.executor import Executor

KINDS = ("local", "memory", "daytona")


def writer(
    kind: str, ws: Path, mode: FileWriteMode, planted: Mapping[str, bytes] | None = None
) -> Executor:
    """The ``kind`` executor (one of ``KINDS``) over the workspace ``ws``, writing as ``mode``,
    with the files ``planted`` (relative path -> content) already in its workspace: on disk
    for the local and Daytona executors, in the in-memory fake's files for it."""
    if kind == "memory":
        return MemoryExecutor(dict(planted or {}), root=str(ws), file_write=mode)
    for name, data in (planted or {}).items():
        (ws / name).parent.mkdir(parents=True, exist_ok=True)
        (ws / name).write_bytes(data)
    if kind == "local":
        return LocalExecutor(str(ws), file_write=mode)
    fake = FakeDaytona()
    return DaytonaExecutor(
        fake.settings(working_dir=str(ws)), file_write=mode, transport=fake.transport
    )


def writers(
    mode: FileWriteMode, kinds: Sequence[str] = KINDS
) -> dict[str, Callable[[Path], Executor]]:
    """``kind -> build(ws)`` for ``kinds``, each writing as ``mode``."""
    return {kind: functools.partial(writer, kind, mode=mode) for kind in kinds}


# ``kind -> build(ws, mode)`` for every kind.
WRITERS: dict[str, Callable[[Path, FileWriteMode], Executor]] = {
    kind: functools.partial(writer, kind) for kind in KINDS
}
