"""The alias scan is shared by every executor of the process with the same secrets policy and
roots, for its two seconds (``hardlinks.SharedScans``): a service makes an executor per
session, and each one's first ``list`` scanned the same workspace and the same 178 concrete
secret locations again (~1 ms of CPU). A link made since the last scan, whichever executor
made it, is seen once that scan is ``ttl`` seconds old (docs/security.md's limit, no
weaker); a different policy never answers from another's scan. Real files and links."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import pytest

from rho_adapters.local import LocalExecutor, hardlinks
from rho_adapters.local.hardlinks import AliasCache, SharedScans
from rho_domain.errors import SensitivePath


class Clock:
    """A monotonic clock the test moves."""

    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def scans(monkeypatch: pytest.MonkeyPatch) -> tuple[SharedScans, Clock, list[tuple[str, ...]]]:
    """The process's shared scans, on a clock the test moves, and every scan's roots."""
    clock = Clock()
    shared = SharedScans(clock=clock)
    monkeypatch.setattr(hardlinks, "SHARED_SCANS", shared)
    scanned: list[tuple[str, ...]] = []
    real = hardlinks.find_aliases

    def recording(roots: Sequence[str], *args: object, **kwargs: object) -> hardlinks.Aliases:
        scanned.append(tuple(roots))
        return real(roots, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(hardlinks, "find_aliases", recording)
    return shared, clock, scanned


async def test_executors_with_one_policy_share_a_scan_and_see_a_new_link_after_it(
    tmp_path: Path, scans: tuple[SharedScans, Clock, list[tuple[str, ...]]]
) -> None:
    _, clock, scanned = scans
    ws = tmp_path / "ws"
    (ws / "keys").mkdir(parents=True)
    (ws / "keys" / "k").write_text("PRIVATE KEY\n")
    first = LocalExecutor(str(ws))
    assert [e.name for e in await first.list_dir("keys")] == ["k"]
    assert len(scanned) == 1
    second = LocalExecutor(str(ws))  # a new session's executor: the same policy and roots
    assert [e.name for e in await second.list_dir("keys")] == ["k"]
    assert len(scanned) == 1, "the second executor answered from the first one's scan"
    # a different policy (a secret location of its own) never takes another's scan
    other = LocalExecutor(str(ws), secret_locations=(str(tmp_path / "vault"),))
    await other.list_dir("keys")
    assert len(scanned) == 2

    (ws / ".ssh").symlink_to("keys")  # keys is now what ~/.ssh-like .ssh leads to
    clock.now += 1.9  # within the documented two seconds: the last scan may still answer
    third = LocalExecutor(str(ws))
    assert [e.name for e in await third.list_dir("keys")] == ["k"]
    clock.now += 0.2  # the scan is two seconds old: every executor scans again
    for executor in (first, third, LocalExecutor(str(ws))):
        with pytest.raises(SensitivePath, match="another name"):
            await executor.list_dir("keys")
        with pytest.raises(SensitivePath, match="another name"):
            await executor.read("keys/k")
    assert len(scanned) == 3, "one new scan, shared by the three"


def test_a_hard_link_made_after_a_shared_scan_is_found_once_it_is_old(tmp_path: Path) -> None:
    clock = Clock()
    shared = SharedScans(clock=clock)
    (tmp_path / ".env").write_text("TOKEN=1\n")
    policy = LocalExecutor(str(tmp_path)).policy
    root = os.path.realpath(tmp_path)
    first, second = AliasCache(policy, scans=shared), AliasCache(policy, scans=shared)
    assert first.get([root]).paths == ()
    os.link(tmp_path / ".env", tmp_path / "notes.txt")
    assert second.fresh([root])
    assert second.get([root]).paths == ()  # the limit: made in the scan's two seconds
    clock.now += shared.ttl
    assert not first.fresh([root])
    assert not second.fresh([root])
    assert second.get([root]).paths == (f"{root}/notes.txt",)
    assert first.get([root]).paths == (f"{root}/notes.txt",)
