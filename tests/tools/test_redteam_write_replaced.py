"""What a file replaced by the write and edit tools keeps (red-team pass redwrite16, under
``file_write: full``): its permission bits, but never set-user-ID, set-group-ID or sticky;
and any valid name can be replaced, whatever its letters.

Before: both executors copied the whole mode onto the new content (``fchmod`` of
``S_IMODE``, ``chmod --reference``), so a setuid-root program edited by an agent running as
root (a container's usual user) stayed setuid root with the model's content in it; and the
temp file beside the target took 200 *characters* of its name, so a 240-byte name of
two-byte letters (valid: 120 of them) gave a temp name past 255 bytes, and its replacement
failed with "File name too long"."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from write_backends import writers

from rho_domain.permissions import FileWriteMode

BUILDERS = writers(FileWriteMode.FULL, ("local", "daytona"))
LONG = "é" * 120 + ".md"  # 243 bytes: a valid name


@pytest.mark.parametrize("backend", sorted(BUILDERS))
async def test_a_replaced_file_keeps_its_permission_bits_but_no_privilege(
    tmp_path: Path, backend: str
) -> None:
    modes = {"setuid.sh": 0o4755, "setgid.sh": 0o2750, "sticky.sh": 0o1700, "plain.sh": 0o640}
    for name, mode in modes.items():
        (tmp_path / name).write_bytes(b"#!/bin/sh\necho old\n")
        (tmp_path / name).chmod(mode)
    (tmp_path / LONG).write_bytes(b"old\n")
    executor = BUILDERS[backend](tmp_path)
    try:
        for name in (*modes, LONG):
            assert await executor.write(name, b"#!/bin/sh\necho new\n", overwrite=True)
    finally:
        await executor.aclose()
    kept = {name: stat.S_IMODE((tmp_path / name).stat().st_mode) for name in modes}
    assert kept == {"setuid.sh": 0o755, "setgid.sh": 0o750, "sticky.sh": 0o700, "plain.sh": 0o640}
    assert (tmp_path / LONG).read_bytes() == b"#!/bin/sh\necho new\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted((*modes, LONG))  # no temp left


async def test_a_lone_surrogate_is_the_model_s_error_not_a_crash(tmp_path: Path) -> None:
    # JSON may carry "\ud800", no character: the tools crashed with "failed unexpectedly:
    # UnicodeEncodeError", and edit called a UTF-8 file Latin-1.
    import json

    from rho_adapters.clock import SystemClock
    from rho_domain.messages import ToolCall
    from rho_domain.permissions import developer_profile
    from rho_domain.tools.base import ToolContext
    from rho_domain.tools.factory import build_registry

    (tmp_path / "notes.md").write_text("old é\n")
    profile = developer_profile()
    registry = build_registry(profile)
    executor = BUILDERS["local"](tmp_path)
    ctx = ToolContext(
        session_id="s", call_id="c", executor=executor, profile=profile, clock=SystemClock()
    )
    calls = [
        ("write", {"path": "a\ud800.md", "content": "x"}, "holds a lone surrogate"),
        ("write", {"path": "b.md", "content": "a\ud800b"}, "content holds a lone surrogate"),
        ("edit", {"path": "notes.md", "old_string": "old", "new_string": "\udc00"},
         "new_string holds a lone surrogate"),
    ]  # fmt: skip
    outs: dict[str, bool] = {}
    try:
        for name, args, why in calls:
            call = ToolCall(id="c", name=name, arguments=json.dumps(args))
            out = await registry.dispatch(call, ctx)
            outs[why] = out.is_error and why in out.content and "unexpectedly" not in out.content
    finally:
        await executor.aclose()
    assert outs == {why: True for _, _, why in calls}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.md"]
    assert (tmp_path / "notes.md").read_text() == "old é\n"


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user takes root")
@pytest.mark.parametrize("backend", sorted(BUILDERS))
async def test_a_file_replaced_by_root_keeps_its_owner_and_attributes(
    tmp_path: Path, backend: str
) -> None:
    """Before (varwrite16b): an agent run as root (a container's usual user) replacing a
    user's file gave it to root (the temp file's owner), which the user could no longer
    write; its ACL and user attributes were lost. Now the owner and group are kept (on
    both backends), and locally the ACL and ``user.*`` attributes, never ``security.*``."""
    target = tmp_path / "notes.md"
    target.write_bytes(b"old\n")
    target.chmod(0o640)
    os.chown(target, 4321, 4322)
    os.setxattr(target, "user.origin", b"hand-written")
    executor = BUILDERS[backend](tmp_path)
    try:
        assert await executor.write("notes.md", b"new\n", overwrite=True)
    finally:
        await executor.aclose()
    st = target.stat()
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (4321, 4322, 0o640)
    if backend == "local":
        assert os.getxattr(target, "user.origin") == b"hand-written"
    assert target.read_bytes() == b"new\n"
