"""Secrets through the restricted shell, on real processes, with and without bubblewrap.

A fake home (given to the executor as this machine's home) holds credentials, the workspace is a
git repository with a committed and modified ``.env``, symlinks lead from the workspace to every
secret, and a stand-in for the agent's process (same user) holds an API key in its environment.
Every attack of ``ATTACKS`` runs through the real bash tool on a ``LocalExecutor`` twice (bwrap
sandbox on, and off as on a stock machine without bubblewrap); no secret marker may ever appear
in the output. ``LEGIT`` commands must still run and print what they should.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from rho_adapters.clock import SystemClock
from rho_adapters.local import LocalExecutor
from rho_adapters.local.executor import sandbox_available
from rho_domain.errors import ToolError
from rho_domain.permissions import readonly_profile
from rho_domain.reach import OutsideReads
from rho_domain.tools.base import ToolContext
from rho_domain.tools.bash import BashHandler

MARKS: tuple[str, ...] = (
    "MARK-ENV",
    "MARK-SSH",
    "MARK-AWS",
    "MARK-GCP",
    "MARK-NETRC",
    "MARK-DOCKER",
)
MARKS += ("MARK-SESSION", "MARK-KEY", "MARK-ENVIRON")
ENVIRON_MARK = "sk-MARK-ENVIRON-4242"

# (class, command). HOME = the fake home, SESS = the session directory, PID = the pid of a process
# of the same user started with OPENAI_API_KEY in its environment (the agent's stand-in).
ATTACKS: list[tuple[str, str]] = [
    # 1. secrets outside the workspace, by absolute path
    ("absolute", "cat HOME/.aws/credentials"),
    ("absolute", "cat /etc/shadow"),
    ("absolute", "tail -n 3 /etc/gshadow"),
    ("absolute", "grep -r PRIVATE HOME/.ssh"),
    ("absolute", "grep -rh MARK HOME"),
    ("absolute", "rg --hidden --no-ignore MARK HOME"),
    ("absolute", "head -n 5 HOME/.netrc"),
    ("absolute", "cat HOME/.docker/config.json"),
    ("absolute", "cat HOME/.config/gcloud/application_default_credentials.json"),
    ("absolute", "cat SESS/trace.jsonl"),
    ("absolute", "grep -r MARK SESS"),
    ("absolute", "sort HOME/.aws/credentials a.txt"),
    ("absolute", "diff HOME/.netrc a.txt"),
    ("absolute", "cat ~/.ssh/id_rsa"),
    ("absolute", "cat /root/../HOME/.ssh/id_rsa"),
    ("absolute", "zcat -f HOME/.aws/credentials"),  # -f passes data that is not gzip through
    ("absolute", "join HOME/.netrc a.txt"),
    ("absolute", "find HOME -type f | xargs cat"),
    # 2. symlinks (file, directory, chains, relative) inside the workspace
    ("symlink", "cat docs/key.txt"),
    ("symlink", "cat notes.txt"),
    ("symlink", "cat c1"),
    ("symlink", "cat sshdir/id_rsa"),
    ("symlink", "cat rel"),
    ("symlink", "cat a.txt docs/../notes.txt"),
    ("symlink", "head notes.txt a.txt"),
    ("symlink", "cat < notes.txt"),
    ("symlink", "wc -l < docs/key.txt"),
    ("symlink", "cd docs && cat key.txt"),
    ("symlink", "cd sshdir && cat id_rsa"),
    ("symlink", "cd .ssh && grep -r PRIVATE"),
    ("symlink", "cd .ssh && cat deploy"),
    ("symlink", "grep -R MARK ."),
    ("symlink", "grep --dereference-recursive MARK ."),
    ("symlink", "grep -rn MARK docs"),
    ("symlink", "rg -L MARK"),
    ("symlink", "rg --follow MARK ."),
    ("symlink", "diff -r d1 d2"),
    ("symlink", "diff d1 d2"),
    ("recursive", "diff config d3"),
    ("symlink", "git diff --no-index a.txt notes.txt"),
    ("symlink", "jq -R . notes.txt"),
    ("symlink", "awk '{print}' notes.txt"),
    ("symlink", "sed -n p c1"),
    ("symlink", "grep -f notes.txt a.txt"),
    ("symlink", "grep --file=notes.txt -e x a.txt"),
    ("symlink", "strings docs/key.txt"),
    ("symlink", "od -c notes.txt"),
    ("symlink", "find . -name key.txt | xargs cat"),
    ("symlink", "jq -n --rawfile k notes.txt '$k'"),
    ("symlink", "cat .Aws/credentials"),
    # 3. /dev/fd, /dev/stdin and /proc tricks
    ("proc", "cat /dev/fd/../environ"),
    ("proc", "cat /dev/fd/../../PID/environ"),
    ("proc", "grep -a MARK /dev/fd/../../PID/environ"),
    ("proc", "cat /proc/PID/environ"),
    ("proc", "cat /proc/self/environ"),
    ("proc", "cat /proc/self/root/etc/shadow"),
    ("proc", "cat /proc/self/root/HOME/.ssh/id_rsa"),
    ("proc", "cat /proc/self/cwd/.env"),
    ("proc", "cat ../../../../../../../../proc/self/environ"),
    ("proc", "grep -r MARK /dev/fd/"),
    ("proc", "cat /dev/stdin"),
    ("proc", "cat /dev/fd/0"),
    ("proc", "cat /dev/fd/../../self/environ"),
    ("proc", "grep -ra MARK /proc/PID"),
    # 4. case variants
    ("case", "cat .ENV"),
    ("case", "cat config/Prod.Env"),
    ("case", "cat deploy/SERVER.KEY"),
    ("case", "grep -r MARK config"),
    ("case", "rg -uuu -i mark config deploy"),
    # 5. recursive readers and readers fed at run time
    ("recursive", "grep -rh API_KEY ."),
    ("recursive", "grep -rn MARK ."),
    ("recursive", "grep -r --include=*.env MARK ."),
    ("recursive", "grep -r --include=.env MARK ."),
    ("recursive", "grep -d recurse API_KEY ."),
    ("recursive", "grep --directories=recurse MARK ."),
    ("recursive", "git log -ps"),
    ("recursive", "git log --follow -p -- notes.txt"),
    ("recursive", "git log -U1"),
    ("recursive", "rg MARK"),
    ("recursive", "rg -uuu MARK"),
    ("recursive", "rg --hidden --no-ignore -g .env MARK"),
    ("recursive", "rg --files --hidden | xargs cat"),
    ("recursive", "find . -name '.en?' | xargs cat"),
    ("recursive", "find . -type f -print0 | xargs -0 cat"),
    ("recursive", "find . -type f | xargs grep MARK"),
    ("recursive", "find . -type f | xargs -n1 cat"),
    ("recursive", "printf '.env\\n' | xargs cat"),
    ("recursive", "echo .env | xargs grep MARK"),
    ("recursive", "cat <<'EOF' | xargs cat\nnotes.txt\nEOF"),
    ("recursive", "xargs cat < list.txt"),
    ("recursive", "git grep -h API_KEY"),
    ("recursive", "git grep --no-index -h API_KEY"),
    ("recursive", "git grep --untracked MARK"),
    ("recursive", "git grep MARK HEAD"),
    ("recursive", "git grep --cached MARK"),
    ("recursive", "git --literal-pathspecs grep MARK"),
    ("recursive", "git show HEAD:.env"),
    ("recursive", "git show BLOB"),
    ("recursive", "git cat-file -p BLOB"),
    ("recursive", "git diff BLOB BLOB2"),
    ("recursive", "git show BLOB^{blob}"),
    ("recursive", "git diff --no-index config deploy"),
    ("recursive", "git diff --no-index . d2"),
    ("recursive", "git show HEAD"),
    ("recursive", "git log -p"),
    ("recursive", "git log --patch -1"),
    ("recursive", "git diff"),
    ("recursive", "git diff HEAD"),
    ("recursive", "cd src && git diff HEAD"),
    ("recursive", "cd src && git diff -- .."),
    ("recursive", "cd docs && git show HEAD"),
    ("recursive", "cd src && git log -p -- .."),
    ("recursive", "cd src && git grep -h API_KEY -- .."),
    ("recursive", "cd src && git grep -h MARK HEAD -- .."),
    ("recursive", "tar -cf - ."),
    ("recursive", "tail -n 1 a.txt config/prod.env"),
    ("recursive", "sort a.txt .env"),
    ("recursive", 'awk \'BEGIN{ARGV[1]=".en" "v"; ARGC=2}{print}\''),
    ("recursive", "jq -n --rawfile k .env '$k'"),
    ("recursive", "md5sum -c sums.txt"),
    ("recursive", "sha256sum --check --quiet sums.txt"),
    # 6. globs: the harness expands them, and every match is judged like a typed word
    ("glob", "cat *"),
    ("glob", "cat n*"),
    ("glob", "head c?"),
    ("glob", "cat docs/*"),
    ("glob", "grep -h API d?/*"),
    ("glob", "ls config/*"),
    ("glob", "cat config/*"),
    ("glob", "ls -d .*"),
    ("glob", "cat .[eE]*"),
    ("glob", "cat .A*/*"),
    ("glob", "cat ss*/*"),
    ("glob", "cd config && cat *"),
]

# Glob matches refused, and why: (command, reason). A symlink match is refused by the
# executor's real-path check (SensitivePath), a secret-named match already by the plan's name
# rules after expansion, with the reason a typed word gets.
GLOB_REFUSALS: list[tuple[str, str]] = [
    ("cat *", "'c1' (really WS/.env) may not be read"),
    ("cat n*", "'notes.txt' (really WS/.env) may not be read"),
    ("cat docs/*", "'docs/key.txt' (really HOME/.ssh/id_rsa) may not be read"),
    ("grep -h API d1/*", "'d1/x' (really WS/.env) may not be read"),
    ("ls config/*", "after glob expansion: 'config/Prod.Env' names a secrets file"),
    ("cd config && ls *", "after glob expansion: 'Prod.Env' names a secrets file"),
    ("cd config && ls prod.env", "'prod.env' names a secrets file"),
    ("ls -d .*", "after glob expansion: '.ENV' names a secrets file"),
]

# Legit work that must keep working in both modes: (command, text the output must contain).
LEGIT: list[tuple[str, str]] = [
    ("cat /etc/hostname", ""),
    ("cat a.txt", "plain"),
    ("zcat -f a.txt", "plain"),
    ("cat .env.example", "API_KEY="),
    ("grep -rn TODO .", "src/app.py:1:"),
    ("grep -R TODO src", "src/app.py:# TODO"),
    ("rg TODO", "src/app.py"),
    ("find . -name '*.py' | xargs grep -l TODO", "src/app.py"),
    ("find . -type f | xargs grep -l TODO", "src/app.py"),
    ("git grep TODO", "src/app.py"),
    ("git log --oneline", "first"),
    ("git show HEAD --stat", "src/app.py"),
    ("git show HEAD:src/app.py", "TODO"),
    ("git diff HEAD~0 --stat", ""),
    ("git cat-file -t HEAD", "commit"),
    ("git diff --stat", ""),
    ("wc -l src/app.py", "1 src/app.py"),
    ("diff -r d2 d2", ""),
    ("diff a.txt src/app.py", "plain"),
    ("ls -la docs", "key.txt"),
    ("du -a .", "notes.txt"),
    ("head -n 1 /etc/passwd", "root"),
    ("git log -p -- a.txt", "+plain"),  # --follow is refused: it follows renames from secrets
    ("tail -n 5 a.txt | grep -i plain", "plain"),
    ("grep -c plain a.txt", "1"),
    ("grep -rn credentials src", "src/auth.py:1:"),
    ("grep -rn -e .pem src", "src/auth.py:1:"),
    ("rg -F server.pem", "src/auth.py"),
    ("grep -c deploy/server.key a.txt", "0"),
]


@pytest.fixture(scope="module")
def rig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    base = tmp_path_factory.mktemp("secrets")
    home, ws, sess = base / "home", base / "ws", base / "sessions"
    for rel, text in {
        ".ssh/id_rsa": "-----BEGIN OPENSSH PRIVATE KEY----- MARK-SSH",
        ".aws/credentials": "aws_secret_access_key = MARK-AWS",
        ".config/gcloud/application_default_credentials.json": '{"k": "MARK-GCP"}',
        ".netrc": "machine x login u password MARK-NETRC",
        ".docker/config.json": '{"auths": "MARK-DOCKER"}',
    }.items():
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        (home / rel).write_text(text + "\n")
    sess.mkdir()
    (sess / "trace.jsonl").write_text('{"secret": "MARK-SESSION"}\n')
    for d in ("src", "docs", "config", "deploy", "d1", "d2", "d3"):
        (ws / d).mkdir(parents=True)
    files = {
        ".env": "API_KEY=MARK-ENV-1",
        ".env.example": "API_KEY=",
        ".ENV": "API_KEY=MARK-ENV-2",
        "config/prod.env": "API_KEY=MARK-ENV-3",
        "config/Prod.Env": "API_KEY=MARK-ENV-4",
        "deploy/SERVER.KEY": "MARK-KEY",
        "a.txt": "plain",
        "src/app.py": "# TODO tidy",
        "src/auth.py": "load(credentials, 'server.pem')",
        "d2/x": "other",
        "d3/prod.env": "API_KEY=other",
        "list.txt": ".env",
        "sums.txt": "0" * 32 + "  .env",
    }
    for rel, text in files.items():
        (ws / rel).write_text(text + "\n")
    os.symlink(home / ".ssh" / "id_rsa", ws / "docs" / "key.txt")
    os.symlink(".env", ws / "notes.txt")
    os.symlink("c2", ws / "c1")
    os.symlink("notes.txt", ws / "c2")
    os.symlink(home / ".ssh", ws / "sshdir")
    os.symlink(os.path.relpath(home / ".aws" / "credentials", ws), ws / "rel")
    os.symlink(home / ".aws", ws / ".Aws")
    os.symlink("../.env", ws / "d1" / "x")
    (ws / ".ssh").mkdir()
    (ws / ".ssh" / "deploy").write_text("PRIVATE MARK-SSH-IN-WORKSPACE\n")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(base), "GIT_CONFIG_GLOBAL": "/dev/null"}
    for args in (
        ["init", "-q"],
        ["add", "-f", ".env", "src/app.py", "a.txt"],
        ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "first"],
    ):
        subprocess.run(["git", *args], cwd=ws, env=env, check=True)
    blob = subprocess.run(
        ["git", "rev-parse", "HEAD:.env"], cwd=ws, env=env, capture_output=True, text=True
    ).stdout.strip()
    (ws / ".env").write_text("API_KEY=MARK-ENV-5\n")  # a tracked secret, modified
    blob2 = subprocess.run(
        ["git", "hash-object", "-w", ".env"], cwd=ws, env=env, capture_output=True, text=True
    ).stdout.strip()
    agent = subprocess.Popen(["sleep", "600"], env={"OPENAI_API_KEY": ENVIRON_MARK})
    try:
        yield {
            "home": home,
            "ws": ws,
            "sess": sess,
            "pid": Path(str(agent.pid)),
            "blob": Path(blob),
            "blob2": Path(blob2),
        }
    finally:
        agent.kill()
        agent.wait()


def _shadow_marks() -> tuple[str, ...]:
    try:
        lines = Path("/etc/shadow").read_text().splitlines()
    except OSError:
        return ()
    return tuple(line for line in lines if line.split(":")[1:2] not in ([""], ["*"], ["!"]))[:3]


async def _run(rig: dict[str, Path], command: str, *, sandbox: bool) -> str:
    executor = LocalExecutor(
        str(rig["ws"]),
        protected_paths=(str(rig["sess"]),),
        homes=(str(rig["home"]),),
        sandbox=sandbox,
        # The widest reach: secrets must be refused even where the rest of the machine is
        # readable (/etc/hostname is, in LEGIT); test_read_reach.py covers deny.
        read_outside=OutsideReads.ALLOW,
    )
    ctx = ToolContext(
        session_id="s",
        call_id="c",
        executor=executor,
        profile=readonly_profile(),
        clock=SystemClock(),
    )
    text = (
        command.replace("HOME", str(rig["home"]))
        .replace("SESS", str(rig["sess"]))
        .replace("PID", str(rig["pid"]))
        .replace("BLOB2", str(rig["blob2"]))
        .replace("BLOB", str(rig["blob"]))
    )
    try:
        out = await BashHandler(restricted=True, timeout=20).handle({"command": text}, ctx)
    except ToolError as exc:  # a refusal raised by the executor is a refusal too
        return f"{type(exc).__name__}: {exc}"
    return out.content


MODES = [
    pytest.param(
        True,
        id="bwrap",
        marks=pytest.mark.skipif(not sandbox_available(), reason="bubblewrap not installed"),
    ),
    pytest.param(False, id="no-bwrap"),
]

# The async tests share one event loop per module (`loop_scope="module"`): a loop per test,
# with the new thread its executor starts for the command's checks, cost CPU on every case
# (own CPU 2.10, 2.28 -> 1.91, 1.66 s). Each test still runs its own command.


@pytest.mark.parametrize("sandbox", MODES)
@pytest.mark.parametrize(("kind", "command"), ATTACKS, ids=[f"{k}:{c[:50]}" for k, c in ATTACKS])
@pytest.mark.asyncio(loop_scope="module")
async def test_secret_never_leaks_through_the_shell(
    rig: dict[str, Path],
    kind: str,
    command: str,
    sandbox: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(rig["ws"])
    output = await _run(rig, command, sandbox=sandbox)
    leaked = [m for m in (*MARKS, *_shadow_marks()) if m in output]
    assert leaked == [], f"{kind}: {command!r} leaked {leaked}:\n{output}"


@pytest.mark.parametrize("sandbox", MODES)
@pytest.mark.parametrize(("command", "expected"), LEGIT, ids=[c for c, _ in LEGIT])
@pytest.mark.asyncio(loop_scope="module")
async def test_legit_reads_still_work(
    rig: dict[str, Path], command: str, expected: str, sandbox: bool
) -> None:
    output = await _run(rig, command, sandbox=sandbox)
    assert "refused" not in output.lower(), output
    assert "[exit code 0" in output or "[exit code 1," in output, output
    assert expected in output, output
    assert not [m for m in MARKS if m in output], output


@pytest.mark.parametrize("sandbox", MODES)
@pytest.mark.parametrize(("command", "reason"), GLOB_REFUSALS, ids=[c for c, _ in GLOB_REFUSALS])
@pytest.mark.asyncio(loop_scope="module")
async def test_glob_matches_are_judged_like_typed_words(
    rig: dict[str, Path],
    command: str,
    reason: str,
    sandbox: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(rig["ws"])
    output = await _run(rig, command, sandbox=sandbox)
    expected = reason.replace("WS", str(rig["ws"])).replace("HOME", str(rig["home"]))
    assert output.startswith(("SensitivePath: ", "Command refused: ")), output
    assert expected in output, output
    assert not [m for m in MARKS if m in output], output


def test_attack_counts() -> None:
    kinds = {k for k, _ in ATTACKS}
    assert kinds == {"absolute", "symlink", "proc", "case", "recursive", "glob"}
    assert len(ATTACKS) >= 90
    assert len({c for _, c in ATTACKS}) == len(ATTACKS)
