"""A session home that fills up part-way through a real run (a tool of the run fills its
small tmpfs): the store's next write that finds no room fails the run with an error that
names the session's directory and says what to do, exit 1, and the run's end is recorded
all the same: the store's reserve (``store/reserve.py``), let go by that failed write, holds
the events it carried, the error, ``run_end`` and meta.json's ``error``. Once space is freed
``--resume`` continues. Before the reserve, the end was the write that failed: meta.json
said ``running``, what listed the session said so until its holder was found gone (stale),
and the failed write's events were lost. A home turned read-only the same way cannot be
had: Linux refuses to remount read-only a file system with a file open for writing (the
trace), "mount point is busy". Skipped where mounting is not permitted (not root)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_support import clean_env
from program_zygote import run

from rho_adapters.fakes.loopback import LoopbackServer
from rho_adapters.fakes.wire import call, text_reply, tool_reply

_VARIANTS = {"full": ("head -c 2000000 /dev/zero > fill", "free space on the disk that holds")}


@pytest.fixture
def homes(tmp_path: Path) -> Iterator[dict[str, Path]]:
    mounted = {}
    try:
        for name in _VARIANTS:
            home = tmp_path / name
            home.mkdir()
            done = subprocess.run(
                ["mount", "-t", "tmpfs", "-o", "size=300k", "tmpfs", str(home)],
                capture_output=True,
                check=False,
            )
            if done.returncode != 0:
                pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
            mounted[name] = home
        yield mounted
    finally:
        for home in mounted.values():
            subprocess.run(["umount", "--lazy", str(home)], check=False)


def test_a_home_full_midrun_says_what_to_do_and_resume_continues(homes: dict[str, Path]) -> None:
    for name, (command, fix) in _VARIANTS.items():
        home = homes[name]
        # the second call's output (two copies of 9,000 bytes) needs pages the disk has not
        replies = [
            tool_reply(call("bash", {"command": command})),
            tool_reply(call("bash", {"command": "head -c 9000 /dev/zero | tr '\\0' x"})),
        ]
        with LoopbackServer([*replies, text_reply("went on")]) as server:
            argv = [sys.executable, "-m", "rho_entry", "--base-url", server.base_url]
            argv += ["-m", "fake-model", "--json", "--profile", "developer"]
            # forked from the CLI's zygote: the interpreter's start is not what this tests
            done = run(
                "rho", [*argv, "-y", "go"], cwd=home, env=clean_env(home), text=True, timeout=60
            )
            (trace,) = (home / "rho" / "sessions").glob("*/trace.jsonl")
            session = trace.parent
            events = [json.loads(line) for line in trace.read_text().splitlines()]
            ends = [e["call_id"] for e in events if e["kind"] == "tool_end"]
            assert (done.returncode, len(ends)) == (1, 2), (name, done.stderr)
            assert (events[-1]["kind"], events[-1]["status"]) == ("run_end", "error"), name
            meta = json.loads((session / "meta.json").read_text())
            assert (meta["status"], meta["pid"]) == ("error", None), name
            said = json.loads(done.stdout.splitlines()[-1])["error"]
            assert "none of its 1 events was written (to be written with the run's end" in said
            # corners25: the store's command knows no profile; --resume refuses a developer
            # session without it ("pass --profile developer explicitly"): the CLI adds it
            resume = f"`rho-agent --resume {session.name} --profile developer`"
            assert f"{fix} {session}, then {resume} continues" in said
            (home / "fill").unlink()  # fixed: the space freed
            again = run(
                "rho", [*argv, "--resume", session.name, "go on"],
                cwd=home, env=clean_env(home), text=True, timeout=60,
            )  # fmt: skip
            assert again.returncode == 0, (name, again.stderr)
            assert json.loads(again.stdout.splitlines()[-1])["text"] == "went on", name
