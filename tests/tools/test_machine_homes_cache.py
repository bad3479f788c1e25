"""machine_homes() is scanned once per process and again when /home changes."""

from __future__ import annotations

import os
from types import SimpleNamespace
from typing import Any

import pytest

from rho_adapters.local import homes as scan_module


def test_homes_are_scanned_again_only_when_home_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    scans: list[tuple[str, ...]] = []
    mtime = [1]
    real_stat = os.stat

    def scan() -> tuple[str, ...]:
        scans.append((f"/home/user{len(scans)}",))
        return scans[-1]

    def stat(path: Any, *args: Any, **kwargs: Any) -> Any:
        if path == "/home":
            return SimpleNamespace(st_mtime_ns=mtime[0])
        return real_stat(path, *args, **kwargs)

    monkeypatch.setattr(scan_module, "_scan_homes", scan)
    monkeypatch.setattr(os, "stat", stat)  # the homes module's os is this os
    monkeypatch.setattr(scan_module, "_HOMES", {})
    first = scan_module.machine_homes()
    assert scan_module.machine_homes() == first
    assert len(scans) == 1
    mtime[0] = 2  # a user was added or removed
    assert scan_module.machine_homes() == ("/home/user1",)
    assert len(scans) == 2


def test_the_real_scan_names_root_and_this_user() -> None:
    homes = scan_module._scan_homes()
    assert os.path.realpath("/root") in homes
    assert scan_module.machine_homes() == homes


def test_the_agents_home_is_added_by_its_real_path_unless_the_scan_has_it(
    tmp_path: Any,
) -> None:
    """$HOME already among the scan's real paths adds nothing; another $HOME (a service's
    HOME=/srv/app), even by a symlink, is added resolved."""
    homes = scan_module.machine_homes()
    assert scan_module.agent_homes({"HOME": homes[0]}) == homes
    real = tmp_path / "srv-app"
    real.mkdir()
    link = tmp_path / "home-link"
    link.symlink_to(real)
    assert scan_module.agent_homes({"HOME": str(link)}) == (*homes, str(real.resolve()))
    assert scan_module.agent_homes({"HOME": str(tmp_path / "missing")}) == homes
    assert scan_module.agent_homes({}) == homes


def test_a_home_that_is_a_link_in_home_is_its_target(tmp_path: Any) -> None:
    """Before (varwrite16b): the scan took only /home's directories, not its links, so with
    /home/alice -> /data/alice a workspace at /data/alice held no known home and its hidden
    entries (~/.bun/bin, ~/.nvm/nvm.sh) were written. Now a link's target is the home."""
    (tmp_path / "data/alice").mkdir(parents=True)
    (tmp_path / "home/bob").mkdir(parents=True)
    (tmp_path / "home/alice").symlink_to(tmp_path / "data/alice")
    (tmp_path / "home/dangling").symlink_to(tmp_path / "nowhere")
    found = scan_module._scan_homes(str(tmp_path / "home"))
    assert str(tmp_path / "data/alice") in found
    assert str(tmp_path / "home/bob") in found
    assert not any("nowhere" in home for home in found)
