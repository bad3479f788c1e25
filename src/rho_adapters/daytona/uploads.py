"""Files put into a sandbox through its toolbox's ``POST /files/bulk-upload``.

The daemon reads the multipart stream in order and takes a file only after its path, so each
``files[i].path`` field goes right before its ``files[i].file`` field; parent directories are
created by the daemon. Every path is checked (``confine.check_upload_path``) before the first
request.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from typing import TYPE_CHECKING

from rho_adapters.daytona._errors import partly_uploaded
from rho_adapters.daytona.api import Sandbox, SandboxAPI
from rho_adapters.daytona.confine import check_upload_path
from rho_domain.errors import RhoError, SensitivePath, ToolError
from rho_domain.paths import check_file_path, check_path_text
from rho_domain.ports.commands import FileUpload
from rho_domain.write_rules import write_refusal

if TYPE_CHECKING:
    from rho_adapters.daytona.workspace import SandboxWorkspace

UPLOAD_BATCH = 100  # files per bulk-upload request (the public implementation's batch)


async def put(workspace: SandboxWorkspace, files: Sequence[FileUpload]) -> None:
    """``DaytonaExecutor.upload``: the operator's files anywhere in the sandbox (a relative
    path joins the workspace), whatever the profile's write mode, never a path rho-agent
    never writes; every path judged before the first request, the sandbox's creation
    included (before, a refused path was found once a Dockerfile had been built for it)."""
    for item in files:
        check_path_text(item.path)
        check_file_path(item.path)
        if reason := write_refusal(item.path):
            raise SensitivePath(reason)
        given = workspace.roots.given  # the canonical root is known once the sandbox is
        target = posixpath.normpath(posixpath.join(given, item.path))
        if target == given:
            raise ToolError(f"{item.path} is the workspace directory, not a file")
        check_upload_path(target)
    sandbox = await workspace.ensure()
    root = workspace.roots.root
    pairs = [(posixpath.normpath(posixpath.join(root, f.path)), f.data) for f in files]
    await upload_many(workspace.api, sandbox, pairs)


async def upload(api: SandboxAPI, sandbox: Sandbox, path: str, data: bytes, shown: str) -> None:
    """Upload one file to ``path``; an error names it as ``shown`` (the model's path)."""
    check_upload_path(path)
    await api.send(
        "POST",
        f"{sandbox.toolbox_url}/files/bulk-upload",
        f"file upload to sandbox {sandbox.id}",
        file_path=shown,
        sandbox=sandbox,
        data={"files[0].path": path},
        files={"files[0].file": ("upload", data, "application/octet-stream")},
    )


async def upload_many(
    api: SandboxAPI, sandbox: Sandbox, files: Sequence[tuple[str, bytes]]
) -> None:
    """Upload ``(path, data)`` pairs, ``UPLOAD_BATCH`` per request (httpx would put every
    plain field first, so the paths go as file parts without a file name, which multipart
    sends as plain fields). A failure after a batch was written says which were
    (``partly_uploaded``: the daemon has no transaction across requests)."""
    for path, _ in files:
        check_upload_path(path)
    for start in range(0, len(files), UPLOAD_BATCH):
        batch = files[start : start + UPLOAD_BATCH]
        parts: list[tuple[str, tuple[str | None, bytes | str, str | None]]] = []
        for i, (path, data) in enumerate(batch):
            parts.append((f"files[{i}].path", (None, path, None)))
            parts.append((f"files[{i}].file", ("upload", data, "application/octet-stream")))
        try:
            await api.send(
                "POST",
                f"{sandbox.toolbox_url}/files/bulk-upload",
                f"file upload to sandbox {sandbox.id}",
                file_path=batch[0][0],
                sandbox=sandbox,
                files=parts,
            )
        except RhoError as exc:
            if start == 0:
                raise  # nothing was written: the error says all there is
            raise partly_uploaded(exc, [path for path, _ in files], start) from exc
