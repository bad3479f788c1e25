"""SecretScan: what the sandbox hides below the workspace, found by walking it with the policy."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from rho_adapters.local.secret_scan import SecretScan
from rho_domain.errors import ExecutorError
from rho_domain.secrets import SecretPolicy


def _touch(path: Path, text: str = "x") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_names_at_any_depth_files_and_directories(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    for rel in (".env", "a/b/c/.env.local", "deploy/SERVER.KEY", "x/id_ed25519", "plain.txt"):
        _touch(ws / rel)
    _touch(ws / "nested" / ".aws" / "credentials")
    _touch(ws / "deep" / "er" / ".ssh" / "config")
    masks = SecretScan(SecretPolicy()).masks((str(ws),))
    assert set(masks.files) == {
        str(ws / ".env"),
        str(ws / "a/b/c/.env.local"),
        str(ws / "deploy/SERVER.KEY"),
        str(ws / "x/id_ed25519"),
    }
    assert set(masks.dirs) == {str(ws / "nested/.aws"), str(ws / "deep/er/.ssh")}


def test_symlink_targets_and_linked_directories(tmp_path: Path) -> None:
    ws, srv = tmp_path / "ws", tmp_path / "srv"
    secret = _touch(srv / "app" / ".env")
    _touch(srv / "other" / "deploy.pem")
    ws.mkdir()
    os.symlink(secret, ws / "notes.txt")  # innocent name, secret target
    os.symlink(srv / "other", ws / "other")  # a directory in view through the link
    os.symlink(tmp_path / "missing", ws / "dangling")
    masks = SecretScan(SecretPolicy()).masks((str(ws),))
    assert set(masks.files) == {str(secret), str(srv / "other" / "deploy.pem")}


def test_hard_links_to_secrets_and_sockets(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    key = _touch(home / ".ssh" / "id_rsa")
    env = _touch(ws / ".env")
    os.link(env, ws / "innocent.txt")
    os.link(key, ws / "copy.txt")
    shared = _touch(ws / "shared.txt")
    os.link(shared, tmp_path / "elsewhere.txt")  # linked, but to nothing secret
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(ws / "daemon.sock"))
    try:
        masks = SecretScan(SecretPolicy()).masks((str(ws),), known=(str(home / ".ssh"),))
    finally:
        server.close()
    assert set(masks.files) == {
        str(env),
        str(ws / "innocent.txt"),
        str(ws / "copy.txt"),
        str(ws / "daemon.sock"),
    }


def test_a_secret_added_later_is_found_and_unchanged_trees_are_not_read_again(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws"
    _touch(ws / "src" / "app.py")
    scan = SecretScan(SecretPolicy(locations=(str(tmp_path / "unique"),)))
    assert scan.masks((str(ws),)).files == ()
    _touch(ws / "src" / ".env")  # changes src's mtime
    assert scan.masks((str(ws),)).files == (str(ws / "src" / ".env"),)
    (ws / "src" / ".env").rename(ws / "src" / "renamed.txt")
    assert scan.masks((str(ws),)).files == ()


def test_too_many_entries_fail_closed(tmp_path: Path) -> None:
    for i in range(20):
        _touch(tmp_path / f"f{i}")
    with pytest.raises(ExecutorError, match="too many to scan for secrets"):
        SecretScan(SecretPolicy(locations=("/nonexistent-x",)), max_entries=10).masks(
            (str(tmp_path),)
        )


def test_links_to_the_whole_machine_are_not_walked(tmp_path: Path) -> None:
    """``up -> ..`` or ``root -> /`` would take the walk out of the workspace for the whole
    machine (and past the entry bound): their targets are not walked, the rest still is."""
    ws = tmp_path / "ws"
    env = _touch(ws / "sub" / ".env")
    os.symlink("..", ws / "sub" / "up")
    os.symlink("/", ws / "root")
    os.symlink("/proc/self", ws / "me")
    os.symlink(tmp_path, ws / "parent")
    scan = SecretScan(SecretPolicy(locations=("/nonexistent-y",)), max_entries=1000)
    assert scan.masks((str(ws),)).files == (str(env),)


def test_git_directories_by_their_shape(tmp_path: Path) -> None:
    # a bare "store" and a --separate-git-dir "gd": no .git in their names, a HEAD beside
    # objects and refs (or a commondir: a linked worktree's); a look-alike without HEAD is none
    ws = tmp_path / "ws"
    for top in ("store", "nested/gd", "lookalike"):
        for rel in ("objects/5a/b0", "refs/heads/main", "config", "index", "COMMIT_EDITMSG"):
            _touch(ws / top / rel)
        if top != "lookalike":
            _touch(ws / top / "HEAD", "ref: refs/heads/main\n")
    _touch(ws / "nested/gd/rebase-merge/patch")
    _touch(ws / "nested/gd/modules/sub/HEAD")
    _touch(ws / "nested/gd/modules/sub/commondir")
    _touch(ws / "nested/gd/modules/sub/config")
    masks = SecretScan(SecretPolicy()).masks((str(ws),))
    scratch = {ws / "store/COMMIT_EDITMSG", ws / "nested/gd/COMMIT_EDITMSG"}
    assert set(masks.files) == {str(p) for p in (*scratch, ws / "nested/gd/rebase-merge/patch")}
    # git reads these itself: the sandbox shows them, the argv checks and walkers are told
    shown = {"store/config", "store/index", "nested/gd/config", "nested/gd/index"}
    shown |= {"nested/gd/modules/sub/config"}
    assert set(masks.shown_to_git) == {str(ws / rel) for rel in shown}
    assert str(ws / "store/objects/5a") in masks.dirs  # loose objects: by their own shape
    # a store by no name objects (GIT_OBJECT_DIRECTORY=od): an info beside a pack
    for rel in ("od/info/exclude", "od/pack/p.pack", "od/5a/b0", "od/notes"):
        _touch(ws / rel)
    store = SecretScan(SecretPolicy()).masks((str(ws / "od"),))
    assert set(store.shown_to_git) == {str(ws / "od/pack"), str(ws / "od/5a")}
    assert not any("lookalike/c" in p or "lookalike/i" in p for p in masks.paths())
    # a walk that starts inside one still knows where it is
    inner = SecretScan(SecretPolicy()).masks((str(ws / "nested/gd/rebase-merge"),))
    assert inner.files == (str(ws / "nested/gd/rebase-merge/patch"),)
