"""A new executor reads the ssh configurations anew: an ``Include`` glob is expanded again
and each file read is judged by its own identity (``settled_reads``), so a
``~/.ssh/conf.d/new.conf`` made after an executor read an unchanged ``~/.ssh/config``, or a
changed included file, names its keys to the next executor. A guard for any whole-result
cache of the ssh reading (weighed and refused in run25: docs/benchmarks.md): one keyed on
the configurations' identities alone, not the glob's directory, misses ``new.conf``. (A
file's ctime cannot be dated back, so the files here are never "settled" and
``settled_reads``' own memory is not exercised: its tests give it a clock.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from rho_adapters.local import LocalExecutor
from rho_domain.errors import SensitivePath


async def test_an_included_configuration_that_appears_or_changes_is_read(
    tmp_path: Path,
) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    (home / ".ssh" / "conf.d").mkdir(parents=True)
    ws.mkdir()
    for key in ("new.txt", "change.txt", "before.txt"):
        (ws / key).write_text("-----BEGIN OPENSSH PRIVATE KEY-----\n")
    config = home / ".ssh" / "config"
    config.write_text("Include conf.d/*.conf\n")
    old = home / ".ssh" / "conf.d" / "old.conf"
    old.write_text(f"IdentityFile {ws}/before.txt\n")
    first = LocalExecutor(str(ws), homes=(str(home),), base_env={})
    assert await first.read("new.txt")
    with pytest.raises(SensitivePath):
        await first.read("before.txt")

    (home / ".ssh" / "conf.d" / "new.conf").write_text(f"IdentityFile {ws}/new.txt\n")
    old.write_text(f"IdentityFile {ws}/change.txt\n")
    second = LocalExecutor(str(ws), homes=(str(home),), base_env={})
    for key in ("new.txt", "change.txt"):
        with pytest.raises(SensitivePath):
            await second.read(key)
    assert await second.read("before.txt")
