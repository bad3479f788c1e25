"""BIRD's execution accuracy on real SQLite files: what counts as the same answer."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import attrs
import pytest

from rho_adapters.evals import run_for_grading
from rho_domain.evals import QueryOutcome, execution_match, summarize
from rho_domain.evals.accuracy import QuestionResult, why_wrong


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "t.sqlite"
    conn = sqlite3.connect(path)
    conn.executescript(
        """
        CREATE TABLE t (id INTEGER, name TEXT, score REAL);
        INSERT INTO t VALUES (1, 'a', 0.1), (2, 'b', NULL), (3, 'b', 2.0), (4, NULL, 0.3);
        """
    )
    conn.commit()
    conn.close()
    return path


def grade(db: Path, predicted: str, gold: str, *, timeout: float = 5.0) -> bool:
    return execution_match(
        run_for_grading(db, predicted, timeout=timeout), run_for_grading(db, gold, timeout=timeout)
    )


@pytest.mark.parametrize(
    ("predicted", "gold", "same"),
    [
        # row order never matters, even with ORDER BY in one of them
        ("SELECT id FROM t ORDER BY id DESC", "SELECT id FROM t", True),
        # duplicate rows collapse: a set, not a multiset
        ("SELECT name FROM t WHERE name = 'b'", "SELECT DISTINCT name FROM t WHERE name='b'", True),
        (
            "SELECT 'b' UNION ALL SELECT 'b' UNION ALL SELECT 'a'",
            "SELECT 'a' UNION SELECT 'b'",
            True,
        ),
        # column order matters (rows are tuples)
        ("SELECT name, id FROM t", "SELECT id, name FROM t", False),
        # an extra column is a different answer
        ("SELECT id, name FROM t", "SELECT id FROM t", False),
        # NULL equals NULL
        ("SELECT score FROM t WHERE id = 2", "SELECT NULL", True),
        ("SELECT name FROM t WHERE id = 4", "SELECT ''", False),
        # floats compare exactly, as Python does: 2 == 2.0, but 0.1 + 0.2 != 0.3
        ("SELECT 2", "SELECT score FROM t WHERE id = 3", True),
        ("SELECT 0.1 + 0.2", "SELECT 0.3", False),
        ("SELECT ROUND(0.1 + 0.2, 2)", "SELECT 0.3", True),
        # types are not coerced: '1' is not 1
        ("SELECT '1'", "SELECT 1", False),
        # both empty: the same (empty) set
        ("SELECT id FROM t WHERE id > 9", "SELECT name FROM t WHERE 0", True),
    ],
)
def test_results_compare_as_sets_of_rows(db: Path, predicted: str, gold: str, same: bool) -> None:
    assert grade(db, predicted, gold) is same


def test_a_failing_predicted_query_is_wrong_and_says_why(db: Path) -> None:
    predicted = run_for_grading(db, "SELECT nope FROM t", timeout=5)
    gold = run_for_grading(db, "SELECT id FROM t", timeout=5)
    assert not predicted.ok
    assert "no such column: nope" in (predicted.error or "")
    assert execution_match(predicted, gold) is False
    assert why_wrong(predicted, gold) == f"predicted query failed: {predicted.error}"
    assert why_wrong(None, gold) == "no SQL submitted"


RUNAWAY = (
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) "
    "SELECT COUNT(*) FROM n WHERE i < 0"
)


def test_a_gold_query_that_times_out_makes_the_question_wrong(db: Path) -> None:
    gold = run_for_grading(db, RUNAWAY, timeout=0.2)
    assert gold.timed_out
    assert gold.rows is None
    # even the "same" query cannot be right: BIRD scores 0 when the gold query times out
    predicted = run_for_grading(db, "SELECT 1", timeout=5)
    assert execution_match(predicted, gold) is False
    assert why_wrong(predicted, gold) == "gold query timed out"


def test_a_predicted_query_that_times_out_is_wrong(db: Path) -> None:
    predicted = run_for_grading(db, RUNAWAY, timeout=0.2)
    assert predicted.timed_out
    assert why_wrong(predicted, run_for_grading(db, "SELECT 1", timeout=5)) == (
        "predicted query timed out"
    )


@pytest.mark.parametrize(
    "statement",
    [
        "DELETE FROM t",
        "UPDATE t SET id = 0",
        "CREATE TABLE u (x)",
        "CREATE TEMP TABLE u (x)",
        "ATTACH 'other.sqlite' AS other",
        "VACUUM INTO 'copy.sqlite'",
        "SELECT 1; DELETE FROM t",
    ],
)
def test_a_predicted_query_cannot_change_anything(db: Path, statement: str) -> None:
    before = db.read_bytes()
    outcome = run_for_grading(db, statement, timeout=5)
    assert outcome.error is not None
    assert outcome.rows is None
    assert db.read_bytes() == before
    assert not (db.parent / "other.sqlite").exists()
    assert not (db.parent / "copy.sqlite").exists()
    assert run_for_grading(db, "SELECT COUNT(*) FROM t", timeout=5).rows == ((4,),)


def test_a_missing_database_is_an_outcome_not_a_crash(tmp_path: Path) -> None:
    outcome = run_for_grading(tmp_path / "absent.sqlite", "SELECT 1", timeout=5)
    assert outcome.error is not None
    assert "absent.sqlite" in outcome.error


def _result(qid: int, difficulty: str, correct: bool, cost: float | None) -> QuestionResult:
    return QuestionResult(
        question_id=qid,
        db_id="d",
        difficulty=difficulty,  # type: ignore[arg-type]
        session_id=f"s{qid}",
        status="completed",
        correct=correct,
        predicted_sql="SELECT 1",
        input_tokens=10,
        output_tokens=1,
        cost_usd=cost,
        wall_seconds=0.5,
    )


def test_the_summary_counts_by_difficulty() -> None:
    summary = summarize(
        [
            _result(1, "simple", True, None),
            _result(2, "simple", False, 0.25),
            _result(3, "challenging", True, None),
        ]
    )
    rows = {r.label: (r.count, r.correct, r.accuracy, r.cost_usd) for r in summary.rows}
    assert rows == {
        "simple": (2, 1, 50.0, 0.25),
        "moderate": (0, 0, 0.0, None),
        "challenging": (1, 1, 100.0, None),
    }
    total = summary.total
    assert (total.count, total.correct, total.input_tokens, total.wall_seconds) == (3, 2, 30, 1.5)
    assert QueryOutcome(rows=()).ok
    assert not QueryOutcome(error="x").ok


def test_a_progress_line_shows_the_models_sql_in_an_error_escaped(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """SQLite's error quotes the model's SQL (``no such table: <name>``), and ``eval bird``
    printed it in its progress line as it came: a table named with an OSC sequence set the
    terminal's title. Now the line shows it escaped."""
    from rho_entry.cli.eval_console import _Progress

    predicted = run_for_grading(db, 'SELECT * FROM "x\x1b]0;TITLE\x07"', timeout=5)
    assert "\x1b]0;TITLE\x07" in (predicted.error or "")  # what the model's SQL reaches
    gold = run_for_grading(db, "SELECT 1", timeout=5)
    failed = attrs.evolve(_result(7, "simple", False, None), error=why_wrong(predicted, gold))
    _Progress()(failed)
    line = capsys.readouterr().err
    assert "\x1b" not in line, line
    assert "\x07" not in line, line
    assert "no such table: x\\x1b]0;TITLE\\x07" in line
