"""The local executor's directory-handle walk (rho_adapters/local/confine.py) on its own: the
limits, where it ends up, what it creates, and what each refusal says. Written against the
survivors of `bash scripts/mutation.sh confine` (docs/testing.md)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from rho_adapters.local.confine import MAX_DEPTH, MAX_SYMLINKS, Resolved, Tree
from rho_domain.errors import PathOutsideWorkspace, ToolError
from rho_domain.paths import components


@pytest.fixture
def root(tmp_path: Path) -> Path:
    made = tmp_path / "proj"
    (made / "a" / "b").mkdir(parents=True)
    (made / "a" / "b" / "x.txt").write_text("x")
    (made / "file.txt").write_text("f")
    return made


def walk(root: Path, path: str, **options: object) -> Resolved:
    tree = Tree(str(root))
    parts = tree.relative_parts(path)
    assert parts is not None
    options.setdefault("follow_final", True)
    return tree.resolve(parts, path, **options)  # type: ignore[arg-type]


def where(resolved: Resolved) -> str:
    try:
        return os.readlink(f"/proc/self/fd/{resolved.dir_fd}")
    finally:
        os.close(resolved.dir_fd)


@pytest.mark.parametrize(
    ("path", "directory", "name", "parts"),
    [
        ("a/b/x.txt", "a/b", "x.txt", ("a", "b", "x.txt")),
        ("a/b", "a", "b", ("a", "b")),
        ("a/b/..", "a", "", ("a",)),  # ends on a directory: its own handle, no name
        ("a/b/../..", "", "", ()),
        ("a/in/..", "a", "", ("a",)),  # a/in -> b, then up: physically a
    ],
)
def test_where_a_walk_ends(
    root: Path, path: str, directory: str, name: str, parts: tuple[str, ...]
) -> None:
    (root / "a" / "in").symlink_to("b")
    resolved = walk(root, path)
    assert (resolved.name, resolved.parts) == (name, parts)
    assert where(resolved) == str(root / directory).rstrip("/")


def test_an_absolute_link_inside_the_root_restarts_from_the_root(root: Path) -> None:
    # From a subdirectory: the held handles are dropped and the walk restarts at the root.
    (root / "a" / "home").symlink_to(root / "a" / "b")
    resolved = walk(root, "a/home/x.txt")
    assert (resolved.name, resolved.parts) == ("x.txt", ("a", "b", "x.txt"))
    assert where(resolved) == str(root / "a" / "b")


def test_symlink_chains_up_to_the_limit(root: Path) -> None:
    # link0 -> link1 -> ... -> link{n-1} -> file.txt: n links followed.
    def chain(n: int, prefix: str) -> str:
        (root / f"{prefix}{n - 1}").symlink_to("file.txt")
        for i in range(n - 2, -1, -1):
            (root / f"{prefix}{i}").symlink_to(f"{prefix}{i + 1}")
        return f"{prefix}0"

    resolved = walk(root, chain(MAX_SYMLINKS, "ok"))
    assert resolved.parts == ("file.txt",)
    os.close(resolved.dir_fd)
    too_long = chain(MAX_SYMLINKS + 1, "long")
    with pytest.raises(ToolError) as raised:
        walk(root, too_long)
    assert str(raised.value) == f"{too_long!r}: too many levels of symbolic links"


def test_directory_depth_up_to_the_limit(root: Path) -> None:
    deep = "/".join(["d"] * (MAX_DEPTH - 1))
    (root / deep).mkdir(parents=True)
    resolved = walk(root, deep + "/f")  # MAX_DEPTH levels: the directories, then the name
    assert len(resolved.parts) == MAX_DEPTH
    os.close(resolved.dir_fd)
    (root / deep / "d").mkdir()
    with pytest.raises(ToolError) as raised:
        walk(root, deep + "/d/f")
    assert str(raised.value) == f"{deep + '/d/f'!r}: more than {MAX_DEPTH} directory levels"


def test_reading_never_creates_directories(root: Path) -> None:
    with pytest.raises(ToolError) as raised:
        walk(root, "new/sub/f.txt")
    assert str(raised.value) == "no such file or directory: new/sub/f.txt"
    assert not (root / "new").exists()


def test_created_directories_get_the_usual_mode_and_pass_the_guard(root: Path) -> None:
    seen: list[tuple[str, ...]] = []
    resolved = walk(root, "new/sub/f.txt", create_dirs=True, guard=seen.append)
    os.close(resolved.dir_fd)
    assert seen == [("new",), ("new", "sub")]
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE((root / "new" / "sub").stat().st_mode) == 0o777 & ~umask


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("../x", "'../x' leads outside {root}"),
        ("out/x", "'out/x' is a symbolic link leading outside {root}"),
        ("file.txt/x", "'file.txt/x': 'file.txt' is not a directory"),
    ],
)
def test_each_refusal_says_why(root: Path, path: str, message: str) -> None:
    (root / "out").symlink_to(root.parent)
    expected = PathOutsideWorkspace if "outside" in message else ToolError
    with pytest.raises(expected) as raised:
        walk(root, path, follow_final=False)
    assert str(raised.value) == message.format(root=root)
    assert components(str(root)) == Tree(str(root)).root_parts
