"""A sandbox whose deletion fails, hangs or is cancelled is named in the log, never lost."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest
from daytona_support import make_rig

from rho_domain.errors import ExecutorError


async def test_a_deletion_cancelled_names_the_sandbox_left(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """SIGTERM (a second Ctrl+C) while a sandbox that did not start, or the session's own at
    close, was being deleted: the CancelledError left it running with no word of its id."""
    rig = make_rig(tmp_path)
    rig.fake.fail_creation("image pull failed")
    rig.fake.fail("DELETE", "/sandbox/sbx-1", hang=True)
    with caplog.at_level(logging.WARNING):
        task = asyncio.ensure_future(rig.executor.stat("."))
        await rig.fake.hung.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    assert "sandbox sbx-1" in caplog.text
    assert "created-by=rho-agent" in caplog.text
    rig.fake.hung.clear()
    rig.fake._creation_failure = None
    again = make_rig(tmp_path)
    await again.executor.stat(".")
    again.fake.fail("DELETE", "/sandbox/sbx-1", hang=True)
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        closing = asyncio.ensure_future(again.executor.aclose())
        await again.fake.hung.wait()
        closing.cancel()
        with pytest.raises(asyncio.CancelledError):
            await closing
    assert "could not delete Daytona sandbox sbx-1" in caplog.text
    assert again.executor.orphaned is not None
    with pytest.raises(ExecutorError, match="closed"):
        await again.executor.stat(".")
    await rig.executor.aclose()
