"""A session directory does not lift the resumer's budget: a stored ``budget:`` (or none) is
held to the budget the user or operator runs with now, limit by limit, the tighter winning.
Before, ``--resume`` (and a runtime's or a worker's resume) ran a crafted session under its
stored budget, so ``budget: {}`` spent without the cap the resumer's ``--config`` set."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import yaml
from cli_support import rho

from rho_domain.config import Budget
from rho_entry.resume_limits import tighter_budget


def craft(home: Path, workspace: Path, sid: str, **config: Any) -> str:
    directory = home / "rho" / "sessions" / sid
    directory.mkdir(parents=True)
    data = {"model": "demo", "working_dir": str(workspace), **config}
    (directory / "config.yaml").write_text(yaml.safe_dump(data))
    (directory / "trace.jsonl").write_text("")
    meta = {
        "id": sid,
        "status": "completed",
        "created_at": time.time(),
        "updated_at": time.time(),
        "model": "demo",
        "profile": "readonly",
        "working_dir": str(workspace),
    }
    (directory / "meta.json").write_text(json.dumps(meta))
    return sid


def test_a_stored_session_without_a_budget_runs_under_the_resumers(tmp_path: Path) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    (work / "README.md").write_text("# Sample\n")
    config = tmp_path / "cfg.yaml"
    config.write_text(yaml.safe_dump({"model": "demo", "budget": {"max_tool_calls": 1}}))
    for sid, stored in (("c0ffee0000c1", {}), ("c0ffee0000c2", {"max_tool_calls": 1000})):
        craft(home, work, sid, budget=stored)
        result = rho("--config", str(config), "--resume", sid, "hello", cwd=work, home=home)
        assert result.returncode == 3, result.stdout + result.stderr  # ran to 0 before
        assert "budget reached: 1 tool calls of 1 allowed for this run" in result.stderr


def test_a_stored_budget_is_kept_where_the_resumer_sets_none(tmp_path: Path) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    (work / "README.md").write_text("# Sample\n")
    sid = craft(home, work, "c0ffee0000c3", budget={"max_tool_calls": 1})
    result = rho("--resume", sid, "hello", cwd=work, home=home)
    assert result.returncode == 3, result.stdout + result.stderr
    assert "budget reached: 1 tool calls of 1 allowed for this run" in result.stderr


def test_the_tighter_limit_wins_each_limit() -> None:
    stored = Budget(max_tool_calls=5, max_cost_usd=None, session_max_turns=50)
    mine = Budget(max_tool_calls=10, max_cost_usd=2.0, max_wall_seconds=60.0)
    assert tighter_budget(stored, mine) == Budget(
        max_tool_calls=5, max_cost_usd=2.0, max_wall_seconds=60.0, session_max_turns=50
    )
    assert tighter_budget(stored, Budget()) == stored
