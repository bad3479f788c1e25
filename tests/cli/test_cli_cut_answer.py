"""An answer the server stopped at its output limit says so. A ``finish_reason: length``
(Anthropic's ``max_tokens``) ended the run ``completed``, exit 0, with the cut text printed as
the whole answer and not a word on the terminal; only ``llm_end`` in the trace held it. So did
one a safety filter stopped (``content_filter``, Anthropic's ``refusal``) and one Anthropic
paused (``pause_turn``), after 0fb2739 had said the output limit alone."""

from __future__ import annotations

import io
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


def test_an_ending_the_terminal_does_not_know_is_said_by_its_name() -> None:
    """Before, only length, content_filter and pause_turn were said: vLLM's ``abort``,
    Mistral's ``error`` or ``model_length``, or any server's own word ended the run completed,
    exit 0, the text printed as the whole answer and nothing on the terminal."""
    from rho_domain import events as ev
    from rho_domain.messages import Usage
    from rho_entry.cli.render import TerminalRenderer

    def said(reason: str | None) -> str:
        err = io.StringIO()
        renderer = TerminalRenderer(out=io.StringIO(), err=err)
        renderer(
            ev.LLMEnded(
                at=1.0, model="m", call_index=1, usage=Usage(), finish_reason=reason, duration=0.1
            )
        )
        return err.getvalue()

    for reason in ("abort", "error", "model_length", "x" * 100 + "\x1b[2J"):
        shown = repr(reason) if len(reason) < 60 else repr("x" * 60 + "...")
        assert said(reason) == (
            f"warning: the server ended the answer with finish_reason {shown}, not one that "
            "means a whole answer (stop, tool_calls): its text may be cut or empty; ask it to "
            "go on, or see the server's log\n"
        )
    for whole in ("stop", "tool_calls", "end_turn", "eos_token", None):
        assert said(whole) == ""
    assert said("length").startswith("warning: the answer stopped at the model's output limit")


def test_calls_not_run_for_a_cut_answer_are_said_on_the_terminal() -> None:
    """An answer stopped at the output limit inside its last call's arguments runs none of its
    calls; those never start, so the terminal showed no line of them, only the length
    warning's "may be cut": a user asking for a file could not tell it was not written."""
    from rho_domain import events as ev
    from rho_domain.messages import ToolResultMessage
    from rho_domain.not_run import CUT_AT_LIMIT
    from rho_entry.cli.render import TerminalRenderer

    err = io.StringIO()
    renderer = TerminalRenderer(out=io.StringIO(), err=err)
    for call_id, tool in (("c1", "read"), ("c2", "write")):
        result = ToolResultMessage(
            call_id=call_id, tool_name=tool, content=CUT_AT_LIMIT, is_error=True
        )
        renderer(ev.MessageAdded(at=1.0, message=result))
    assert err.getvalue().splitlines() == [
        f"told the model: its {tool} call was not run: the answer stopped at the output "
        "limit inside its last call's arguments; make smaller calls"
        for tool in ("read", "write")
    ]
