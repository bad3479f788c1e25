"""``rho_adapters.unnamed.replace_whole``, the one way the store's meta.json, the server's token
file and the CLI's written files are replaced whole: with an unnamed file (``O_TMPFILE``) and,
where the filesystem has none (NFS, some overlays; forced here), with a named temp. Either way
a replaced file is the old one or the new one, and no temp name is left, when the fill fails
too."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from rho_adapters import unnamed


@pytest.fixture(params=["unnamed", "named temp"])
def folder(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[int]:
    if request.param == "named temp":  # a filesystem without O_TMPFILE
        monkeypatch.setattr(unnamed, "unnamed", lambda dir_fd, mode: None)
    (tmp_path / "f.txt").write_text("old\n")
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    yield fd
    os.close(fd)


def _names(fd: int) -> list[str]:
    return sorted(os.listdir(fd))


def test_a_file_is_replaced_and_created_whole(folder: int) -> None:
    for name in ("f.txt", "new.txt"):
        unnamed.replace_whole(
            folder, name, f".{name}.tmp", 0o600, lambda fd: unnamed.write_all(fd, b"new\n")
        )
        with open(os.open(name, os.O_RDONLY, dir_fd=folder), "rb") as read:
            assert read.read() == b"new\n"
    assert _names(folder) == ["f.txt", "new.txt"]


def test_a_fill_that_fails_leaves_the_old_file_and_no_temp(folder: int) -> None:
    def fill(fd: int) -> None:
        unnamed.write_all(fd, b"half")
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space left"):
        unnamed.replace_whole(folder, "f.txt", ".f.txt.tmp", 0o600, fill)
    with open(os.open("f.txt", os.O_RDONLY, dir_fd=folder), "rb") as read:
        assert read.read() == b"old\n"
    assert _names(folder) == ["f.txt"]
