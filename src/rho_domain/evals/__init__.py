"""Benchmark logic that needs no I/O: BIRD questions, the answer tool, execution accuracy.

Loading files, running sessions and executing SQL for grading live in ``rho_entry.evals`` and
``rho_adapters.evals``; everything here is pure and works on values.
"""

from rho_domain.evals.accuracy import (
    QueryOutcome,
    QuestionResult,
    Summary,
    SummaryRow,
    execution_match,
    format_summary,
    summarize,
)
from rho_domain.evals.bird import (
    DIFFICULTIES,
    BirdQuestion,
    LoadProblem,
    parse_question_lines,
    parse_questions,
    prompt_for,
    select_questions,
)
from rho_domain.evals.submit import SUBMIT_TOOL, SubmitSqlTool, submitted_sql

__all__ = [
    "DIFFICULTIES",
    "SUBMIT_TOOL",
    "BirdQuestion",
    "LoadProblem",
    "QueryOutcome",
    "QuestionResult",
    "SubmitSqlTool",
    "Summary",
    "SummaryRow",
    "execution_match",
    "format_summary",
    "parse_question_lines",
    "parse_questions",
    "prompt_for",
    "select_questions",
    "submitted_sql",
    "summarize",
]
