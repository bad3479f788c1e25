"""A Daytona write's two requests (upload to a hidden temp name, then a finalize script that
renames it into place), what the finalize answered (``placed``), and the temp's removal when
the second does not complete.

Before, a finalize answered with an error (a lost runner, a proxy's 502), killed by the
daemon's timeout, or abandoned (the write cancelled: Ctrl+C, a turn's deadline) left
``.NAME.TOKEN.rho-tmp`` in the workspace for good, listed by ``list_dir`` and matched by
``glob``. Now such a failure removes it (one more request, bounded by ``_CLEANUP_SECONDS``,
its own failure logged, never raised over the first), and a temp only a killed rho-agent can
still leave is never listed (``rho_domain.paths.is_temp_name``).
"""

from __future__ import annotations

import asyncio
import logging
import posixpath

from rho_adapters.daytona import scripts, uploads
from rho_adapters.daytona.answers import ExecAnswer, quoted
from rho_adapters.daytona.api import Sandbox, SandboxAPI
from rho_adapters.daytona.path_scripts import ENVIRONMENT, EXISTS, MOVED
from rho_domain.errors import ExecutorError, PermissionDenied, SensitivePath
from rho_domain.write_rules import environment_refusal

_log = logging.getLogger(__name__)
_CLEANUP_SECONDS = 10.0  # how long a failed write waits for its temp's removal
_DONE = (0, EXISTS, ENVIRONMENT, MOVED)  # exit codes after which the finalize removed the temp


async def place(
    api: SandboxAPI,
    sandbox: Sandbox,
    *,
    temp: str,
    data: bytes,
    shown: str,
    finalize: str,
    timeout: float,
) -> ExecAnswer | None:
    """Upload ``data`` to ``temp`` and run the ``finalize`` script (which renames it or removes
    it); the finalize's answer (None: the daemon killed it). On any other outcome, an exception
    or cancellation included, ``temp`` is removed before the outcome is passed on."""
    try:
        await uploads.upload(api, sandbox, temp, data, shown)
        answer = await api.execute(sandbox, scripts.wrap(finalize), timeout=timeout)
    except BaseException:
        await _remove(api, sandbox, temp)
        raise
    if answer is None or answer.exit_code not in _DONE:
        await _remove(api, sandbox, temp)
    return answer


async def _remove(api: SandboxAPI, sandbox: Sandbox, temp: str) -> None:
    script = scripts.wrap(f"rm -f -- {scripts.q(temp)}\n")
    try:
        async with asyncio.timeout(_CLEANUP_SECONDS):
            await api.execute(sandbox, script, timeout=_CLEANUP_SECONDS)
    except (ExecutorError, TimeoutError) as exc:  # the write's own failure is the one to report
        _log.warning("could not remove the write's temp file %s in the sandbox: %s", temp, exc)


def placed(answer: ExecAnswer | None, path: str, target: str, root: str) -> bool:
    """What a write's finalize script answered (``path_scripts.finalize_script``), for the
    file shown as ``path`` at ``target`` in the workspace ``root``: True when it replaced a
    file, False when it made one; each refusal the script reports raised, naming ``path``."""
    if answer is None or answer.exit_code not in _DONE:
        said = (
            "no answer in time"
            if answer is None
            else f"{answer.exit_code}: {quoted(answer.result)}"
        )
        raise ExecutorError(f"could not write {path} in the sandbox ({said})")
    if answer.exit_code == MOVED:
        raise PermissionDenied(
            f"{path}: its directory {posixpath.dirname(target)} was replaced while it was "
            "written (by a link, or moved); nothing was written: check what changed it, "
            "then write again"
        )
    if answer.exit_code == ENVIRONMENT:
        where = answer.result.strip().removeprefix(root.rstrip("/") + "/")
        raise SensitivePath(environment_refusal(path, where))
    if answer.exit_code == EXISTS:
        raise PermissionDenied(f"{path} already exists and may not be overwritten")
    return answer.result.strip() == "replaced"
