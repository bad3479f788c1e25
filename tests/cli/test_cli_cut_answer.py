"""An answer the server stopped at its output limit says so. A ``finish_reason: length``
(Anthropic's ``max_tokens``) ended the run ``completed``, exit 0, with the cut text printed as
the whole answer and not a word on the terminal; only ``llm_end`` in the trace held it. So did
one a safety filter stopped (``content_filter``, Anthropic's ``refusal``) and one Anthropic
paused (``pause_turn``), after 0fb2739 had said the output limit alone."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_support import rho

from rho_adapters.fakes.loopback import LoopbackServer
from rho_adapters.fakes.wire import text_reply
from rho_adapters.model.anthropic_read import Assembler
from rho_domain.model import StreamFinished


def _run(tmp_path: Path, reason: str) -> tuple[int, str, str]:
    with LoopbackServer([text_reply("The three causes are: first, th", finish_reason=reason)]) as s:
        done = rho("--base-url", s.base_url, "-m", "m", "why?", cwd=tmp_path, home=tmp_path)
    return done.returncode, done.stdout, done.stderr


def test_an_answer_cut_at_the_output_limit_is_said_on_stderr(tmp_path: Path) -> None:
    code, out, err = _run(tmp_path, "length")
    assert code == 0
    assert out == "The three causes are: first, th\n"  # the text the server sent, kept
    assert "the answer stopped at the model's output limit (finish_reason length)" in err
    assert "max_output_tokens" in err


def test_a_whole_answer_says_nothing_of_the_kind(tmp_path: Path) -> None:
    code, _, err = _run(tmp_path, "stop")
    assert code == 0
    assert "output limit" not in err


@pytest.mark.parametrize(
    ("reason", "said"),
    [
        ("content_filter", "the server's safety filter stopped the answer"),
        ("pause_turn", "the server paused a long turn"),
    ],
)
def test_an_answer_filtered_or_paused_is_said_on_stderr(
    tmp_path: Path, reason: str, said: str
) -> None:
    code, out, err = _run(tmp_path, reason)
    assert code == 0
    assert out == "The three causes are: first, th\n"
    assert said in err
    assert f"{reason}" in err


@pytest.mark.parametrize(
    ("stop_reason", "finish"), [("refusal", "content_filter"), ("pause_turn", "pause_turn")]
)
def test_anthropics_endings_reach_the_names_the_terminal_says(
    stop_reason: str, finish: str
) -> None:
    assembler = Assembler()
    assembler.feed(
        "message_delta", {"type": "message_delta", "delta": {"stop_reason": stop_reason}}
    )
    assert StreamFinished(finish) in assembler.finish()
