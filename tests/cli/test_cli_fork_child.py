"""A waiting sub-agent is continued only by its own parent, and a fork is not a sub-agent.
A fork of the parent names the parent as ``parent_id`` too (with the ``forked_from`` label),
so a parent's trace rewritten to name a fork of it as its waiting child passed the check
that the child names this parent (redwrite14's, for any other waiting session): the fork's
waiting write ran under the parent's agent and approval, and the fork went on as if it were
the parent's sub-agent. Also: a forked parent's own waiting child (one whose record names
the original parent) is refused when the fork's trace names it."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from cli_support import rho

from rho_adapters.fakes.loopback import LoopbackServer
from rho_adapters.fakes.wire import call, text_reply, tool_reply

DEV = ("--profile", "developer")
SCRIPT = [
    tool_reply(call("delegate", {"instruction": "write the note"}, call_id="d1")),
    tool_reply(call("write", {"path": "note.txt", "content": "hi\n"}, call_id="w1")),
    tool_reply(call("write", {"path": "pwned.txt", "content": "hi\n"}, call_id="w1")),
    text_reply("done"),
    text_reply("done"),
    text_reply("done"),
]


def _trace(home: Path, session_id: str) -> Path:
    return home / "rho" / "sessions" / session_id / "trace.jsonl"


def _rewrite(home: Path, session_id: str, *swaps: tuple[str, str]) -> None:
    path = _trace(home, session_id)
    text = path.read_text(encoding="utf-8")
    for old, new in swaps:
        assert old in text
        text = text.replace(old, new)
    path.with_name("trace.new").write_text(text, encoding="utf-8")
    os.replace(path.with_name("trace.new"), path)


def _digest_now(home: Path, work: Path, session_id: str, server: LoopbackServer) -> str:
    """d1's digest as the parent's trace shows it now (the bare --approve's refusal)."""
    bare = rho(
        *("--resume", session_id, *DEV, "--base-url", server.base_url, "--approve", "d1"),
        cwd=work,
        home=home,
    )
    found = re.search(r"--approve d1@([0-9a-f]{32})", bare.stderr)
    assert found, bare.stderr
    return found.group(1)


def _parent_and_fork(work: Path, home: Path, server: LoopbackServer) -> tuple[str, str, str]:
    """A parent waiting on d1 (its child on write w1 note.txt), the child, and a fork of
    the parent at turn 1, run on until it waits on its own write w1 pwned.txt."""
    first = rho(
        *("--base-url", server.base_url, "-m", "fake", *DEV, "--json", "delegate a note"),
        cwd=work,
        home=home,
    )
    assert first.returncode == 4, first.stderr
    parent = str(json.loads(first.stdout.splitlines()[-1])["session_id"])
    (child,) = [p.name for p in (home / "rho" / "sessions").iterdir() if p.name != parent]
    forked = rho("fork", parent, "--at", "1", cwd=work, home=home)
    assert forked.returncode == 0, forked.stderr
    found = re.search(r"forked: (\S+)", forked.stdout)
    assert found, forked.stdout
    fork = found.group(1)
    waits = rho(
        *("--resume", fork, *DEV, "--base-url", server.base_url, "--json", "go"),
        cwd=work,
        home=home,
    )
    assert waits.returncode == 4, waits.stderr
    return parent, child, fork


def test_a_fork_of_the_parent_is_not_continued_as_its_sub_agent(tmp_path: Path) -> None:
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    with LoopbackServer(SCRIPT) as server:
        parent, child, fork = _parent_and_fork(work, home, server)
        _rewrite(home, parent, (child, fork), ("note.txt", "pwned.txt"))
        digest = _digest_now(home, work, parent, server)
        answered = rho(
            *("--resume", parent, *DEV, "--base-url", server.base_url),
            *("--approve", f"d1@{digest}"),
            cwd=work,
            home=home,
        )
    assert f"session {fork} is not a sub-agent of session {parent}" in answered.stderr, (
        answered.stderr
    )
    assert not (work / "pwned.txt").exists()  # the fork's write ran under the parent before
    assert '"kind": "tool_end"' not in _trace(home, fork).read_text()


def test_a_forks_trace_naming_the_parents_waiting_child_is_refused(tmp_path: Path) -> None:
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    with LoopbackServer(SCRIPT) as server:
        parent, child, fork = _parent_and_fork(work, home, server)
        # the fork's trace made to say it delegated d1 to the original parent's waiting child
        _trace(home, fork).write_text(_trace(home, parent).read_text())
        digest = _digest_now(home, work, fork, server)
        answered = rho(
            *("--resume", fork, *DEV, "--base-url", server.base_url),
            *("--approve", f"d1@{digest}"),
            cwd=work,
            home=home,
        )
    assert f"session {child} is not a sub-agent of session {fork}" in answered.stderr, (
        answered.stderr
    )
    assert not (work / "note.txt").exists()
