"""A file written into the Daytona sandbox: every check before the sandbox is asked, and again
on what it resolved, then one temporary file placed and renamed (``DaytonaExecutor.write``).

The checks are the local executor's, in the same order: the profile's write mode, the path's
text and shape, a secret or a never-written location (``SandboxWorkspace.check_write``), what
the content would be (a secret, a formula in a created CSV), and, once the sandbox resolved
the path, a symbolic link, a non-regular file, an existing file that may not be overwritten,
a file with other hard links. The temporary file is made beside the target and renamed over it
by ``path_scripts.finalize_script`` (create-only: ``ln``, which fails on an existing name).
"""

from __future__ import annotations

import asyncio
import posixpath
import secrets
import stat as stat_mod

from rho_adapters.daytona import path_scripts
from rho_adapters.daytona.placing import place, placed
from rho_adapters.daytona.workspace import RESOLVE_TIMEOUT, SandboxWorkspace
from rho_domain.create_only import create_only_refusal, created_content_refusal
from rho_domain.errors import PermissionDenied, SensitivePath, ToolError
from rho_domain.paths import check_file_path, check_path_text, temp_name
from rho_domain.permissions import FileWriteMode
from rho_domain.write_rules import check_write_mode
from rho_domain.written_content import content_refusal


async def write_file(
    workspace: SandboxWorkspace,
    file_write: FileWriteMode,
    path: str,
    data: bytes,
    *,
    overwrite: bool,
) -> bool:
    """Write ``data`` to ``path`` in ``workspace``'s sandbox under ``file_write`` (see
    ``Executor.write``): True when it replaced a file, False when it made one. A refusal
    (PermissionDenied, SensitivePath, ToolError) is raised before anything is written;
    ExecutorError when the sandbox did not finish the write."""
    check_write_mode(path, file_write, overwrite=overwrite)
    check_path_text(path)
    check_file_path(path)
    workspace.check_write(path, ())
    if reason := content_refusal(path, data):
        raise SensitivePath(reason)
    res, _, parts = await workspace.resolve(path, write=True)
    workspace.check_write(path, parts)
    created = file_write is FileWriteMode.CREATE_ONLY
    relative = "/".join(parts)
    if created and (
        reason := create_only_refusal(relative)
        # off the loop: a 10 MB sheet of numbers is parsed in about a second
        or await asyncio.to_thread(created_content_refusal, relative, data)
    ):
        raise PermissionDenied(reason)
    if not parts:
        raise ToolError(f"{path} is the workspace directory")
    if res.is_link:
        raise PermissionDenied(f"{path} is a symbolic link; writing through links is refused")
    if res.mode is not None and not stat_mod.S_ISREG(res.mode):
        raise ToolError(f"{path} exists and is not a regular file")
    if res.mode is not None and not overwrite:
        raise PermissionDenied(f"{path} already exists and may not be overwritten")
    if res.mode is not None and res.links > 1:  # as locally (``local.files``)
        raise PermissionDenied(f"{path} has other hard links; refusing to write it")
    target = res.canonical
    parent, name = posixpath.split(target)
    temp = posixpath.join(parent, temp_name(name, secrets.token_hex(6)))
    root = workspace.roots.root
    dirs = [posixpath.join(root, *parts[:depth]) for depth in range(1, len(parts))]
    answer = await place(
        workspace.api,
        await workspace.ensure(),
        temp=temp,
        data=data,
        shown=path,
        finalize=path_scripts.finalize_script(temp, target, dirs, overwrite=overwrite),
        timeout=RESOLVE_TIMEOUT,
    )
    return placed(answer, path, target, root)
