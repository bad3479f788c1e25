"""A session directory does not lengthen how long the resumer's runs wait: a stored
``tool_timeout`` and the model transport settings (``model_timeout``, its connect timeout,
``model_retries``, ``model_retry_after_cap``) are held to the resumer's, as ``max_turns``
and the budget are. Before, ``--resume`` ran under the stored values whatever the user's
``--config`` set: ``tool_timeout: 100000`` let a command run past the config's 1 s."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from cli_support import rho
from test_cli_stored_budget import craft

from rho_adapters.fakes.loopback import LoopbackServer
from rho_adapters.fakes.wire import call, text_reply, tool_reply
from rho_adapters.model import AnswerLimits, RetryPolicy
from rho_adapters.model._http import Timeouts
from rho_domain.config import AgentConfig
from rho_domain.tools.registry import DEFAULT_TOOL_TIMEOUT
from rho_entry.resume_limits import DEADLINES, held_deadline


def test_a_stored_tool_timeout_does_not_lift_the_resumers(tmp_path: Path) -> None:
    """The model runs a 4 s command: the resumer's tool_timeout: 1 stops it; a stored
    tool_timeout: 100000 let it run to its end ('slept')."""
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    config = tmp_path / "cfg.yaml"
    config.write_text(yaml.safe_dump({"model": "fake", "profile": "eval", "tool_timeout": 1}))
    sid = craft(home, work, "c0ffee00f0d1", model="fake", profile="eval", tool_timeout=10**5)
    slow = tool_reply(call("bash", {"command": "sleep 4; echo slept"}, "r1"))
    with LoopbackServer([slow, text_reply("done")]) as server:
        result = rho(
            *("--config", str(config), "--base-url", server.base_url),
            *("--resume", sid, "go"),
            cwd=work,
            home=home,
        )
    assert result.returncode == 0, result.stdout + result.stderr
    trace = home / "rho" / "sessions" / sid / "trace.jsonl"
    ends = [json.loads(line) for line in trace.read_text().splitlines() if '"tool_end"' in line]
    assert ends, trace.read_text()
    assert "slept" not in ends[0]["content"]  # ran the 4 s before
    assert "timed out" in ends[0]["content"]


def test_the_shorter_wait_wins_and_none_is_the_default() -> None:
    assert held_deadline(10**5, 1.0, 600.0) == 1.0
    assert held_deadline(0.5, 1.0, 600.0) == 0.5  # a stored shorter one is kept
    assert held_deadline(None, 1.0, 600.0) == 1.0
    assert held_deadline(10**5, None, 600.0) is None  # the resumer's default, 600 s
    assert held_deadline(30.0, None, 600.0) == 30.0
    assert held_deadline(100, 2, 2) == 2  # retries: counts alike


def test_the_defaults_are_the_adapters() -> None:
    """DEADLINES says what None means: the tool registry's and the model adapter's."""
    adapters = {
        "tool_timeout": DEFAULT_TOOL_TIMEOUT,
        "model_timeout": Timeouts().idle,
        "model_connect_timeout": Timeouts().connect,
        "model_retries": RetryPolicy().max_retries,
        "model_retry_after_cap": RetryPolicy().max_server_delay,
        "model_answer_timeout": AnswerLimits().max_seconds,
        "model_answer_bytes": AnswerLimits().max_bytes,
    }
    assert dict(DEADLINES) == adapters
    assert all(hasattr(AgentConfig(), field) for field in DEADLINES)


def test_a_stored_service_tier_is_the_resumers(tmp_path: Path) -> None:
    """A stored service_tier: priority (each call billed at the priority price, which the
    cost budget does not know) or flex (a call may wait 900 s instead of 120) was sent as
    stored; the resumer's tier (here none) is sent, unless --service-tier is given again."""
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    config = tmp_path / "cfg.yaml"
    config.write_text(yaml.safe_dump({"model": "fake"}))
    sid = craft(home, work, "c0ffee00f0d2", model="fake", service_tier="priority")
    sent: list[object] = []
    for again in ((), ("--service-tier", "priority")):
        with LoopbackServer([text_reply("done")]) as server:
            result = rho(
                *("--config", str(config), "--base-url", server.base_url, *again),
                *("--resume", sid, "go"),
                cwd=work,
                home=home,
            )
        assert result.returncode == 0, result.stdout + result.stderr
        sent.append(server.requests[0].get("service_tier"))
    assert sent == [None, "priority"]  # ['priority', 'priority'] before


def test_a_stored_session_does_not_lift_the_cap_on_an_answer(tmp_path: Path) -> None:
    """The resumer's max_output_tokens: 50 caps each call; a stored 100000 (or none) sent
    the stored cap (or none) instead."""
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    config = tmp_path / "cfg.yaml"
    config.write_text(yaml.safe_dump({"model": "fake", "max_output_tokens": 50}))
    caps: list[object] = []
    for sid, stored in (("c0ffee00f0d3", 100000), ("c0ffee00f0d4", None), ("c0ffee00f0d5", 9)):
        craft(home, work, sid, model="fake", max_output_tokens=stored)
        with LoopbackServer([text_reply("done")]) as server:
            result = rho(
                *("--config", str(config), "--base-url", server.base_url),
                *("--resume", sid, "go"),
                cwd=work,
                home=home,
            )
        assert result.returncode == 0, result.stdout + result.stderr
        body = server.requests[0]
        caps.append(body.get("max_completion_tokens", body.get("max_tokens")))
    assert caps == [50, 50, 9]  # [100000, None, 9] before
