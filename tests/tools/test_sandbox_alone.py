"""The bubblewrap sandbox on its own: every attack runs with the argv checks OFF.

``LocalExecutor.run_unchecked`` runs a raw ``bash -c`` line inside exactly the sandbox,
environment and limits a restricted stage gets, with no validation, hardening or real-path
judgement. Whatever the line does, the sandbox alone must keep every secret out of the output,
every write off the disk and the network closed.

The agent is a real process (``AGENT``), started with ``OPENAI_API_KEY`` in its environment and
``HOME`` pointing at a fake home full of credentials; it builds the executor as the CLI does
(homes from the machine and ``$HOME``, the session directory protected) and answers one request
per line. The rig lives under /var/tmp, which the sandbox shows (unlike /tmp, private there), so
the home and the outside secrets are really on view and must be hidden by the sandbox itself.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from rho_adapters.local.executor import sandbox_available

pytestmark = pytest.mark.skipif(not sandbox_available(), reason="bubblewrap not installed")

# One rig at a time on the machine (the ``agent`` fixture holds this lock): with the argv checks
# off, "find /" and "grep -r /var/tmp" would read another test worker's rig, whose secrets this
# sandbox does not mask (a secret outside the workspace, read roots and homes is wall 4's,
# docs/security.md), and the abstract socket's name is one per machine.
RIG_LOCK = Path("/var/tmp/rho-sandbox-alone.lock")

API_KEY = "sk-test-secret-0451"
# Every secret holds one of these; none may ever appear in an output.
MARKS: tuple[str, ...] = (
    "MARK-ENV",
    "MARK-NEST",
    "MARK-KEY",
    "MARK-AWS",
    "MARK-SSH",
    "MARK-HOME",
    "MARK-SRV",
)
MARKS += ("MARK-SESSION", "MARK-CASE", "MARK-WSSH", "MARK-COPY", API_KEY)

AGENT = r"""
import asyncio, json, os, sys
from rho_adapters.local import LocalExecutor

async def main():
    ws, sess = sys.argv[1], sys.argv[2]
    executor = LocalExecutor(ws, protected_paths=(sess,), base_env=os.environ, sandbox=True)
    print(json.dumps({"pid": os.getpid()}), flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        result = await executor.run_unchecked(["/bin/bash", "-c", request["script"]], timeout=60)
        print(json.dumps({"code": result.exit_code, "output": result.output}), flush=True)

asyncio.run(main())
"""


class Agent:
    """The agent process: ``run(script)`` sends one line and returns (exit code, output)."""

    def __init__(self, proc: subprocess.Popen[str], paths: dict[str, str]) -> None:
        self.proc = proc
        self.paths = paths
        assert proc.stdout is not None
        self.pid = json.loads(proc.stdout.readline())["pid"]

    def run(self, script: str) -> tuple[int | None, str]:
        text = script.replace("AGENT", str(self.pid))
        for name, path in sorted(self.paths.items(), key=lambda item: -len(item[0])):
            text = text.replace(name, path)
        assert self.proc.stdin is not None
        assert self.proc.stdout is not None
        self.proc.stdin.write(json.dumps({"script": text}) + "\n")
        self.proc.stdin.flush()
        answer = json.loads(self.proc.stdout.readline())
        return answer["code"], answer["output"]


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n")


@pytest.fixture(scope="module")
def agent() -> Iterator[Agent]:
    with RIG_LOCK.open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, after the rig is gone
        yield from _rig()


def _rig() -> Iterator[Agent]:
    base = Path(tempfile.mkdtemp(prefix="rho-sandbox-alone-", dir="/var/tmp"))
    home, ws, sess, srv = base / "home", base / "ws", base / "sessions", base / "srv"
    for rel, text in {
        ".ssh/id_rsa": "-----BEGIN OPENSSH PRIVATE KEY----- MARK-SSH",
        ".aws/credentials": "aws_secret_access_key = MARK-AWS",
        "projects/app/.env": "TOKEN=MARK-HOME",  # deep in the home, under no known name
        "notes.txt": "MARK-HOME in a plain file of the home",
    }.items():
        _write(home / rel, text)
    _write(sess / "trace.jsonl", '{"secret": "MARK-SESSION"}')
    _write(srv / "app" / ".env", "DB_PASSWORD=MARK-SRV")  # outside home and workspace
    for rel, text in {
        ".env": "API_KEY=MARK-ENV",
        ".EnV": "API_KEY=MARK-CASE",
        "config/nested/deeper/.env.production": "KEY=MARK-NEST",
        "deploy/server.key": "MARK-KEY",
        "sub/.aws/credentials": "MARK-AWS nested",
        ".ssh/deploy": "MARK-WSSH",
        # copies under marks the policy learnt in redshell19 (test_redteam_copy_marks.py)
        "id_rsa.~1~": "MARK-COPY numbered",
        ".ssh.~2~/config": "MARK-COPY numbered directory",
        "id_ed25519.bak2": "MARK-COPY backup with a number",
        ".netrc,v": "MARK-COPY rcs",
        "Copy (2) of .pgpass": "MARK-COPY second copy",
        ".env.example": "API_KEY=",
        "a.txt": "plain text",
    }.items():
        _write(ws / rel, text)
    os.symlink(".env", ws / "notes.txt")
    os.symlink(home / ".ssh" / "id_rsa", ws / "key.txt")
    os.symlink(home / ".ssh", ws / "sshdir")
    os.symlink(srv / "app" / ".env", ws / "srv-env")
    os.symlink(srv / "app", ws / "srvdir")
    os.link(ws / ".env", ws / "innocent.txt")
    os.link(home / ".ssh" / "id_rsa", ws / "copy.txt")
    os.link(srv / "app" / ".env", ws / "srv-copy.txt")
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(home),
        "OPENAI_API_KEY": API_KEY,
        "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
    }
    proc = subprocess.Popen(
        [sys.executable, "-c", AGENT, str(ws), str(sess)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    paths = {"HOME": str(home), "WS": str(ws), "SESS": str(sess), "SRV": str(srv)}
    try:
        yield Agent(proc, {**paths, "BASE": str(base)})
    finally:
        proc.kill()
        proc.wait()
        shutil.rmtree(base, ignore_errors=True)


# (class, bash line). HOME, WS, SESS, SRV, BASE: the rig's paths; AGENT: the agent's pid.
READS: list[tuple[str, str]] = [
    ("name", "cat .env"),
    ("name", "cat .EnV"),
    ("name", "cat config/nested/deeper/.env.production"),
    ("name", "cat deploy/server.key"),
    ("name", "cat sub/.aws/credentials"),
    ("name", "cat .ssh/deploy; ls -A .ssh"),
    ("name", "cat WS/.env"),
    ("name", "head -c 100 ./config/*/*/.env*"),
    ("name", "python3 -c 'print(open(\".env\").read())'"),
    ("name", "tar -cf - . 2>/dev/null | strings"),
    ("name", "grep -r MARK . 2>/dev/null"),
    ("name", "rg -uuu MARK 2>/dev/null"),
    ("name", "cat id_rsa.~1~ .ssh.~2~/config id_ed25519.bak2 .netrc,v 'Copy (2) of .pgpass'"),
    ("home", "cat HOME/.ssh/id_rsa"),
    ("home", "cat ~/.ssh/id_rsa; HOME=HOME; cat ~/.ssh/id_rsa"),
    ("home", "cat HOME/.aws/credentials"),
    ("home", "cat HOME/projects/app/.env"),
    ("home", "cat HOME/notes.txt"),
    ("home", "grep -r MARK HOME 2>/dev/null"),
    ("home", "ls -laR HOME"),
    ("walk", "find / -name '*.env' -exec cat {} + 2>/dev/null"),
    ("walk", "find / -name '.env*' -exec cat {} + 2>/dev/null"),
    ("walk", "find BASE -type f -exec cat {} + 2>/dev/null"),
    ("walk", "grep -r MARK BASE 2>/dev/null"),
    ("walk", "grep -r MARK /var/tmp 2>/dev/null"),
    ("walk", "grep -rl MARK / --exclude-dir=proc --exclude-dir=sys --exclude-dir=usr 2>/dev/null"),
    ("symlink", "cat notes.txt"),
    ("symlink", "cat key.txt"),
    ("symlink", "cat sshdir/id_rsa; ls sshdir"),
    ("symlink", "cat srv-env"),
    ("symlink", "cat srvdir/.env"),
    ("symlink", "cat SRV/app/.env"),
    ("symlink", "cat -- */.env 2>/dev/null"),
    ("symlink", "grep -R MARK . 2>/dev/null"),
    ("hardlink", "cat innocent.txt"),
    ("hardlink", "cat copy.txt"),
    ("hardlink", "cat srv-copy.txt"),
    ("hardlink", "find . -type f -links +1 -exec cat {} +"),
    ("session", "cat SESS/trace.jsonl; grep -r MARK SESS"),
    ("session", "find / -name trace.jsonl -exec cat {} + 2>/dev/null"),
    # the masks themselves: no capability, no user namespace to unmount them in
    ("mount", "umount WS/.env; umount -l HOME; cat WS/.env HOME/.ssh/id_rsa"),
    ("mount", "unshare -rm sh -c 'umount WS/.env; cat WS/.env'"),
    ("mount", "mount --bind WS/a.txt WS/.env; mount -t proc proc /mnt; cat /mnt/*/environ"),
    ("mount", "cat /proc/self/mountinfo >/dev/null; ls /dev; head -c 64 /dev/[sv]d? /dev/nvme*"),
    ("proc", "cat /proc/AGENT/environ"),
    ("proc", "cat /proc/AGENT/cmdline"),
    ("proc", "cat /proc/1/environ"),
    ("proc", "cat /proc/*/environ"),
    ("proc", "cat /proc/self/environ"),
    ("proc", "cat /proc/self/root/HOME/.ssh/id_rsa"),
    ("proc", "cat /proc/1/root/WS/.env"),
    ("proc", "grep -ra MARK /proc/*/cmdline /proc/*/environ 2>/dev/null"),
    ("proc", "cat /dev/fd/../../AGENT/environ"),
    ("env", "env"),
    ("env", "set"),
    ("env", "echo $OPENAI_API_KEY"),
    ("env", "python3 -c 'import os; print(dict(os.environ))'"),
]


@pytest.mark.parametrize(("kind", "script"), READS, ids=[f"{k}:{s[:50]}" for k, s in READS])
def test_no_secret_comes_out(agent: Agent, kind: str, script: str) -> None:
    _, output = agent.run(script)
    leaked = [mark for mark in MARKS if mark in output]
    assert leaked == [], f"{kind}: {script!r} leaked {leaked}:\n{output}"


def test_the_rig_really_holds_the_secrets(agent: Agent) -> None:
    """The attacks above are aimed at files that exist, with the secrets in them."""
    for rel, mark in (
        ("WS/.env", "MARK-ENV"),
        ("HOME/.ssh/id_rsa", "MARK-SSH"),
        ("HOME/projects/app/.env", "MARK-HOME"),
        ("SRV/app/.env", "MARK-SRV"),
        ("WS/copy.txt", "MARK-SSH"),
        ("WS/.netrc,v", "MARK-COPY"),
    ):
        path = Path(agent.paths[rel.split("/")[0]], *rel.split("/")[1:])
        assert mark in path.read_text(), path


def test_the_agent_is_not_in_view(agent: Agent) -> None:
    _, output = agent.run("ls /proc | grep -x '[0-9]*'; ps -e -o pid= 2>/dev/null")
    pids = {int(word) for word in output.split()}
    assert agent.pid not in pids
    assert pids, output
    assert max(pids) < 100, output  # the sandbox's own PID namespace


WRITES: list[tuple[str, str]] = [
    ("ws", "touch x"),
    ("ws", "echo pwned > a.txt"),
    ("ws", "echo pwned >> a.txt"),
    ("ws", "mkdir newdir"),
    ("ws", "cp a.txt copy2.txt"),
    ("ws", "rm -f a.txt"),
    ("ws", "mv a.txt moved.txt"),
    ("ws", "ln -s a.txt newlink"),
    ("ws", 'python3 -c \'open("py.txt", "w").write("x")\''),
    ("ws", "sed -i s/plain/pwned/ a.txt"),
    ("ws", "chmod 777 a.txt"),
    ("ws", "touch .ssh/new; touch sub/.aws/new"),
    ("home", "echo pwned > HOME/.bashrc"),
    ("home", "touch HOME/.ssh/authorized_keys"),
    ("outside", "echo pwned > /var/tmp/rho-sandbox-pwned"),
    ("outside", "echo pwned > BASE/pwned"),
    ("outside", "touch SRV/app/new"),
    ("tmp", "echo pwned > /tmp/rho-sandbox-pwned"),
    ("tmp", "echo pwned > /dev/shm/rho-sandbox-pwned"),
    ("tmp", "mkdir -p /run/x && touch /run/x/y"),
]


def _snapshot(base: Path) -> dict[str, tuple[int, float, bytes]]:
    out = {}
    for path in sorted(base.rglob("*")):
        st = path.lstat()
        data = path.read_bytes() if path.is_file() and not path.is_symlink() else b""
        out[str(path)] = (st.st_mode, st.st_mtime, data)
    return out


@pytest.mark.parametrize(("kind", "script"), WRITES, ids=[f"{k}:{s[:50]}" for k, s in WRITES])
def test_nothing_reaches_the_disk(agent: Agent, kind: str, script: str) -> None:
    base = Path(agent.paths["BASE"])
    before = _snapshot(base)
    agent.run(script)
    assert _snapshot(base) == before, f"{kind}: {script!r} changed the rig"
    for outside in ("/var/tmp/rho-sandbox-pwned", "/tmp/rho-sandbox-pwned"):
        assert not os.path.exists(outside), f"{script!r} wrote {outside}"
    assert not os.path.exists("/dev/shm/rho-sandbox-pwned")


def test_private_tmp_is_usable_and_bounded(agent: Agent) -> None:
    """Scratch space works (sort spills there) but is memory the file-size limit bounds."""
    code, output = agent.run("echo scratch > /tmp/x && cat /tmp/x && df -B1 /tmp | tail -1")
    assert code == 0, output
    assert "scratch" in output
    size = int(output.split()[-5])
    assert 0 < size <= 256 << 20


@pytest.fixture
def listener() -> Iterator[tuple[int, list[bytes]]]:
    """A TCP server on the host's loopback that records what reaches it."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    received: list[bytes] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with conn:
                conn.settimeout(1)
                try:
                    received.append(conn.recv(100) or b"<connected>")
                except OSError:
                    received.append(b"<connected>")
                conn.sendall(b"HELLO-FROM-HOST\n")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1], received
    finally:
        stop.set()
        thread.join()
        server.close()


NETWORK = [
    "curl -s -m 3 http://127.0.0.1:PORT/",
    'python3 -c \'import socket; s = socket.create_connection(("127.0.0.1", PORT), 3); '
    's.send(b"x"); print(s.recv(100))\'',
    "echo x > /dev/tcp/127.0.0.1/PORT && cat < /dev/tcp/127.0.0.1/PORT",
    "exec 3<>/dev/tcp/localhost/PORT; echo x >&3; cat <&3",
    "getent hosts example.com; curl -s -m 3 http://example.com/",
    "curl -s -m 3 http://[::ffff:127.0.0.1]:PORT/; curl -s -m 3 http://localhost:PORT/",
    # a daemon on the host's abstract socket namespace (no file at all)
    "python3 -c 'import socket; s = socket.socket(socket.AF_UNIX); "
    's.connect("\\0rho-sandbox-abstract"); s.send(b"x"); print("CONNECTED")\'',
]


@pytest.mark.parametrize("script", NETWORK)
def test_network_is_closed(agent: Agent, listener: tuple[int, list[bytes]], script: str) -> None:
    port, received = listener
    abstract = socket.socket(socket.AF_UNIX)
    abstract.bind("\0rho-sandbox-abstract")
    abstract.listen()
    abstract.settimeout(0.2)
    try:
        _, output = agent.run(script.replace("PORT", str(port)))
        with pytest.raises(TimeoutError):
            abstract.accept()
    finally:
        abstract.close()
    assert "CONNECTED" not in output
    assert "HELLO-FROM-HOST" not in output
    assert received == []
    assert "Example Domain" not in output


def test_unix_sockets_outside_are_unreachable(agent: Agent) -> None:
    """A daemon's socket file on a read-only mount is still connectable in Linux: a socket
    in view would be a way out of the network namespace."""
    path = Path(agent.paths["BASE"]) / "daemon.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen()
    server.settimeout(0.5)
    try:
        _, output = agent.run(
            "python3 -c 'import socket; s = socket.socket(socket.AF_UNIX); "
            f's.connect("{path}"); s.send(b"x"); print("CONNECTED")\''
        )
        with pytest.raises(TimeoutError):
            server.accept()
    finally:
        server.close()
        path.unlink()
    assert "CONNECTED" not in output


LEGIT: list[tuple[str, str]] = [
    ("cat a.txt", "plain text"),
    ("cat .env.example", "API_KEY="),
    ("ls -la", "a.txt"),
    # a hidden file reads as "permission denied" (grep exits 2 for it): ; echo is the exit code
    ("grep -rn plain . 2>/dev/null; echo", "a.txt:1:plain text"),
    ("git --version", "git version"),
    ("head -n 1 /etc/passwd", "root"),
    ("echo scratch > /tmp/s && sort /tmp/s", "scratch"),
    ("seq 3 | sort -r | head -n 1", "3"),
    ("ls -ln a.txt", "a.txt"),
]


@pytest.mark.parametrize(("script", "expected"), LEGIT, ids=[s for s, _ in LEGIT])
def test_legit_work_runs(agent: Agent, script: str, expected: str) -> None:
    code, output = agent.run(script)
    assert code == 0, output
    assert expected in output


def test_attack_classes() -> None:
    assert {k for k, _ in READS} == {
        "name", "home", "walk", "symlink", "hardlink", "session", "proc", "env", "mount"
    }  # fmt: skip
    assert len(READS) >= 45
    assert len({s for _, s in READS}) == len(READS)
