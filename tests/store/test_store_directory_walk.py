"""How a session directory is opened (``confined.directory_fd``): the sessions root as it is,
the last names without following a link, split by string. A session's files open it about
eight times a session in the store's worker threads, whose Python holds the GIL the event
loop waits for (issue 33): building ``Path`` objects there was half of each walk's CPU."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

from rho_adapters.store.confined import LinkRefused, directory_fd


def paths_built(work: Any) -> int:
    """How many ``Path`` objects ``work()`` built (a profile hook on pathlib's own
    constructors: what ran, not a stand-in for it)."""
    called = 0

    def hook(frame: FrameType, event: str, _arg: object) -> None:
        nonlocal called
        code = frame.f_code
        if event == "call" and code.co_name in _BUILDS and code.co_filename.endswith("pathlib.py"):
            called += 1

    sys.setprofile(hook)
    try:
        work()
    finally:
        sys.setprofile(None)
    return called


_BUILDS = frozenset({"_from_parts", "_from_parsed_parts"})


def opened(directory: Path, levels: int = 1) -> tuple[int, int]:
    """(device, inode) of what ``directory_fd`` opened."""
    with directory_fd(directory, levels) as fd:
        info = os.fstat(fd)
    return info.st_dev, info.st_ino


def same(path: Path) -> tuple[int, int]:
    info = os.stat(path)
    return info.st_dev, info.st_ino


def test_a_session_directory_is_opened_without_building_paths(tmp_path: Path) -> None:
    session = tmp_path / "sessions" / "s1"
    session.mkdir(parents=True)

    def walk() -> None:
        with directory_fd(session):
            pass

    assert paths_built(walk) == 0  # was 2: Path(*parts[:-1]) and base / name


def test_the_walk_opens_what_the_path_names_at_any_depth(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    exports = tmp_path / "sessions" / "s1" / "exports"
    exports.mkdir(parents=True)
    assert opened(exports.parent) == same(exports.parent)
    assert opened(exports, 2) == same(exports)
    monkeypatch.chdir(tmp_path)
    assert opened(Path("sessions")) == same(tmp_path / "sessions")  # a relative name
    assert opened(Path("sessions/s1/exports"), 2) == same(exports)
    assert opened(Path("/tmp")) == same(Path("/tmp"))
    assert opened(Path("/tmp"), 2) == same(Path("/tmp"))  # more levels than names


def test_a_linked_session_directory_is_refused_by_its_whole_name(tmp_path: Path) -> None:
    (tmp_path / "sessions" / "real").mkdir(parents=True)
    (tmp_path / "sessions" / "s1").symlink_to(tmp_path / "sessions" / "real")
    with pytest.raises(LinkRefused, match=f"^{tmp_path / 'sessions' / 's1'}: is a link"):
        opened(tmp_path / "sessions" / "s1")
    (tmp_path / "sessions" / "real" / "exports").symlink_to(tmp_path)
    with pytest.raises(LinkRefused, match=f"^{tmp_path / 'sessions' / 'real' / 'exports'}: "):
        opened(tmp_path / "sessions" / "real" / "exports", 2)
    (tmp_path / "sessions" / "real" / "inner").mkdir()
    inner = tmp_path / "sessions" / "s1" / "inner"  # what leads to the last name: as it is
    assert opened(inner) == same(tmp_path / "sessions" / "real" / "inner")
