"""What the MCP tests share: the reference servers' command lines, process checks and a
scripted transport (a server answered in this process)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rho_adapters.mcp.transport import Message
from rho_domain.mcp_config import McpServerConfig

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))  # program_zygote
from program_zygote import command, popen

HERE = Path(__file__).parent
REFERENCE = str(HERE / "reference_server.py")
RAW = str(HERE / "raw_server.py")


def reference_command() -> tuple[str, ...]:
    """The command that runs ``reference_server.py stdio``: the server forked from the test
    process's zygote that has imported the SDK (``program_zygote``: the SDK's import is 0.85 s
    of CPU a start). The client starts that command as any other (its own process group,
    stdin closed then TERM and KILL to the group): the TERM reaches the server, and a killed
    client takes it along. The server's own children are not in that group: the tests that
    kill a group to reach a grandchild use ``raw_server.py``, started as itself."""
    return tuple(command("mcp", [sys.executable, REFERENCE, "stdio"]))


def reference(**settings: Any) -> McpServerConfig:
    """The official SDK's server over stdio (``reference_server.py``, ``reference_command``)."""
    return McpServerConfig(command=reference_command(), **settings)


def raw(log: Path, **settings: Any) -> McpServerConfig:
    """The hand-written rough server (``raw_server.py``), logging what it receives to ``log``."""
    env = {"RAW_LOG": str(log), **settings.pop("env", {})}
    return McpServerConfig(command=(sys.executable, RAW), env=env, **settings)


def logged(log: Path) -> list[dict[str, Any]]:
    """The messages ``raw_server.py`` logged."""
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie counts as gone)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in status


def wait_gone(pid: int, seconds: float = 30) -> bool:
    """True once ``pid`` is gone (within ``seconds``: a bound on a hang, it returns at once
    when the process is gone)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.02)
    return False


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_http_server() -> tuple[subprocess.Popen[bytes], str]:
    """The official SDK's server over Streamable HTTP on a free port, ready; its URL.

    Its start is the SDK's imports, seconds of CPU: at a load of 12 it once took more than
    20 s. So the wait ends when the server listens or its process has ended (its port taken
    meanwhile, say), and only a server that neither listens nor ends in 90 s is hung."""
    port = free_port()
    process = popen(
        "mcp",
        [sys.executable, REFERENCE, "http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and process.poll() is None:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return process, f"http://127.0.0.1:{port}/mcp"
        except OSError:
            time.sleep(0.05)
    process.kill()
    ended = process.wait()
    raise RuntimeError(f"the reference HTTP server did not start (exit status {ended})")


class ScriptedTransport:
    """Answers each request with ``answer(request)`` (a JSON text, or None for no answer)."""

    def __init__(self, answer: Callable[[Message], str | None]) -> None:
        self.answer = answer
        self.deliver: Callable[[str], None] = lambda _: None

    async def start(self, deliver: Callable[[str], None], closed: Callable[[str], None]) -> None:
        self.deliver = deliver

    async def send(self, message: Message) -> None:
        if "id" in message and (text := self.answer(message)) is not None:
            self.deliver(text)

    answers_in_reply = False  # a request left unanswered waits for its deadline

    def negotiated(self, version: str) -> None:
        return None

    async def aclose(self) -> None:
        return None
