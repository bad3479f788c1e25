"""A Daytona write whose finalize fails or is abandoned leaves no ``.NAME.rho-tmp`` behind.

The write uploads to a hidden temp name and renames it in a second request; before, a
finalize answered with an error, or cancelled while the sandbox ran it, left the temp file in
the workspace for good, listed by ``list_dir`` and matched by ``glob``.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from daytona_support import closing, make_rig

from rho_domain.errors import ExecutorError


def _temps(ws: Path) -> list[str]:
    return sorted(p.name for p in ws.rglob("*.rho-tmp"))


async def test_daytona_failed_or_cancelled_finalize_removes_the_temp(tmp_path: Path) -> None:
    async for rig in closing(make_rig(tmp_path)):
        for overwrite, target in ((True, "src/a.txt"), (False, "src/new.txt")):
            lost = {"message": "runner lost"}
            rig.fake.fail("POST", "/process/execute", 500, lost, command=".rho-tmp")
            with pytest.raises(ExecutorError, match="runner lost"):
                await rig.executor.write(target, b"new", overwrite=overwrite)
            assert _temps(rig.ws) == []
        rig.fake.fail("POST", "/process/execute", command=".rho-tmp", hang=True)
        write = asyncio.create_task(rig.executor.write("src/a.txt", b"new", overwrite=True))
        await rig.fake.hung.wait()
        write.cancel()
        with pytest.raises(asyncio.CancelledError):
            await write
        assert _temps(rig.ws) == []
        assert (rig.ws / "src" / "a.txt").read_bytes() == b"hello\nworld\n"
        assert not (rig.ws / "src" / "new.txt").exists()


async def test_daytona_list_and_glob_never_show_a_write_temp(tmp_path: Path) -> None:
    """A temp a killed rho-agent left (between upload and rename) is not a workspace file."""
    async for rig in closing(make_rig(tmp_path)):
        (rig.ws / "src" / ".a.txt.0123456789ab.rho-tmp").write_bytes(b"half")
        (rig.ws / "src" / ".kept.rho-tmp").write_bytes(b"a user's own name")
        names = [info.name for info in await rig.executor.list_dir("src")]
        assert sorted(names) == [".kept.rho-tmp", "a.txt"]
        assert await rig.executor.glob("src/.*") == ("src/.kept.rho-tmp",)
