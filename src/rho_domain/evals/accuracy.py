"""Execution accuracy as BIRD defines it, and the summary of a run.

BIRD's evaluator runs the predicted and the gold query on the question's database and scores
1 when ``set(predicted rows) == set(gold rows)``, else 0. So row order and duplicate rows do
not matter, column order does (rows are tuples), NULL equals NULL (Python's ``None``), and
values compare exactly as the driver returns them (``1`` equals ``1.0``, ``0.1 + 0.2`` does
not equal ``0.3``, ``'1'`` does not equal ``1``). A query that fails or runs past the time
limit scores 0, whichever of the two it is: a gold query that times out makes the question
wrong, as in BIRD, and ``QuestionResult.error`` says so.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import attrs

from rho_domain.evals.bird import DIFFICULTIES, Difficulty
from rho_domain.value_methods import value_eq, value_hash, value_repr

Row = tuple[Any, ...]


@attrs.frozen(kw_only=True)
class QueryOutcome:
    """What running one query gave: its rows, or why there are none."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    rows: tuple[Row, ...] | None = None
    error: str | None = None
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        """True when the query ran to the end."""
        return self.rows is not None and self.error is None and not self.timed_out


def execution_match(predicted: QueryOutcome, gold: QueryOutcome) -> bool:
    """BIRD's execution accuracy for one question: both ran, and as sets their rows are equal."""
    if predicted.rows is None or gold.rows is None or not (predicted.ok and gold.ok):
        return False
    return set(predicted.rows) == set(gold.rows)


def why_wrong(predicted: QueryOutcome | None, gold: QueryOutcome) -> str | None:
    """A short reason for a 0 that is not a plain mismatch (None when both ran)."""
    if not gold.ok:
        return "gold query timed out" if gold.timed_out else f"gold query failed: {gold.error}"
    if predicted is None:
        return "no SQL submitted"
    if predicted.timed_out:
        return "predicted query timed out"
    if predicted.error is not None:
        return f"predicted query failed: {predicted.error}"
    return None


@attrs.frozen(kw_only=True)
class QuestionResult:
    """One line of the results file.

    ``status`` is how the agent's run ended (``completed``, ``max_turns``, ``error``, ...);
    ``error`` why the question scored 0 when it is not a plain mismatch; ``wall_seconds`` the
    time from starting the session to the verdict.
    """

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    question_id: int
    db_id: str
    difficulty: Difficulty
    session_id: str
    status: str
    correct: bool
    predicted_sql: str | None
    error: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    wall_seconds: float = 0.0


@attrs.frozen(kw_only=True)
class SummaryRow:
    """Totals of one difficulty (or of all: ``label`` is ``total``)."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    label: str
    count: int = 0
    correct: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    wall_seconds: float = 0.0

    @property
    def accuracy(self) -> float:
        """Percentage correct (0 when there are no questions)."""
        return 100.0 * self.correct / self.count if self.count else 0.0

    def add(self, result: QuestionResult) -> SummaryRow:
        """This row with one more result counted."""
        cost = self.cost_usd
        if result.cost_usd is not None:
            cost = (cost or 0.0) + result.cost_usd
        return attrs.evolve(
            self,
            count=self.count + 1,
            correct=self.correct + int(result.correct),
            input_tokens=self.input_tokens + result.input_tokens,
            output_tokens=self.output_tokens + result.output_tokens,
            cost_usd=cost,
            wall_seconds=self.wall_seconds + result.wall_seconds,
        )


@attrs.frozen(kw_only=True)
class Summary:
    """One row per difficulty (in BIRD's order) and the total."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    rows: tuple[SummaryRow, ...]
    total: SummaryRow


def summarize(results: Iterable[QuestionResult]) -> Summary:
    """Count results by difficulty; every difficulty has a row, even with no questions."""
    rows = {d: SummaryRow(label=d) for d in DIFFICULTIES}
    total = SummaryRow(label="total")
    for result in results:
        rows[result.difficulty] = rows[result.difficulty].add(result)
        total = total.add(result)
    return Summary(rows=tuple(rows.values()), total=total)


_HEADER = (
    f"{'difficulty':<12} {'count':>6} {'correct':>8} {'accuracy':>9} "
    f"{'tokens in':>10} {'tokens out':>11} {'cost USD':>9} {'wall s':>8}"
)


def format_summary(summary: Summary) -> str:
    """The summary as a fixed-width table (no trailing newline); unknown cost is ``-``."""
    lines = [_HEADER]
    for row in (*summary.rows, summary.total):
        cost = "-" if row.cost_usd is None else f"{row.cost_usd:.4f}"
        lines.append(
            f"{row.label:<12} {row.count:>6} {row.correct:>8} {row.accuracy:>8.2f}% "
            f"{row.input_tokens:>10} {row.output_tokens:>11} {cost:>9} {row.wall_seconds:>8.1f}"
        )
    return "\n".join(lines)
