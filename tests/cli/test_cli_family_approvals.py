"""A sub-agent's waiting call, answered from a second process: the parent completes."""

from __future__ import annotations

import json
from pathlib import Path

from cli_support import Terminal, rho

from rho_adapters.fakes.loopback import LoopbackServer
from rho_adapters.fakes.wire import call, text_reply, tool_reply
from rho_domain.call_digest import call_digest


# the calls as an approver is shown them (the digests --approve names them with)
def write_note(work: Path) -> str:
    """The child's write call as shown: run in ``work``."""
    return call_digest(
        "write", json.dumps({"path": "note.txt", "content": "hi\n"}), place=str(work.resolve())
    )


def delegate_note(work: Path) -> str:
    """A delegate call's as shown: its sub-agent's waiting call too, run in ``work``."""
    return call_digest(
        "delegate",
        json.dumps({"instruction": "write the note"}),
        child=("write", json.dumps({"path": "note.txt", "content": "hi\n"})),
        place=str(work.resolve()),
    )


def test_a_childs_approval_is_answered_from_another_process(tmp_path: Path) -> None:
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    replies = [
        tool_reply(call("delegate", {"instruction": "write the note"}, call_id="d1")),
        tool_reply(call("write", {"path": "note.txt", "content": "hi\n"}, call_id="w1")),
        text_reply("child: note written"),
        text_reply("parent: the sub-agent wrote note.txt"),
    ]
    with LoopbackServer(replies) as server:
        first = rho(
            "--base-url", server.base_url, "-m", "fake", "--profile", "developer", "--json",
            "delegate a note", cwd=work, home=home,
        )  # fmt: skip
        assert first.returncode == 4, first.stderr
        final = json.loads(first.stdout.splitlines()[-1])
        assert final["status"] == "awaiting_approval"
        assert [p["call_id"] for p in final["pending"]] == ["d1"]
        assert not (work / "note.txt").exists()
        parent = final["session_id"]
        # the profile and the endpoint are the resumer's to give again, not the session's
        second = rho(
            "--resume", parent, "--profile", "developer", "--base-url", server.base_url,
            "--approve", f"d1@{final['pending'][0]['digest']}", cwd=work, home=home,
        )  # fmt: skip
    assert second.returncode == 0, second.stderr
    assert second.stdout.strip() == "parent: the sub-agent wrote note.txt"
    assert (work / "note.txt").read_text() == "hi\n"
    assert len(server.requests) == 4
    sessions = home / "rho" / "sessions"
    (child,) = [p.name for p in sessions.iterdir() if p.name != parent]
    meta = json.loads((sessions / child / "meta.json").read_text())
    assert (meta["parent_id"], meta["status"]) == (parent, "completed")


def test_the_waiting_child_call_is_shown_with_the_exit_4_message(tmp_path: Path) -> None:
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    replies = [
        tool_reply(call("delegate", {"instruction": "write"}, call_id="d1")),
        tool_reply(call("write", {"path": "n.txt", "content": "x"}, call_id="w1")),
        text_reply("parent: fine, I will not"),
    ]
    with LoopbackServer(replies) as server:
        first = rho(
            "--base-url", server.base_url, "-m", "fake", "--profile", "developer", "go",
            cwd=work, home=home,
        )  # fmt: skip
        assert first.returncode == 4
        # shown where it runs, as any call is (the delegate call recorded no place before)
        assert f"delegate (d1) in {work.resolve()}: the sub-agent" in first.stderr
        assert 'asks to run write {"path": "n.txt"' in first.stderr
        sessions = home / "rho" / "sessions"
        # the session without a parent (ids are random hex: a text search could match both)
        (parent,) = [
            p.name
            for p in sessions.iterdir()
            if json.loads((p / "meta.json").read_text())["parent_id"] is None
        ]
        denied = rho(
            "--resume", parent, "--profile", "developer", "--base-url", server.base_url,
            "--deny", "all", "--reason", "no files today", cwd=work, home=home,
        )  # fmt: skip
    assert denied.returncode == 0, denied.stderr
    assert denied.stdout.strip() == "parent: fine, I will not"
    tool_message = server.requests[-1]["messages"][-1]
    assert tool_message["role"] == "tool"
    assert "The user rejected the sub-agent's call write" in tool_message["content"]
    assert "(no files today)" in tool_message["content"]
    assert not (work / "n.txt").exists()


def test_the_repl_asks_about_the_childs_call_when_the_parent_is_resumed(tmp_path: Path) -> None:
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    replies = [
        tool_reply(call("delegate", {"instruction": "write"}, call_id="d1")),
        tool_reply(call("write", {"path": "r.txt", "content": "repl\n"}, call_id="w1")),
        text_reply("child: done"),
        text_reply("parent: done"),
    ]
    with LoopbackServer(replies) as server:
        first = rho(
            "--base-url", server.base_url, "-m", "fake", "--profile", "developer", "--json", "go",
            cwd=work, home=home,
        )  # fmt: skip
        final = json.loads(first.stdout.splitlines()[-1])
        assert final["pending"][0]["reason"].startswith("the sub-agent ")
        term = Terminal(
            "--resume", final["session_id"], "--profile", "developer",
            "--base-url", server.base_url, cwd=work, home=home,
        )  # fmt: skip
        try:
            term.expect(r"d1\s+delegate")
            term.expect(r"\? approve write")  # the sub-agent's call, not the delegate call
            term.expect(r"\[y\]es / \[N\]o")
            term.send("y\r")
            term.expect("parent: done")
            term.expect("> ")
            term.send("/exit\r")
            assert term.wait() == 0
        finally:
            term.close()
    assert (work / "r.txt").read_text() == "repl\n"


def test_a_child_answered_on_its_own_gives_its_answer_to_the_parent(tmp_path: Path) -> None:
    """Issue 29, item 6: ``--resume CHILD`` continues the sub-agent without a ``delegate``
    tool, and the parent, resumed afterwards, gets the answer the child gave there."""
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    replies = [
        tool_reply(call("delegate", {"instruction": "write the note"}, call_id="d1")),
        tool_reply(call("write", {"path": "note.txt", "content": "hi\n"}, call_id="w1")),
        text_reply("child: note written"),
        text_reply("parent: the sub-agent says the note is written"),
    ]
    with LoopbackServer(replies) as server:
        first = rho(
            "--base-url", server.base_url, "-m", "fake", "--profile", "developer", "--json",
            "delegate a note", cwd=work, home=home,
        )  # fmt: skip
        assert first.returncode == 4, first.stderr
        parent = json.loads(first.stdout.splitlines()[-1])["session_id"]
        sessions = home / "rho" / "sessions"
        (child,) = [p.name for p in sessions.iterdir() if p.name != parent]
        alone = rho(
            "--resume", child, "--profile", "developer", "--base-url", server.base_url,
            "--approve", f"w1@{write_note(work)}", cwd=work, home=home,
        )  # fmt: skip
        assert alone.returncode == 0, alone.stderr
        assert alone.stdout.strip() == "child: note written"
        offered = [t["function"]["name"] for t in server.requests[2]["tools"]]
        assert "delegate" not in offered
        assert "write" in offered
        back = rho(
            "--resume", parent, "--profile", "developer", "--base-url", server.base_url,
            "--approve", f"d1@{delegate_note(work)}", cwd=work, home=home,
        )  # fmt: skip
    assert back.returncode == 0, back.stderr
    assert back.stdout.strip() == "parent: the sub-agent says the note is written"
    tool_message = server.requests[-1]["messages"][-1]
    assert (tool_message["role"], tool_message["content"]) == ("tool", "child: note written")
    assert len(server.requests) == 4
    assert (work / "note.txt").read_text() == "hi\n"
