"""The listing's placements of sessions whose summary cannot be read (``lookup.Placements``).

Placed together by one listing, every broken session's placement came due together a minute
later, and that one listing read every config.yaml again (0.8 s of CPU per 500 sessions in
one request). Now a listing re-reads at most ``RECHECKS_PER_LISTING`` due placements, the
oldest first; a session whose listed dates changed is read at once, as before."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

from rho_domain.ports.session_control import SessionCatalog
from rho_domain.ports.store import SessionInfo
from rho_entry.server.admission import Admission
from rho_entry.server.lookup import RECHECK_SECONDS, RECHECKS_PER_LISTING, Placements


class _Configs:
    """The stored configs' working directories by id, counting each read."""

    def __init__(self, count: int) -> None:
        self.places = {f"s{n:03}": "/in" for n in range(count)}
        self.reads: list[str] = []

    async def record(self, session_id: str) -> Any:
        self.reads.append(session_id)
        return SimpleNamespace(config=SimpleNamespace(working_dir=self.places[session_id]))


def _info(session_id: str, updated_at: float = 1.0) -> SessionInfo:
    return SessionInfo(
        id=session_id,
        status="unknown",
        liveness="unknown",
        created_at=1.0,
        updated_at=updated_at,
        model="m",
        profile="readonly",
        first_prompt="",
    )


async def test_due_placements_are_read_again_a_few_at_a_time() -> None:
    configs = _Configs(48)
    assert RECHECKS_PER_LISTING == 16
    catalog = cast(SessionCatalog, configs)
    admission = cast(Admission, SimpleNamespace(visible=lambda where: where == "/in"))
    infos = [_info(sid) for sid in configs.places]
    placements = Placements()

    async def listing(now: float, rows: list[SessionInfo] = infos) -> set[str]:
        configs.reads.clear()
        shown = await placements.shown(catalog, admission, rows, now=now)
        return {info.id for info in shown}

    assert await listing(0.0) == set(configs.places)  # each placed once: read
    assert len(configs.reads) == len(infos)
    assert await listing(RECHECK_SECONDS / 2) == set(configs.places)
    assert configs.reads == []  # kept
    moved = "s000"
    configs.places[moved] = "/elsewhere"
    later = RECHECK_SECONDS + 1
    seen, reads = [], []
    for n in range(3):
        seen.append(await listing(later + n))
        reads.append(len(configs.reads))
    # before: the first listing past the minute read all 48 again, the next two none
    assert reads == [16, 16, 16]
    assert moved not in seen[0]  # the oldest first (all were placed at once: by id)
    assert all(moved not in each for each in seen[1:])
    changed = [_info(sid, updated_at=2.0 if sid == "s047" else 1.0) for sid in configs.places]
    await listing(later + 3, changed)
    assert configs.reads == ["s047"]  # its dates changed: read at once, nothing else due
