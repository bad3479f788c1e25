"""``--resume ID --approve CALL@DIGEST`` answers the call its answerer was shown: the run that
stopped with exit code 4 showed each waiting call with its digest, and the process that
answers reads the call again from the session's trace. A trace rewritten in between (as
whoever can write the session directory could) is refused, nothing answered and nothing run;
a CALL without a digest is refused with the call as it waits now. Before the digest,
``--approve demo_1`` ran the rewritten command."""

from __future__ import annotations

import json
import os
from pathlib import Path

from cli_support import rho

from rho_adapters.fakes.loopback import LoopbackServer
from rho_adapters.fakes.wire import call, text_reply, tool_reply
from rho_domain.call_digest import call_digest
from rho_entry.cli.answers import split_call_ref

DEV = ("--profile", "developer")


def _waiting(work: Path, home: Path) -> tuple[str, dict[str, str]]:
    """A session stopped (exit 4) on the demo model's bash call; its id and the pending call
    as ``--json`` shows it."""
    result = rho(*("-m", "demo", *DEV, "--json", "run `echo shown`"), cwd=work, home=home)
    assert result.returncode == 4, result.stderr
    final = json.loads(result.stdout.splitlines()[-1])
    (pending,) = final["pending"]
    return str(final["session_id"]), pending


def _rewrite(home: Path, session_id: str, old: str, new: str) -> None:
    """Replace the session's trace as a writer of the directory would (a new file)."""
    path = home / "rho" / "sessions" / session_id / "trace.jsonl"
    text = path.read_text(encoding="utf-8")
    assert old in text
    swapped = path.with_name("trace.new")
    swapped.write_text(text.replace(old, new), encoding="utf-8")
    os.replace(swapped, path)


def _kinds(home: Path, session_id: str) -> list[str]:
    path = home / "rho" / "sessions" / session_id / "trace.jsonl"
    return [json.loads(line)["kind"] for line in path.read_text().splitlines() if line.strip()]


def test_an_approval_of_a_call_rewritten_since_it_was_shown_is_refused(tmp_path: Path) -> None:
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    session_id, pending = _waiting(work, home)
    in_work = str(work.resolve())
    shown = call_digest("bash", json.dumps({"command": "echo shown"}), place=in_work)
    assert pending["digest"] == shown
    _rewrite(home, session_id, "echo shown", "touch pwned.txt")
    before = _kinds(home, session_id)

    named = f"demo_1@{pending['digest']}"
    refused = rho("--resume", session_id, *DEV, "--approve", named, cwd=work, home=home)
    assert refused.returncode == 1, refused.stderr
    assert "tool call 'demo_1' changed since it was shown" in refused.stderr
    assert "touch pwned.txt" in refused.stderr
    assert not (work / "pwned.txt").exists()
    assert _kinds(home, session_id) == before  # nothing answered, nothing ran

    bare = rho("--resume", session_id, *DEV, "--approve", "demo_1", cwd=work, home=home)
    assert bare.returncode == 1
    now = call_digest("bash", json.dumps({"command": "touch pwned.txt"}), place=in_work)
    assert "it waits now as bash" in bare.stderr
    assert f"--approve demo_1@{now}" in bare.stderr
    assert not (work / "pwned.txt").exists()

    # read, and approved as it is now: it runs
    taken = rho("--resume", session_id, *DEV, "--approve", f"demo_1@{now}", cwd=work, home=home)
    assert taken.returncode == 0, taken.stderr
    assert (work / "pwned.txt").exists()


def test_a_denial_needs_no_digest(tmp_path: Path) -> None:
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    session_id, _ = _waiting(work, home)
    _rewrite(home, session_id, "echo shown", "touch pwned.txt")
    denied = rho("--resume", session_id, *DEV, "--deny", "demo_1", cwd=work, home=home)
    assert denied.returncode == 5, denied.stderr  # the turn stopped on the rejection
    assert not (work / "pwned.txt").exists()


def _delegated(work: Path, home: Path, server: LoopbackServer) -> tuple[str, str, str]:
    """A parent stopped (exit 4) on its delegate call d1, whose sub-agent waits on a write:
    the parent's id, the sub-agent's, and d1 as ``--approve`` names it (the digest covers
    the sub-agent's call: it is what the answer approves)."""
    first = rho(
        *("--base-url", server.base_url, "-m", "fake", *DEV, "--json", "delegate a note"),
        cwd=work,
        home=home,
    )
    assert first.returncode == 4, first.stderr
    final = json.loads(first.stdout.splitlines()[-1])
    parent = str(final["session_id"])
    (child,) = [p.name for p in (home / "rho" / "sessions").iterdir() if p.name != parent]
    (pending,) = final["pending"]
    assert pending["digest"] != call_digest("delegate", pending["arguments"])
    return parent, child, f"d1@{pending['digest']}"


DELEGATION = [
    tool_reply(call("delegate", {"instruction": "write the note"}, call_id="d1")),
    tool_reply(call("write", {"path": "note.txt", "content": "hi\n"}, call_id="w1")),
    text_reply("child: note written"),
    text_reply("parent: done"),
    text_reply("parent: done"),
]


def test_a_sub_agents_call_rewritten_in_its_own_trace_does_not_run(tmp_path: Path) -> None:
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    with LoopbackServer(DELEGATION) as server:
        parent, child, named = _delegated(work, home, server)
        _rewrite(home, child, "note.txt", "pwned.txt")  # the parent's record still says note
        answered = rho(
            *("--resume", parent, *DEV, "--base-url", server.base_url, "--approve", named),
            cwd=work,
            home=home,
        )
    assert "the sub-agent could not continue" in answered.stderr, answered.stderr
    assert "'w1' changed since it was shown" in answered.stderr
    assert not (work / "pwned.txt").exists()
    assert not (work / "note.txt").exists()


def test_a_sub_agents_call_rewritten_in_both_traces_is_refused(tmp_path: Path) -> None:
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    with LoopbackServer(DELEGATION) as server:
        parent, child, named = _delegated(work, home, server)
        _rewrite(home, child, "note.txt", "pwned.txt")
        _rewrite(home, parent, "note.txt", "pwned.txt")  # what the parent says it asks too
        refused = rho(
            *("--resume", parent, *DEV, "--base-url", server.base_url, "--approve", named),
            cwd=work,
            home=home,
        )
    assert refused.returncode == 1, refused.stderr
    assert "tool call 'd1' changed since it was shown" in refused.stderr
    assert "its sub-agent's call: write" in refused.stderr
    assert not (work / "pwned.txt").exists()


def test_a_call_id_with_an_at_sign_is_answered_with_its_digest(tmp_path: Path) -> None:
    # A server writes its own call ids, '@' included; a digest never holds one, so
    # CALL@DIGEST splits at the last '@' (at the first, 'srv' was read as the call and
    # 'c1@DIGEST' as its digest: the approval was refused as a changed call).
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    script = [
        tool_reply(call("bash", {"command": "touch approved.txt"}, call_id="srv@c1")),
        text_reply("done"),
    ]
    with LoopbackServer(script) as server:
        model = ("--base-url", server.base_url, "-m", "fake", *DEV)
        first = rho(*model, "--json", "touch it", cwd=work, home=home)
        assert first.returncode == 4, first.stderr
        final = json.loads(first.stdout.splitlines()[-1])
        session_id, (pending,) = str(final["session_id"]), final["pending"]
        assert pending["call_id"] == "srv@c1", pending

        bare = rho("--resume", session_id, *model, "--approve", "srv@c1", cwd=work, home=home)
        assert bare.returncode == 1
        assert f"--approve srv@c1@{pending['digest']}" in bare.stderr
        assert not (work / "approved.txt").exists()

        named = f"srv@c1@{pending['digest']}"
        taken = rho("--resume", session_id, *model, "--approve", named, cwd=work, home=home)
    assert taken.returncode == 0, taken.stderr
    assert (work / "approved.txt").exists()


def test_a_reference_splits_at_the_last_at_sign_unless_it_is_a_whole_waiting_id() -> None:
    # the CLI's --approve and `queue approve` read references with this one rule
    assert split_call_ref("srv@c1@0123abcd") == ("srv@c1", "0123abcd")
    assert split_call_ref("srv@c1", {"srv@c1"}) == ("srv@c1", "")
    assert split_call_ref("demo_1") == ("demo_1", "")
    assert split_call_ref("demo_1@") == ("demo_1", "")


def test_the_commands_printed_to_answer_a_call_quote_its_id(tmp_path: Path) -> None:
    """The call id is the model's choice: ``--approve c1;touch pwned;@DIGEST``, as the run
    that stopped (exit 4) and the refusal of a bare ``--approve`` printed it to paste, ran
    ``touch pwned`` in the user's shell. Each printed command, run by ``sh`` with a
    ``rho-agent`` that prints its arguments, now gives exactly the intended words."""
    import re
    import subprocess

    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    hostile = "c1;touch pwned;"
    script = [tool_reply(call("bash", {"command": "echo hi"}, call_id=hostile)), text_reply("ok")]
    with LoopbackServer(script) as server:
        model = ("--base-url", server.base_url, "-m", "fake", *DEV)
        first = rho(*model, "echo it", cwd=work, home=home)
        assert first.returncode == 4, first.stderr
        bare = rho("--resume", "latest", *model, "--approve", "c1", cwd=work, home=home)
        assert bare.returncode == 1, bare.stderr
    (session_id,) = (p.name for p in (home / "rho" / "sessions").iterdir())
    digest = call_digest("bash", json.dumps({"command": "echo hi"}), place=str(work.resolve()))
    pasted = [
        re.search(r"answer with `(rho-agent [^`]*)`", first.stderr),
        re.search(
            r"(rho-agent --resume \S+ --profile developer --approve .*)$", bare.stderr.strip()
        ),
    ]
    stand_in = tmp_path / "bin" / "rho-agent"  # a rho-agent that prints its arguments
    stand_in.parent.mkdir()
    stand_in.write_text('#!/bin/sh\nprintf "%s\\n" "$@"\n')
    stand_in.chmod(0o755)
    env = {"PATH": f"{stand_in.parent}:/usr/bin:/bin"}
    for found in pasted:
        assert found is not None, (first.stderr, bare.stderr)
        ran = subprocess.run(
            ["sh", "-c", found.group(1)], cwd=work, env=env, capture_output=True, text=True
        )
        # with the profile the resume is refused without (a stored developer)
        words = ["--resume", session_id, *DEV, "--approve", f"{hostile}@{digest}"]
        assert ran.stdout.splitlines() == words, (found.group(1), ran)
        assert not (work / "pwned").exists()


def test_an_approval_of_a_call_moved_to_another_directory_is_refused(tmp_path: Path) -> None:
    """Before, the digest covered the tool and its arguments only: a writer of the session's
    stored config.yaml moved working_dir to work/sub (inside the workspace, so resuming took
    it) and the approved relative ``touch here.txt`` ran there. Now the digest covers where
    the call runs, and the session checks it against its own working directory."""
    work, home = tmp_path / "work", tmp_path / "home"
    (work / "sub").mkdir(parents=True)
    result = rho(*("-m", "demo", *DEV, "--json", "run `touch here.txt`"), cwd=work, home=home)
    assert result.returncode == 4, result.stderr
    final = json.loads(result.stdout.splitlines()[-1])
    session_id, (pending,) = str(final["session_id"]), final["pending"]
    in_work = os.path.realpath(work)
    assert pending["working_dir"] == in_work  # shown with the call, and digested with it
    assert pending["digest"] == call_digest("bash", pending["arguments"], place=in_work)
    assert pending["digest"] != call_digest("bash", pending["arguments"])
    config = home / "rho" / "sessions" / session_id / "config.yaml"
    text = config.read_text(encoding="utf-8")
    assert f"working_dir: {in_work}" in text
    config.write_text(text.replace(in_work, f"{in_work}/sub"), encoding="utf-8")
    before = _kinds(home, session_id)

    named = f"demo_1@{pending['digest']}"
    refused = rho("--resume", session_id, *DEV, "--approve", named, cwd=work, home=home)
    assert refused.returncode == 1, refused.stderr
    assert "tool call 'demo_1' (bash " in refused.stderr
    assert f"asked about to run in {in_work}, but the session now runs it in {in_work}/sub" in (
        refused.stderr
    )
    assert "the directory changed" in refused.stderr
    assert "still waits" in refused.stderr
    assert not (work / "sub" / "here.txt").exists()
    assert not (work / "here.txt").exists()
    assert _kinds(home, session_id) == before  # nothing answered, nothing ran

    config.write_text(text, encoding="utf-8")  # the session as it was asked about: approved
    done = rho("--resume", session_id, *DEV, "--approve", named, cwd=work, home=home)
    assert done.returncode == 0, done.stderr
    assert (work / "here.txt").exists()
    assert not (work / "sub" / "here.txt").exists()


def test_a_delegate_call_moved_to_another_directory_is_refused(tmp_path: Path) -> None:
    """A delegate call's approval approves its sub-agent's call, which runs where the parent
    runs. Before, the parent recorded no place for its delegate call: a writer of the parent's
    stored config.yaml moved working_dir to work/sub and the approved write ran there."""
    work, home = tmp_path / "work", tmp_path / "home"
    (work / "sub").mkdir(parents=True)
    with LoopbackServer(DELEGATION) as server:
        parent, child, named = _delegated(work, home, server)
        config = home / "rho" / "sessions" / parent / "config.yaml"
        text = config.read_text(encoding="utf-8")
        in_work = os.path.realpath(work)
        config.write_text(text.replace(in_work, f"{in_work}/sub"), encoding="utf-8")
        # and where the sub-agent's own trace says it was asked (its check passes then)
        _rewrite(home, child, f'"place":"{in_work}"', f'"place":"{in_work}/sub"')
        refused = rho(
            *("--resume", parent, *DEV, "--base-url", server.base_url, "--approve", named),
            cwd=work,
            home=home,
        )
    assert refused.returncode == 1, refused.stderr
    assert f"asked about to run in {in_work}, but the session now runs it in {in_work}/sub" in (
        refused.stderr
    )
    assert not (work / "sub" / "note.txt").exists()
    assert not (work / "note.txt").exists()
