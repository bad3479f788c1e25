"""A LoopbackServer in its own process that answers every session of an agent benchmark alike.

Each chat request is answered by what the conversation needs next, so any number of
sessions can call it at once: a ``list`` tool call while the last message is not a tool
result, then a 50-delta text answer (``DELTAS`` deltas of ``"word "``: another count for the
per-delta figure of bench_overhead.py). Prints the base URL on stdout, then serves until stdin
closes (the benchmark ends it by closing the pipe).

Usage: python bench/loopback_agent_server.py [DELTAS]
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from rho_adapters.fakes.loopback import LoopbackServer
from rho_adapters.fakes.wire import Exchange, Reply, call, text_reply, tool_reply

ANSWER = "word " * 100  # 500 characters in 50 deltas
_TOOL = tool_reply(call("list", {"path": "."}, "c1"))
_TEXT = text_reply(ANSWER, deltas=50)


def next_reply(exchange: Exchange) -> Reply | None:
    """The tool call first, the text answer once the tool's result is in the conversation."""
    if not exchange.is_chat:
        return None
    messages = exchange.body.get("messages") or []
    last = messages[-1] if messages else {}
    return _TEXT if isinstance(last, dict) and last.get("role") == "tool" else _TOOL


def start_server(*args: str) -> tuple[subprocess.Popen[str], str]:
    """This server in a child process (``args``: its own, ``[DELTAS]``), and its base URL;
    closing the child's stdin ends it."""
    child = subprocess.Popen(
        [sys.executable, str(Path(__file__)), *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    return child, child.stdout.readline().strip()


def main() -> None:
    """Serve until stdin closes."""
    global _TEXT
    if len(sys.argv) > 1:
        deltas = int(sys.argv[1])
        _TEXT = text_reply("word " * deltas, deltas=deltas)
    server = LoopbackServer([], rules=[next_reply]).start()
    sys.stdout.write(server.base_url + "\n")
    sys.stdout.flush()
    sys.stdin.read()
    server.stop()


if __name__ == "__main__":
    main()
