"""A pipeline's stages wired together and started.

``spawn_pipeline`` opens what the stages read and write (``/dev/null``, the pipes between
stages, a here-document's pipe, the seccomp filter's descriptor), hands them to
``process.run_processes`` and closes every one it opened, also when opening another failed.
Imported by the first command started (``CommandRunner.run``), with the process launcher.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from rho_adapters.local.seccomp import with_filter
from rho_domain.errors import ToolError

if TYPE_CHECKING:
    from rho_adapters.local.process import Finished
    from rho_domain.ports.commands import Command

MAX_STDIN_DATA = 60_000  # stays below a pipe buffer, so writing it can never block


async def spawn_pipeline(
    argvs: Sequence[tuple[str, ...]],
    modes: Sequence[tuple[bool, str]],
    datas: Sequence[str | None],
    stdin_fds: Sequence[int | None],
    cwd: str,
    env: Mapping[str, str],
    command: Command,
    *,
    kill_after: int | None,
    roots: Sequence[str] = (),
) -> Finished:
    """Run ``argvs`` as one pipeline in ``cwd`` with ``env``: per stage, ``modes`` (stdout to
    /dev/null, stderr ``capture``/``null``/``stdout``), ``datas`` (a here-document) and
    ``stdin_fds`` (an open file, the caller's to close); ``command`` gives the timeout and the
    cap, ``kill_after`` the output limit; ``roots``: the sandbox's roots, which a bubblewrap
    stage binds from the directories walked to now (``held_dirs``), as ``cwd`` is. Raises
    ``ToolError`` for a here-document over ``MAX_STDIN_DATA`` bytes."""
    from rho_adapters.local.held_dirs import (
        cwd_by_identity,
        descriptor_path,
        held_cwd,
        roots_by_descriptor,
    )
    from rho_adapters.local.process import Spawn, run_processes

    # the directory judged, held: started in by its descriptor, never by its path again
    opened: list[int] = [held_cwd(cwd)]
    cwd = descriptor_path(opened[0])

    def fd(value: int) -> int:
        opened.append(value)
        return value

    try:
        devnull_r = fd(os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC))
        devnull_w = fd(os.open(os.devnull, os.O_WRONLY | os.O_CLOEXEC))
        out_r, out_w = os.pipe2(os.O_CLOEXEC)
        opened.append(out_w)
        spawns: list[Spawn] = []
        previous = devnull_r
        for i, argv in enumerate(argvs):
            stdout_null, stderr_mode = modes[i]
            stdin = previous
            if stdin_fds[i] is not None:
                stdin = stdin_fds[i]  # type: ignore[assignment]
            elif datas[i] is not None:
                stdin = _data_pipe(datas[i] or "", fd)
            if i == len(argvs) - 1:
                stdout = devnull_w if stdout_null else out_w
            else:
                next_r, next_w = os.pipe2(os.O_CLOEXEC)
                fd(next_r)
                stdout = devnull_w if stdout_null else fd(next_w)
                if stdout_null:
                    os.close(next_w)
                previous = next_r
            stderr = {"capture": out_w, "null": devnull_w, "stdout": stdout}[stderr_mode]
            argv, extra = with_filter(argv)
            opened.extend(extra)
            argv, held = roots_by_descriptor(argv, roots)  # bound from descriptors
            opened.extend(held)
            argv = cwd_by_identity(argv, opened[0])
            extra = (*extra, *held)
            spawns.append(
                Spawn(argv=argv, stdin=stdin, stdout=stdout, stderr=stderr, pass_fds=extra)
            )
    except BaseException:
        for value in opened:
            with contextlib.suppress(OSError):
                os.close(value)
        raise
    return await run_processes(
        spawns,
        out_r,
        cwd=cwd,
        env=env,
        timeout=command.timeout,
        cap=command.max_output_bytes,
        undecodable="surrogateescape" if command.keep_undecodable else "replace",
        close_after_spawn=opened,
        kill_after=kill_after,
    )


def _data_pipe(data: str, fd: Callable[[int], int]) -> int:
    raw = data.encode()
    if len(raw) > MAX_STDIN_DATA:
        raise ToolError(f"here-document larger than {MAX_STDIN_DATA} bytes")
    read_end, write_end = os.pipe2(os.O_CLOEXEC)
    fd(read_end)
    try:
        os.write(write_end, raw)
    finally:
        os.close(write_end)
    return read_end
