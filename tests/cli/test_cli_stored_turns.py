"""A session directory does not lengthen the resumer's runs: a stored ``max_turns`` and
``repeat_limit`` are held to the resumer's, the tighter winning (0: no limit), as the budget
is. Before, ``--resume`` ran under the stored values whatever the user's ``--config`` set:
``max_turns: 0`` (or 1000, or the default 100 a session is stored with) ran past the
``max_turns: 1`` the config gave, ``repeat_limit: 0`` turned off the stuck-loop stop, and a
stored ``tool_output_limit`` sent the model more of each result than the config allows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from cli_support import rho
from test_cli_stored_budget import craft

from rho_adapters.fakes.loopback import LoopbackServer
from rho_adapters.fakes.wire import call, text_reply, tool_reply
from rho_domain.config import AgentConfig
from rho_domain.errors import ConfigError
from rho_entry.resume_limits import tighter_count


def _setup(tmp_path: Path, **config: object) -> tuple[Path, Path, Path]:
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    (work / "README.md").write_text("# Sample\n")
    path = tmp_path / "cfg.yaml"
    path.write_text(yaml.safe_dump({"model": "demo", **config}))
    return home, work, path


def test_a_stored_max_turns_does_not_lift_the_resumers(tmp_path: Path) -> None:
    home, work, config = _setup(tmp_path, max_turns=1)
    for sid, stored in (("c0ffee00f0c1", 0), ("c0ffee00f0c2", 1000), ("c0ffee00f0c3", None)):
        craft(home, work, sid, **({} if stored is None else {"max_turns": stored}))
        result = rho("--config", str(config), "--resume", sid, "hello", cwd=work, home=home)
        assert result.returncode == 3, result.stdout + result.stderr  # ran to 0 before
        assert "stopped: max turns" in result.stderr


def test_the_tighter_limit_wins_either_way(tmp_path: Path) -> None:
    home, work, _ = _setup(tmp_path)
    craft(home, work, "c0ffee00f0c4", max_turns=1)  # the stored limit holds under the default
    result = rho("--resume", "c0ffee00f0c4", "hello", cwd=work, home=home)
    assert result.returncode == 3, result.stdout + result.stderr
    assert "stopped: max turns" in result.stderr
    assert tighter_count(0, 5) == tighter_count(5, 0) == tighter_count(None, 5) == 5
    assert tighter_count(0, 0) == 0
    assert tighter_count(7, 3) == tighter_count(3, 7) == 3


def test_a_stored_repeat_limit_does_not_turn_off_the_stuck_stop(tmp_path: Path) -> None:
    """A model repeating one call: the resumer's repeat_limit: 2 ends the run stuck (exit
    6); a stored repeat_limit: 0 ran it to the model's last answer."""
    home, work, config = _setup(tmp_path, model="fake", repeat_limit=2)
    craft(home, work, "c0ffee00f0c5", model="fake", repeat_limit=0)
    again = [tool_reply(call("bash", {"command": "echo again"}, f"r{n}")) for n in range(4)]
    with LoopbackServer([*again, text_reply("done")]) as server:
        resumed = rho(
            *("--config", str(config), "--base-url", server.base_url),
            *("--resume", "c0ffee00f0c5", "say it again"),
            cwd=work,
            home=home,
        )
    assert resumed.returncode == 6, resumed.stdout + resumed.stderr  # 0 before


def test_a_stored_tool_output_limit_does_not_lift_the_resumers(tmp_path: Path) -> None:
    """The demo model reads README.md: under the resumer's tool_output_limit: 200 the
    result is cut; a stored tool_output_limit: 10,000,000 sent all 40,040 characters."""
    home, work, config = _setup(tmp_path, tool_output_limit=200)
    (work / "README.md").write_text("# Sample\n" + "line of text\n" * 2000)
    sid = craft(home, work, "c0ffee00f0c6", tool_output_limit=10**7)
    result = rho("--config", str(config), "--resume", sid, "hello", cwd=work, home=home)
    assert result.returncode == 0, result.stderr
    trace = home / "rho" / "sessions" / sid / "trace.jsonl"
    ends = [json.loads(line) for line in trace.read_text().splitlines() if '"tool_end"' in line]
    assert ends
    assert max(len(end["content"]) for end in ends) < 1000  # 40,040 before


def test_a_stored_limit_of_none_is_refused_not_taken_as_the_smaller(tmp_path: Path) -> None:
    """0 (or -1) cuts nothing (``truncate_middle``), and was the smaller of the two: a stored
    ``tool_output_limit: 0`` sent all 40,040 characters past the resumer's 200 (the run
    completed, exit 0); a stored ``max_output_tokens: -1`` (llama.cpp's unlimited) won the
    same way. Each is now refused when the config is read, naming the key."""
    home, work, config = _setup(tmp_path, tool_output_limit=200)
    (work / "README.md").write_text("# Sample\n" + "line of text\n" * 2000)
    sid = craft(home, work, "c0ffee00f0c7", tool_output_limit=0)
    result = rho("--config", str(config), "--resume", sid, "hello", cwd=work, home=home)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "tool_output_limit must be a positive integer, not 0" in result.stderr
    with pytest.raises(ConfigError, match="tool_output_limit must be"):
        AgentConfig(tool_output_limit=-1)
    with pytest.raises(ConfigError, match="max_output_tokens must be"):
        AgentConfig(max_output_tokens=-1)
