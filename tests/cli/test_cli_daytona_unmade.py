"""A one-shot whose Daytona sandbox could never be made does not exit 0.

The sandbox is made by the first tool call that needs it. Before, with the API unreachable
(``DAYTONA_API_URL=http://127.0.0.1:9/api``), every tool call failed with "connection to
Daytona failed during sandbox creation", the model answered without them, and the run exited
0 like any completed one: a script could not tell it from a run that did its work.
"""

from __future__ import annotations

from pathlib import Path

from cli_support import rho


def test_an_unreachable_daytona_exits_2_and_says_every_tool_call_failed(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    result = rho(
        "-m", "demo", "--backend", "daytona", "list the files",
        cwd=work, home=tmp_path / "home",
        DAYTONA_API_KEY="k", DAYTONA_API_URL="http://127.0.0.1:9/api",
    )  # fmt: skip
    assert result.returncode == 2, result.stdout + result.stderr  # before: 0
    said = "the daytona sandbox could not be made, so every tool call that needed it failed"
    assert said in result.stderr
    assert "(at http://127.0.0.1:9; the API's URL is DAYTONA_API_URL)" in result.stderr
    assert "Here is what my tool calls showed" in result.stdout  # the answer, as it was
