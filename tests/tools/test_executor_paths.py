"""Path attacks against LocalExecutor, with real files, symlinks, hard links, FIFOs and races.

Every attack must fail with a PermissionDenied/ToolError and leave the outside untouched.
"""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path

import pytest

from rho_adapters.local import LocalExecutor
from rho_domain.errors import PathOutsideWorkspace, PermissionDenied, SensitivePath, ToolError
from rho_domain.permissions import FileWriteMode


@pytest.fixture
def box(tmp_path: Path) -> dict[str, Path]:
    ws = tmp_path / "ws"
    outside = tmp_path / "outside"
    evil = tmp_path / "ws-evil"
    home = tmp_path / "home"
    for d in (ws / "src", ws / ".git" / "hooks", ws / ".vscode", outside, evil, ws / "session"):
        d.mkdir(parents=True)
    (outside / "secret.txt").write_text("TOP SECRET\n")
    (evil / "x.txt").write_text("evil\n")
    (ws / "src" / "a.txt").write_text("inside\n")
    (ws / ".env").write_text("API_KEY=1\n")
    (ws / ".env.local").write_text("API_KEY=2\n")
    (ws / ".env.example").write_text("API_KEY=\n")
    (ws / ".git" / "config").write_text("[core]\n")
    os.symlink(outside / "secret.txt", ws / "link_file")
    os.symlink(outside, ws / "link_dir")
    os.symlink("../outside/secret.txt", ws / "rel_link")
    os.symlink(outside / "nothing", ws / "dangling")
    os.symlink("chain2", ws / "chain1")
    os.symlink("link_file", ws / "chain2")
    os.symlink("loop2", ws / "loop1")
    os.symlink("loop1", ws / "loop2")
    os.symlink("src/a.txt", ws / "good_link")
    os.symlink(".git", ws / "gitlink")
    os.symlink("/proc/self/root" + str(outside), ws / "proc_link")
    os.link(outside / "secret.txt", ws / "hardlink.txt")
    os.mkfifo(ws / "fifo")
    home.mkdir()
    return {"ws": ws, "outside": outside, "evil": evil, "home": home}


def _executor(box: dict[str, Path], mode: FileWriteMode = FileWriteMode.FULL) -> LocalExecutor:
    return LocalExecutor(
        str(box["ws"]), file_write=mode, protected_paths=(str(box["ws"] / "session"),)
    )


# Every attack names a target that EXISTS (so "no such file" can never make it pass) and expects
# one specific refusal: (path, error type, message pattern). "{up}" climbs from ws/src to "/";
# "{home}" is a fake home directory given to the executor as an extra read root.
OUTSIDE = (PathOutsideWorkspace, "outside|leads outside|leading outside")
SECRET = (SensitivePath, "secret")
READ_ATTACKS: list[tuple[str, type[ToolError], str]] = [
    ("../outside/secret.txt", *OUTSIDE),
    ("src/../../outside/secret.txt", *OUTSIDE),
    ("./../outside/secret.txt", *OUTSIDE),
    ("src/{up}etc/passwd", *OUTSIDE),
    ("/etc/passwd", *OUTSIDE),
    ("/etc/shadow", *OUTSIDE),
    ("link_file", *OUTSIDE),
    ("link_dir/secret.txt", *OUTSIDE),
    ("rel_link", *OUTSIDE),
    ("chain1", *OUTSIDE),
    ("loop1", ToolError, "too many levels of symbolic links"),
    ("proc_link/secret.txt", *OUTSIDE),
    ("/proc/self/root/etc/passwd", *OUTSIDE),
    ("/proc/self/cwd/../outside/secret.txt", *OUTSIDE),
    ("/proc/self/environ", *OUTSIDE),
    ("~/.bashrc", PathOutsideWorkspace, "'~' is not expanded"),
    ("~root/.ssh/id_rsa", PathOutsideWorkspace, "'~' is not expanded"),
    (".env", *SECRET),
    (".env.local", *SECRET),
    ("src/../.env", *SECRET),
    (".ENV", *SECRET),
    ("config/.Env.Production", *SECRET),
    ("notes.txt", *SECRET),
    ("chain_env", *SECRET),
    ("deploy/server.pem", *SECRET),
    ("keys/id_ed25519", *SECRET),
    ("{home}/.ssh/id_rsa", *SECRET),
    ("{home}/.aws/credentials", *SECRET),
    ("{home}/.config/gcloud/credentials.db", *SECRET),
    ("{home}/.netrc", *SECRET),
    ("{home}/.docker/config.json", *SECRET),
    ("{home}/sshlink/id_rsa", *SECRET),
    ("docs/key.txt", *OUTSIDE),
    ("session/trace.jsonl", *SECRET),
    ("fifo", ToolError, "FIFO"),
    ("/dev/zero", *OUTSIDE),
    ("/dev/stdin", *OUTSIDE),
    ("src", ToolError, "directory"),
    ("src/a.txt/", ToolError, "names a directory"),
    ("", ToolError, "empty path"),
    ("src/a.txt\x00.png", PermissionDenied, "control characters"),
    ("src\\..\\..\\outside", PermissionDenied, "backslashes"),
    ("C:/Windows/win.ini", PermissionDenied, "drive letters"),
    ("file:///etc/passwd", PermissionDenied, "URLs"),
    ("a/" * 2100, ToolError, "too long"),
    ("x" * 300, ToolError, "too long"),
]

WRITE_ATTACKS = [
    "../outside/new.txt",
    "/tmp/rho-escape.txt",
    "link_dir/new.txt",
    "link_file",
    "dangling",
    "rel_link",
    "chain1",
    "good_link",
    "hardlink.txt",
    ".git/config",
    ".git/hooks/pre-commit",
    ".GIT/hooks/post-checkout",
    "gitlink/hooks/pre-commit",
    "sub/.git/config",
    ".vscode/settings.json",
    ".vscode/tasks.json",
    ".claude/settings.json",
    ".codex/config.toml",
    ".cursor/mcp.json",
    ".gemini/settings.json",
    ".idea/workspace.xml",
    ".mcp.json",
    ".env",
    ".env.production",
    "config/prod.env",
    ".envrc",
    ".bashrc",
    ".ssh/authorized_keys",
    "session/trace.jsonl",
    "src/../session/meta.json",
    "fifo",
    "src",
]


def _attack_box(box: dict[str, Path]) -> Path:
    """Make every lexically refused target exist too, so only the refusal can stop a read."""
    ws, home = box["ws"], box["home"]
    for name in ("~", "~root/.ssh", "C:/Windows", "file:/etc", "config", "deploy", "keys"):
        (ws / name).mkdir(parents=True, exist_ok=True)
    files = {
        "~/.bashrc": "ws bashrc",
        "~root/.ssh/id_rsa": "ws key",
        "src\\..\\..\\outside": "backslash",
        "C:/Windows/win.ini": "ini",
        "file:/etc/passwd": "url",
        ".ENV": "API_KEY=3",
        "config/.Env.Production": "API_KEY=4",
        "deploy/server.pem": "-----BEGIN PRIVATE KEY-----",
        "keys/id_ed25519": "-----BEGIN OPENSSH PRIVATE KEY-----",
        "session/trace.jsonl": "{}",
    }
    for name, text in files.items():
        (ws / name).write_text(text + "\n")
    # "src/a.txt\x00.png" would read src/a.txt if the NUL were cut: it exists (fixture).
    for rel, text in {
        ".ssh/id_rsa": "KEY",
        ".aws/credentials": "AWS",
        ".config/gcloud/credentials.db": "GCP",
        ".netrc": "machine x password y",
        ".docker/config.json": "{}",
    }.items():
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        (home / rel).write_text(text + "\n")
    os.symlink(home / ".ssh", home / "sshlink")
    (ws / "docs").mkdir()
    os.symlink(home / ".ssh" / "id_rsa", ws / "docs" / "key.txt")
    os.symlink(".env", ws / "notes.txt")
    os.symlink("notes.txt", ws / "chain_env")
    return ws


@pytest.mark.parametrize(
    ("path", "error", "match"), READ_ATTACKS, ids=[a[0][:40] for a in READ_ATTACKS]
)
async def test_executor_read_attack_is_refused(
    box: dict[str, Path],
    path: str,
    error: type[ToolError],
    match: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ws = _attack_box(box)
    monkeypatch.chdir(ws)  # /proc/self/cwd is the workspace
    up = "../" * (len(ws.parts) + 1)
    path = path.replace("{up}", up).replace("{home}", str(box["home"]))
    ex = LocalExecutor(
        str(ws),
        file_write=FileWriteMode.FULL,
        protected_paths=(str(ws / "session"),),
        extra_read_roots=(str(box["home"]),),
        homes=(str(box["home"]),),
    )
    with pytest.raises(error, match=match):
        await ex.read(path)


@pytest.mark.parametrize("path", WRITE_ATTACKS)
async def test_executor_write_attack_is_refused(box: dict[str, Path], path: str) -> None:
    before = sorted(p.name for p in box["outside"].iterdir())
    with pytest.raises(ToolError):
        await _executor(box).write(path, b"pwned", overwrite=True)
    assert sorted(p.name for p in box["outside"].iterdir()) == before
    assert (box["outside"] / "secret.txt").read_text() == "TOP SECRET\n"
    assert not Path("/tmp/rho-escape.txt").exists()


def test_executor_attack_lists_hold_no_duplicates() -> None:
    """A duplicated case is a case someone meant to write and did not."""
    for attacks in (READ_ATTACKS, WRITE_ATTACKS):
        assert len(set(map(repr, attacks))) == len(attacks)


async def test_executor_string_prefix_is_not_containment(box: dict[str, Path]) -> None:
    with pytest.raises(PathOutsideWorkspace):
        await _executor(box).read(str(box["evil"] / "x.txt"))


async def test_executor_create_only_refuses_dangling_symlink_and_existing(
    box: dict[str, Path],
) -> None:
    ex = _executor(box, FileWriteMode.CREATE_ONLY)
    with pytest.raises(PermissionDenied):
        await ex.write("dangling", b"x", overwrite=False)
    with pytest.raises(PermissionDenied):
        await ex.write("src/a.txt", b"x", overwrite=False)
    with pytest.raises(PermissionDenied):
        await ex.write("src/a.txt", b"x", overwrite=True)
    assert not (box["outside"] / "nothing").exists()
    assert await ex.write("src/new.txt", b"x", overwrite=False) is False


async def test_executor_readonly_profile_never_writes(box: dict[str, Path]) -> None:
    ex = _executor(box, FileWriteMode.OFF)
    with pytest.raises(PermissionDenied):
        await ex.write("src/new.txt", b"x", overwrite=False)
    assert not (box["ws"] / "src" / "new.txt").exists()


async def test_executor_allows_in_tree_symlinks_and_templates(box: dict[str, Path]) -> None:
    ex = _executor(box)
    assert await ex.read("good_link") == b"inside\n"
    assert await ex.read(".env.example") == b"API_KEY=\n"
    assert await ex.read(str(box["ws"] / "src" / "a.txt")) == b"inside\n"
    assert await ex.write(".env.example", b"API_KEY=x\n", overwrite=True) is True


async def test_executor_overwrite_is_atomic_and_keeps_mode(box: dict[str, Path]) -> None:
    target = box["ws"] / "src" / "run.sh"
    target.write_text("old\n")
    target.chmod(0o751)
    inode = target.stat().st_ino
    assert await _executor(box).write("src/run.sh", b"new\n", overwrite=True) is True
    assert target.read_text() == "new\n"
    assert target.stat().st_mode & 0o777 == 0o751
    assert target.stat().st_ino != inode  # replaced by rename, not written in place
    assert [p.name for p in target.parent.iterdir() if "rho-tmp" in p.name] == []


async def test_executor_write_creates_parents_inside(box: dict[str, Path]) -> None:
    await _executor(box).write("deep/er/file.txt", b"x", overwrite=False)
    assert (box["ws"] / "deep" / "er" / "file.txt").read_bytes() == b"x"


async def test_executor_mkdir_through_symlink_to_git_is_refused(box: dict[str, Path]) -> None:
    with pytest.raises(SensitivePath):
        await _executor(box).write("gitlink/newdir/x", b"x", overwrite=False)
    assert not (box["ws"] / ".git" / "newdir").exists()


async def test_executor_extra_read_roots_are_read_only(box: dict[str, Path]) -> None:
    ex = LocalExecutor(
        str(box["ws"]), file_write=FileWriteMode.FULL, extra_read_roots=(str(box["outside"]),)
    )
    assert await ex.read(str(box["outside"] / "secret.txt")) == b"TOP SECRET\n"
    with pytest.raises(PathOutsideWorkspace):
        await ex.write(str(box["outside"] / "new.txt"), b"x", overwrite=False)


async def test_executor_race_swapping_dir_for_symlink_never_escapes(box: dict[str, Path]) -> None:
    ws, outside = box["ws"], box["outside"]
    target = ws / "race"
    stop = threading.Event()

    def swap() -> None:
        while not stop.is_set():
            try:
                if target.is_symlink():
                    target.unlink()
                    target.mkdir()
                else:
                    for child in target.iterdir():
                        child.unlink()
                    target.rmdir()
                    target.symlink_to(outside)
            except OSError:
                pass

    target.mkdir()
    thread = threading.Thread(target=swap)
    thread.start()
    ex = _executor(box)
    try:
        for i in range(200):
            with contextlib.suppress(ToolError):
                await ex.write(f"race/out{i}.txt", b"x", overwrite=True)
    finally:
        stop.set()
        thread.join()
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]


async def test_executor_read_limits_and_sparse_files(box: dict[str, Path]) -> None:
    big = box["ws"] / "sparse.bin"
    with big.open("wb") as f:
        f.truncate(5 << 30)
    data = await _executor(box).read("sparse.bin", offset=10, length=100)
    assert data == b"\x00" * 100


async def test_executor_whole_machine_read_root_still_refuses_secrets(
    box: dict[str, Path],
) -> None:
    """An operator may let the agent read outside the workspace (/var/log, even /); never a
    secret, whichever route reaches it."""
    home = box["home"]
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_rsa").write_text("KEY\n")
    ex = LocalExecutor(str(box["ws"]), extra_read_roots=("/",), homes=(str(home),))
    assert (await ex.read("/etc/hostname")).strip()
    assert (await ex.read(str(box["outside"] / "secret.txt"))) == b"TOP SECRET\n"
    for path in (
        "/etc/shadow",
        "/proc/self/environ",
        "/dev/fd/../status",
        "/proc/self/root/etc/shadow",
        f"{home}/.ssh/id_rsa",
        f"/proc/self/root{home}/.ssh/id_rsa",
    ):
        with pytest.raises(SensitivePath, match="secret"):
            await ex.read(path)
    with pytest.raises(SensitivePath, match="secret"):
        await ex.list_dir(f"{home}/.ssh")
    names = {e.name for e in await ex.list_dir("/var/log")}
    assert names  # operators inspect /var/log


async def test_a_working_directory_removed_midway_is_named_by_every_call(tmp_path: Path) -> None:
    """Before: once the workspace was removed (a tool's ``rm -rf "$PWD"``), every call said
    "no such file or directory: ." (or of the path it named), nothing of the cause."""
    from rho_domain.errors import ExecutorError
    from rho_domain.ports.commands import Command, Stage

    ws = tmp_path / "ws"
    ws.mkdir()
    ex = LocalExecutor(str(ws), file_write=FileWriteMode.FULL)
    ws.rmdir()
    calls = {
        "stat": ex.stat("a.txt"),
        "read": ex.read("a.txt"),
        "list": ex.list_dir("."),
        "write": ex.write("b.txt", b"x", overwrite=False),
        "glob": ex.glob("*.txt"),
        "run": ex.run(Command(pipeline=(Stage(argv=("true",)),))),
    }
    for name, call in calls.items():
        with pytest.raises(ExecutorError) as refused:
            await call
        assert str(refused.value).startswith(
            f"the working directory {ws} no longer exists (removed or replaced while the "
            "session ran)"
        ), name


async def test_an_extra_read_root_removed_midway_is_named_and_commands_still_run(
    tmp_path: Path,
) -> None:
    """probecorners24b: once an extra read root was removed (a log directory rotated away),
    the file tools called it "the working directory ... no longer exists ... no tool can
    reach it", and every restricted command, ``ls`` in the workspace too, failed with
    "bwrap: Can't find source path" (its bind). The root is named as a read root, and a
    command runs without it."""
    from rho_domain.errors import ExecutorError
    from rho_domain.ports.commands import Command, Stage

    ws, logs = tmp_path / "ws", tmp_path / "logs"
    ws.mkdir()
    logs.mkdir()
    (ws / "a.txt").write_text("a")
    ex = LocalExecutor(str(ws), extra_read_roots=[str(logs)])
    logs.rmdir()
    with pytest.raises(ExecutorError) as refused:
        await ex.read(f"{logs}/x.log")
    assert str(refused.value).startswith(f"the extra read root {logs} no longer exists")
    listed = await ex.run(Command(pipeline=(Stage(argv=("ls",)),)))
    assert (listed.exit_code, listed.output) == (0, "a.txt\n")


async def test_a_parent_replaced_by_a_link_midway_is_not_followed(tmp_path: Path) -> None:
    """redshell25: the root was opened by its path with ``O_NOFOLLOW`` on its last name
    only, so once a parent was replaced by a link (``mv p p.old; ln -s other p``), ``read``,
    ``list``, ``glob`` and ``stat`` worked in ``other/ws`` as if it were the workspace (and
    in ``other2/logs`` as the read root): ``read a.txt`` printed ``other/ws/a.txt``."""
    from rho_domain.errors import ExecutorError

    roots = {"ws": tmp_path / "p/ws", "logs": tmp_path / "q/logs"}
    for name, root in roots.items():
        root.mkdir(parents=True)
        (root / "a.txt").write_text("mine")
        (tmp_path / f"other-{name}" / name).mkdir(parents=True)
        (tmp_path / f"other-{name}" / name / "a.txt").write_text("K-PARENT25 not given")
    ex = LocalExecutor(str(roots["ws"]), extra_read_roots=[str(roots["logs"])])
    assert await ex.read(f"{roots['logs']}/a.txt") == b"mine"
    for name, parent in (("ws", "p"), ("logs", "q")):
        (tmp_path / parent).rename(tmp_path / f"{parent}.old")
        (tmp_path / parent).symlink_to(tmp_path / f"other-{name}")
    ws, logs = roots["ws"], roots["logs"]
    calls = {
        "read": ex.read("a.txt"),
        "read absolute": ex.read(f"{ws}/a.txt"),
        "stat": ex.stat("a.txt"),
        "list": ex.list_dir("."),
        "glob": ex.glob("*.txt"),
        "read root": ex.read(f"{logs}/a.txt"),
        "read root list": ex.list_dir(str(logs)),
    }
    for name, call in calls.items():
        with pytest.raises(ExecutorError) as refused:
            await call
        root, parent = (logs, "q") if "root" in name else (ws, "p")
        what = "extra read root" if "root" in name else "working directory"
        assert str(refused.value).startswith(
            f"the {what} {root} is no longer where it was: {parent!r} on its path is now a "
            "symbolic link"
        ), (name, refused.value)
