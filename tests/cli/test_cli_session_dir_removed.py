"""A session directory removed (or moved) while its run goes on: the answer is still printed,
and the error names the directory and what happened to it. It said "cannot sync session ID:
No such file or directory", naming no path, after the trace's lines had gone to a file that
no longer had a name. A directory of the same name made meanwhile (or the trace alone removed)
hid it: the run ended 0 without a word, its trace in a nameless file, meta.json alone left."""

from __future__ import annotations

import shutil
import subprocess
import threading
import time
from pathlib import Path

import pytest
from cli_support import rho_process

from rho_adapters.fakes.loopback import LoopbackServer
from rho_adapters.fakes.wire import stall, text_reply


@pytest.mark.parametrize("how", ["removed", "moved", "replaced", "trace-removed"])
def test_the_error_names_the_directory_that_went_away(tmp_path: Path, how: str) -> None:
    sessions = tmp_path / "rho" / "sessions"
    done: list[subprocess.CompletedProcess[str]] = []
    with LoopbackServer([text_reply("the answer", faults=(stall(0, 3.0),))]) as server:
        run = threading.Thread(
            target=lambda: done.append(
                rho_process(
                    "--base-url",
                    server.base_url,
                    "-m",
                    "m",
                    "go",
                    cwd=tmp_path,
                    home=tmp_path,
                    OPENAI_API_KEY="sk-test",
                )
            )
        )
        run.start()
        deadline = time.monotonic() + 30
        while not server.requests and time.monotonic() < deadline:  # the model is answering
            time.sleep(0.05)
        (directory,) = [p.parent for p in sessions.glob("*/trace.jsonl")]
        if how == "removed":
            shutil.rmtree(directory)
        elif how == "moved":
            directory.rename(directory.with_name(directory.name + ".moved"))
        elif how == "replaced":  # an empty directory of the same name: exit 0, trace lost
            shutil.rmtree(directory)
            directory.mkdir()
        else:
            (directory / "trace.jsonl").unlink()
        run.join(60)
    (result,) = done
    assert result.returncode == 1, result.stderr
    assert result.stdout.startswith("the answer"), result.stderr  # printed, not lost
    assert f"its directory {directory} was removed, moved or replaced while it ran" in (
        result.stderr
    )
