"""Anchor items 10 and 17, re-tried on a rejection in the middle of a batch of tool calls.

The reference left a batch's later calls without results and exited 0 whatever the ending;
rho-agent answers every call of the batch and exits 5 after a rejection. These variants check
what the command says and writes in that ending: the call it names is the one the user
rejected (not the batch's last, which was skipped), and ``-o FILE`` writes no answer, since
there is none (an empty file there would also refuse the next ``-o FILE`` without ``--force``).
"""

from __future__ import annotations

import json
from pathlib import Path

from cli_support import rho

from rho_adapters.fakes.loopback import LoopbackServer
from rho_adapters.fakes.wire import call, text_reply, tool_reply

DEV = ("--profile", "developer", "-m", "fake-model")


def _batch() -> list[object]:
    """A list, a bash call (it needs approval under developer) and a read, in one answer."""
    return [
        tool_reply(
            call("list", {"path": "."}, "c1"),
            call("bash", {"command": "echo hi"}, "c2"),
            call("read", {"path": "notes.txt"}, "c3"),
            text="I will look around.",
        ),
        text_reply("Understood, I will not run it."),
    ]


def _waiting(server: LoopbackServer, work: Path, home: Path) -> str:
    first = rho("--base-url", server.base_url, *DEV, "--json", "go", cwd=work, home=home)
    assert first.returncode == 4, first.stderr
    return str(json.loads(first.stdout.splitlines()[-1])["session_id"])


def test_a_rejection_mid_batch_names_the_rejected_call(tmp_path: Path) -> None:
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    (work / "notes.txt").write_text("hello\n")
    with LoopbackServer(_batch()) as server:  # type: ignore[arg-type]
        session_id = _waiting(server, work, home)
        denied = rho(
            "--base-url", server.base_url, *DEV, "--resume", session_id, "--deny", "c2",
            cwd=work, home=home,
        )  # fmt: skip
        assert denied.returncode == 5, denied.stderr
        assert "stopped: you rejected bash (c2)" in denied.stderr
        assert "read (c3)" not in denied.stderr  # skipped because of c2, not rejected
        # every call of the batch has its result when the model is asked next
        again = rho(
            "--base-url", server.base_url, *DEV, "--resume", session_id, "what now?",
            cwd=work, home=home,
        )  # fmt: skip
    assert again.returncode == 0, again.stderr
    sent = server.requests[-1]["messages"]
    assert [m.get("tool_call_id") for m in sent if m["role"] == "tool"] == ["c1", "c2", "c3"]


def test_output_file_is_not_written_after_a_rejection(tmp_path: Path) -> None:
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    (work / "notes.txt").write_text("hello\n")
    with LoopbackServer(_batch()) as server:  # type: ignore[arg-type]
        session_id = _waiting(server, work, home)
        denied = rho(
            "--base-url", server.base_url, *DEV, "--resume", session_id, "--deny", "all",
            "-o", "answer.txt", cwd=work, home=home,
        )  # fmt: skip
        assert denied.returncode == 5, denied.stderr
        assert not (work / "answer.txt").exists()  # no answer: nothing to write
        assert "answer written" not in denied.stderr
        # the next run's -o is not refused by a file the rejection left
        later = rho(
            "--base-url", server.base_url, *DEV, "--resume", session_id, "skip it",
            "-o", "answer.txt", cwd=work, home=home,
        )  # fmt: skip
    assert later.returncode == 0, later.stderr
    assert (work / "answer.txt").read_text() == "Understood, I will not run it.\n"
