"""A session home that fills up part-way through a real run (a tool of the run fills its
small tmpfs): the run stops at the store's next write with an error that names the
session's directory and says what to do, exit 1; what was written before is kept, and once
space is freed ``--resume`` continues. Before, the error said what failed and stopped there.
A home turned read-only the same way cannot be had: Linux refuses to remount read-only a
file system with a file open for writing (the trace), "mount point is busy". Skipped where
mounting is not permitted (not root)."""

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
        replies = [tool_reply(call("bash", {"command": command})), text_reply("done")]
        with LoopbackServer([*replies, text_reply("went on")]) as server:
            argv = [sys.executable, "-m", "rho_entry", "--base-url", server.base_url]
            argv += ["-m", "fake-model", "--json", "--profile", "developer"]
            # forked from the CLI's zygote: the interpreter's start is not what this tests
            done = run(
                "rho", [*argv, "-y", "go"], cwd=home, env=clean_env(home), text=True, timeout=60
            )
            (trace,) = (home / "rho" / "sessions").glob("*/trace.jsonl")
            session = trace.parent
            kinds = [json.loads(line)["kind"] for line in trace.read_text().splitlines()]
            assert (done.returncode, "tool_end" in kinds) == (1, True), (name, done.stderr)
            assert f"{fix} {session}, then `rho-agent --resume {session.name}` continues" in (
                done.stderr
            ), (name, done.stderr)
            (home / "fill").unlink()  # fixed: the space freed
            again = run(
                "rho", [*argv, "--resume", session.name, "go on"],
                cwd=home, env=clean_env(home), text=True, timeout=60,
            )  # fmt: skip
            assert again.returncode == 0, (name, again.stderr)
            assert json.loads(again.stdout.splitlines()[-1])["text"] == "went on", name
