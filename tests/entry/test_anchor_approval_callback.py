"""Anchor item 5 (the reference ran every tool without approval from its Python API, and its
prompt took any answer but "n" as yes), re-tried on ``session.approval_callback`` answers
that are not a decision.

A callback that passes on what a person typed (``input("approve? ")``) returns ``"n"``; one
that forgot its ``return`` returns None; one that returns a status text returns ``"denied"``.
``bool()`` of the answer approved all three strings: a person who typed "n" had the
command run. Only True (or an ``ApprovalAnswer`` that approves) approves now; anything else
rejects the call, and a warning names what the callback returned.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from rho_adapters.fakes import ScriptedModel, call, text, tools
from rho_domain.messages import ToolResultMessage
from rho_entry import Agent, AgentConfig, Session


async def _run(tmp_path: Path, answer: object) -> tuple[str, list[str]]:
    model = ScriptedModel(
        [tools(call("bash", {"command": "echo ran > ran.txt"}, id="b1")), text("done")]
    )
    agent = Agent(AgentConfig(profile="developer", working_dir=str(tmp_path)))
    session = Session(agent, model=model)
    asked: list[str] = []

    def callback(tool_name: str, args: Mapping[str, Any]) -> Any:
        asked.append(tool_name)
        return answer

    session.approval_callback = callback
    result = await session.run("make the file")
    assert result.status == "completed", result.error
    (content,) = [m.content for m in session.state.messages if isinstance(m, ToolResultMessage)]
    return content, asked


@pytest.mark.parametrize("answer", ["n", "no", "denied", "", None, 1, [True]])
async def test_an_answer_that_is_not_true_rejects_the_call(
    tmp_path: Path, answer: object, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        content, asked = await _run(tmp_path, answer)
    assert asked == ["bash"]
    assert not (tmp_path / "ran.txt").exists()
    assert "rejected by the user" in content
    if answer is not None and not isinstance(answer, bool):
        assert f"approval_callback returned {answer!r}" in caplog.text


async def test_true_approves(tmp_path: Path) -> None:
    content, asked = await _run(tmp_path, True)
    assert asked == ["bash"]
    assert "rejected" not in content
    assert (tmp_path / "ran.txt").read_text() == "ran\n"
