"""Anchor item 18 (the reference's monitor read meta.json's status only: a crashed session
stayed ``running``), re-tried on a process killed in a long model call: ``monitor ps`` says
``stale``, and its elapsed time and ``--list``'s last activity are the time the process lived
(its last heartbeat), not the time of its last event, which a stalled model call (or a long
tool call) does not move."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from cli_support import clean_env, rho

from rho_adapters.fakes.loopback import LoopbackServer
from rho_adapters.fakes.wire import stall, text_reply


def _meta(home: Path) -> dict[str, object]:
    (session,) = (home / "rho" / "sessions").iterdir()
    data = json.loads((session / "meta.json").read_text())
    assert isinstance(data, dict)
    return data


def test_a_killed_session_is_stale_with_the_time_it_lived(tmp_path: Path) -> None:
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    answer = text_reply("slow words here", faults=(stall(after=1, seconds=60),))
    with LoopbackServer([answer]) as server:
        child = subprocess.Popen(
            [sys.executable, "-m", "rho_entry", "--base-url", server.base_url, "-m", "m",
             "--timeout", "120", "go"],
            cwd=work, env=clean_env(home, OPENAI_API_KEY="sk-test"),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + 60
            # heartbeats (one every 2 s) 2 s past the session's making and its last event: it
            # lived >= 2 s, and its last event (the model call's start; how long that took
            # depends on the machine's load) was at least one beat before
            while True:
                assert time.monotonic() < deadline, "no heartbeat seen"
                time.sleep(0.2)
                with_meta = (home / "rho" / "sessions").exists() and any(
                    (d / "meta.json").exists() for d in (home / "rho" / "sessions").iterdir()
                )
                if not with_meta:
                    continue
                meta = _meta(home)
                beat, created = meta.get("heartbeat"), meta["created_at"]
                last_event = meta.get("updated_at")
                if (
                    isinstance(beat, float)
                    and isinstance(created, float)
                    and isinstance(last_event, float)
                    and beat > max(created, last_event) + 2
                ):
                    break
            os.kill(child.pid, signal.SIGKILL)
            child.wait(30)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
    updated = _meta(home)["updated_at"]
    assert isinstance(updated, float)
    assert updated == last_event  # no event since the model call began: beats never move it
    listed = rho("monitor", "ps", "--json", cwd=work, home=home)
    assert listed.returncode == 0, listed.stderr
    (row,) = json.loads(listed.stdout)
    assert (row["status"], row["liveness"]) == ("running", "stale")
    assert row["elapsed_seconds"] >= 2.0  # was the 0.05 s from creation to its last event
    assert row["updated_at"] == beat
