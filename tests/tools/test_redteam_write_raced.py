"""A write whose directory is replaced by a link between the check and the write (red-team
pass mcp20). The Daytona executor judged the path (resolved in the sandbox), then uploaded
the content to a temp file beside it and moved it into place by path: a directory replaced
meanwhile by a link to ``.git/hooks`` (a process of the sandbox's, started earlier) had both
follow the link, and ``sub/pre-commit`` became ``.git/hooks/pre-commit``, a hook git runs.
The local executor writes relative to the directory descriptors it resolved (a link put in
later is never followed); the in-memory fake has no links to put."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import httpx
import pytest
from write_backends import writers

from rho_adapters.daytona import DaytonaExecutor
from rho_adapters.fakes import FakeDaytona
from rho_adapters.local import LocalExecutor
from rho_domain.errors import PermissionDenied, ToolError
from rho_domain.permissions import FileWriteMode


def _swapped(ws: Path, fake: FakeDaytona, *, after_upload: bool) -> httpx.MockTransport:
    """The fake's transport, replacing ``sub/`` by a link to ``.git/hooks`` once: as the
    content is uploaded (before the request, or after it)."""
    done: list[bool] = []

    def swap() -> None:
        done.append(True)
        os.rename(ws / "sub", ws / "old")
        os.symlink(".git/hooks", ws / "sub")

    async def handler(request: httpx.Request) -> httpx.Response:
        uploading = request.url.path.endswith("/files/bulk-upload") and not done
        if uploading and not after_upload:
            swap()
        answer = await fake.handler(request)
        if uploading and after_upload:
            swap()
        return answer

    return httpx.MockTransport(handler)


@pytest.mark.parametrize("mode", [FileWriteMode.FULL, FileWriteMode.CREATE_ONLY])
async def test_a_directory_replaced_by_a_link_while_written_is_not_written_through(
    tmp_path: Path, mode: FileWriteMode
) -> None:
    full = mode is FileWriteMode.FULL
    name = "pre-commit" if full else "notes.md"
    for after_upload in (False, True):
        ws = tmp_path / str(after_upload)
        (ws / "sub").mkdir(parents=True)
        (ws / ".git" / "hooks").mkdir(parents=True)
        fake = FakeDaytona()
        transport = _swapped(ws, fake, after_upload=after_upload)
        executor = DaytonaExecutor(
            fake.settings(working_dir=str(ws)), file_write=mode, transport=transport
        )
        try:
            with pytest.raises(PermissionDenied) as refused:
                await executor.write(f"sub/{name}", b"#!/bin/sh\necho pwned\n", overwrite=full)
        finally:
            await executor.aclose()
        assert str(refused.value) == (
            f"sub/{name}: its directory {ws}/sub was replaced while it was written (by a "
            "link, or moved); nothing was written: check what changed it, then write again"
        )
        assert list((ws / ".git" / "hooks").iterdir()) == [], after_upload


async def test_a_name_too_long_for_a_disk_is_refused_saying_the_limit(tmp_path: Path) -> None:
    # each backend answered "path too long": neither which name nor the limit (255 bytes of
    # UTF-8, where 130 accented letters are already too many)
    names = {"a" * 300 + ".md": 303, "d/" + "é" * 130 + ".md": 263}
    for kind, build in writers(FileWriteMode.FULL).items():
        (tmp_path / kind).mkdir()
        executor = build(tmp_path / kind)
        try:
            for name, size in names.items():
                with pytest.raises(ToolError) as refused:
                    await executor.write(name, b"x\n", overwrite=False)
                assert (
                    f"is too long: {size} bytes of UTF-8; a file or directory name is at most 255"
                    in str(refused.value)
                ), kind
        finally:
            await executor.aclose()


class _SwapAfterTheChecks:
    """The local executor's secrets policy, asked about a write's path twice: as given, and
    as the walk resolved it (the directories open by then). On the second question it moves
    ``sub/`` away and puts a link to ``target`` in its place: the worst moment, after every
    check and just before the file is written."""

    def __init__(self, policy: Any, ws: Path, target: str) -> None:
        self._policy, self._ws, self._target = policy, ws, target
        self.homes = policy.homes
        self.seen: list[str] = []

    def refusal(self, path: str) -> str | None:
        self.seen.append(path)
        if path.startswith("/") and self.seen.count(path) == 2:
            os.rename(self._ws / "sub", self._ws / "old")
            os.symlink(self._target, self._ws / "sub")
        reason: str | None = self._policy.refusal(path)
        return reason


async def test_the_local_executor_writes_into_the_directory_it_checked_not_a_link_put_there(
    tmp_path: Path,
) -> None:
    # the Daytona finalize wrote through such a link (cfa70535); locally nothing proved that
    # the directory descriptors opened by the walk are what the file is written relative to
    cases = [
        (FileWriteMode.FULL, "pre-commit", ".git/hooks", True),  # replacing a planted file
        (FileWriteMode.FULL, "post-merge", ".git/hooks", False),
        (FileWriteMode.CREATE_ONLY, "notes.md", ".github/workflows", False),
    ]
    for at, (mode, name, target, overwrite) in enumerate(cases):
        ws = tmp_path / str(at)
        (ws / "sub").mkdir(parents=True)
        (ws / target).mkdir(parents=True)
        if overwrite:
            (ws / "sub" / name).write_bytes(b"old\n")
            (ws / target / name).write_bytes(b"the project's\n")
        executor = LocalExecutor(str(ws), file_write=mode)
        swapping = _SwapAfterTheChecks(executor._workspace.policy, ws.resolve(), target)
        executor._workspace.policy = swapping  # type: ignore[assignment]
        try:
            await executor.write(f"sub/{name}", b"#!/bin/sh\necho pwned\n", overwrite=overwrite)
        finally:
            await executor.aclose()
        assert (ws / "sub").is_symlink(), "the swap did not happen"
        assert (ws / "old" / name).read_bytes() == b"#!/bin/sh\necho pwned\n", mode
        expected = [b"the project's\n"] if overwrite else []
        assert [p.read_bytes() for p in (ws / target).iterdir()] == expected, (mode, name)
