"""A session's verdict and its handoff's name, read as the continuum loop reads them."""

from __future__ import annotations

import pytest

from rho_domain.continuum import (
    ContinuumState,
    handoff_name,
    latest_handoff,
    next_handoff_number,
    read_answer,
    safe_slug,
)


@pytest.mark.parametrize(
    ("slug", "safe"),
    [
        ("../../x", "x"),
        ("..", ""),
        ("/etc/passwd", "etc-passwd"),
        ("Add Login Form!", "add-login-form"),
        ("a\\..\\b", "a-b"),
        ("é" * 5, ""),
        ("x" * 100, "x" * 60),
    ],
)
def test_a_slug_never_leaves_the_handoffs_directory(slug: str, safe: str) -> None:
    assert safe_slug(slug) == safe
    assert "/" not in handoff_name(7, safe_slug(slug), 3)


def test_verdicts_need_a_line_of_their_own() -> None:
    assert read_answer("done\n  PROJECT COMPLETE  ").verdict == "complete"
    assert read_answer("NEEDS_INPUT\nPROJECT COMPLETE").verdict == "complete"
    assert read_answer("the PROJECT COMPLETE is near").verdict == "handoff"
    assert read_answer("why?\nNEEDS_INPUT").verdict == "needs_input"
    answer = read_answer("summary\nHANDOFF: Next Step\nthe document")
    assert (answer.slug, answer.document) == ("next-step", "the document")
    assert read_answer("just text").document == "just text"
    assert handoff_name(12, "", 4) == "012-session-4.md"


def test_numbering_goes_past_files_and_the_recorded_number() -> None:
    names = ["001-a.md", "003-c.md", "notes.txt", "1000-big.md"]
    assert latest_handoff(names) == "1000-big.md"
    assert next_handoff_number(["001-a.md"], 5) == 6
    assert next_handoff_number([], 0) == 1


def test_the_state_round_trips_and_a_bad_one_says_what_is_wrong() -> None:
    state = ContinuumState(run_id="r", config={"max_sessions": 3}, session_count=2)
    assert ContinuumState.from_dict(state.to_dict()) == state
    with pytest.raises(ValueError, match="format 1"):
        ContinuumState.from_dict({"format": 2, "run_id": "r"})
    with pytest.raises(ValueError, match="session_count must be a whole number"):
        ContinuumState.from_dict({**state.to_dict(), "session_count": -1})
    # a hand-edited run id: a path, an escape sequence for the terminal, nothing, a number
    for run_id in ("../x", "a/b", "x\x1b[2J", "", 7):
        with pytest.raises(ValueError, match="run_id must be 1-64 letters, digits"):
            ContinuumState.from_dict({**state.to_dict(), "run_id": run_id})
    with pytest.raises(ValueError, match="status must be one of"):
        ContinuumState.from_dict({**state.to_dict(), "status": "done"})
