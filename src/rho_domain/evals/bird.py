"""BIRD questions: the published record, parsed with errors that name what to fix.

BIRD's ``dev.json`` is a JSON array of objects with ``question_id``, ``db_id``, ``question``,
``evidence``, ``SQL`` and ``difficulty`` (``simple``, ``moderate`` or ``challenging``). A
record that lacks a field, or has one of the wrong type, is reported as a ``LoadProblem``
(where, what) and skipped; the other questions still run. The same records may come one per
line (JSONL): a line that is not JSON is a problem of that line only.

``prompt_for`` gives the question to the agent the way BIRD's authors give it to a model: the
question together with its external knowledge ("evidence"), which is part of the task in the
benchmark's standard setting, never a hint to withhold.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import attrs

from rho_domain.value_methods import value_eq, value_hash, value_repr

Difficulty = Literal["simple", "moderate", "challenging"]
DIFFICULTIES: tuple[Difficulty, ...] = ("simple", "moderate", "challenging")
_STRING_FIELDS = ("db_id", "question", "SQL")
_FIELDS = ("question_id", "db_id", "question", "evidence", "SQL", "difficulty")


@attrs.frozen(kw_only=True)
class BirdQuestion:
    """One benchmark question. ``gold_sql`` is the dataset's ``SQL``; the agent never sees it."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    question_id: int
    db_id: str
    question: str
    evidence: str
    gold_sql: str
    difficulty: Difficulty


@attrs.frozen(kw_only=True)
class LoadProblem:
    """A record (or a whole database) that cannot run. ``where`` names the file and the record
    (``dev.json: item 3``, ``dev.jsonl: line 7``); ``message`` says what to fix."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    where: str
    message: str
    question_id: int | None = None

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"


def parse_questions(
    items: Any, *, source: str
) -> tuple[tuple[BirdQuestion, ...], tuple[LoadProblem, ...]]:
    """Questions from a decoded JSON array (BIRD's ``dev.json``), and the records skipped.

    Raises ValueError when ``items`` is not a list at all (nothing could run).
    """
    if not isinstance(items, list):
        raise ValueError(f"{source}: expected a JSON array of questions, got {_kind(items)}")
    questions: list[BirdQuestion] = []
    problems: list[LoadProblem] = []
    for index, item in enumerate(items):
        _take(item, f"{source}: item {index}", questions, problems)
    return _unique(questions, problems, source)


def parse_question_lines(
    text: str, *, source: str
) -> tuple[tuple[BirdQuestion, ...], tuple[LoadProblem, ...]]:
    """Questions from JSONL text (one record per line; blank lines ignored)."""
    questions: list[BirdQuestion] = []
    problems: list[LoadProblem] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{source}: line {number}"
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(LoadProblem(where=where, message=f"not JSON ({exc.msg})"))
            continue
        except RecursionError:  # legal JSON nested past the parser: no question is
            problems.append(LoadProblem(where=where, message="nested too deeply to read"))
            continue
        _take(item, where, questions, problems)
    return _unique(questions, problems, source)


def _take(item: Any, where: str, into: list[BirdQuestion], problems: list[LoadProblem]) -> None:
    try:
        into.append(question_from(item))
    except ValueError as exc:
        qid = item.get("question_id") if isinstance(item, Mapping) else None
        problems.append(
            LoadProblem(where=where, message=str(exc), question_id=qid if _is_int(qid) else None)
        )


def select_questions(
    questions: Sequence[BirdQuestion],
    *,
    difficulty: Difficulty | None = None,
    offset: int = 0,
) -> tuple[BirdQuestion, ...]:
    """The questions an eval may run, in the dataset's order: those of ``difficulty`` (all
    when None) but the first ``offset`` of them (``--limit`` then counts from there)."""
    chosen = [q for q in questions if difficulty is None or q.difficulty == difficulty]
    return tuple(chosen[offset:])


def question_from(item: Any) -> BirdQuestion:
    """One record as a BirdQuestion; ValueError names the field at fault."""
    if not isinstance(item, Mapping):
        raise ValueError(f"expected an object with question_id, db_id, ..., got {_kind(item)}")
    _check_spelling(item)
    qid = item.get("question_id")
    if not isinstance(qid, int) or isinstance(qid, bool):
        raise ValueError(f"question_id: expected an integer, got {_kind(qid)}")
    for key in _STRING_FIELDS:
        if not isinstance(item.get(key), str) or not item[key].strip():
            raise ValueError(f"{key}: expected a non-empty string, got {_kind(item.get(key))}")
    evidence = item.get("evidence", "")
    if not isinstance(evidence, str):
        raise ValueError(f"evidence: expected a string, got {_kind(evidence)}")
    difficulty = item.get("difficulty", "simple")  # BIRD's train split has no difficulty
    if difficulty not in DIFFICULTIES:
        raise ValueError(f"difficulty: {difficulty!r} is not one of {', '.join(DIFFICULTIES)}")
    return BirdQuestion(
        question_id=qid,
        db_id=item["db_id"],
        question=item["question"],
        evidence=evidence,
        gold_sql=item["SQL"],
        difficulty=difficulty,
    )


def _check_spelling(item: Mapping[Any, Any]) -> None:
    """ValueError for a key that is a field's name misspelt (``questoin``, ``sql``,
    ``dificulty``) while that field is absent: an optional one would otherwise be silently
    left out (no evidence in the prompt, every question counted ``simple``). Other unknown
    keys are left alone: a dataset may carry more than BIRD's fields."""
    lowered = {name.lower(): name for name in _FIELDS}
    for key in item:
        if not isinstance(key, str) or key in _FIELDS:
            continue
        close = difflib.get_close_matches(key.lower(), list(lowered), n=1, cutoff=0.75)
        if close and lowered[close[0]] not in item:
            meant = lowered[close[0]]
            raise ValueError(f"{key}: no field of a BIRD record; did you mean {meant!r}?")


def _unique(
    questions: list[BirdQuestion], problems: list[LoadProblem], source: str
) -> tuple[tuple[BirdQuestion, ...], tuple[LoadProblem, ...]]:
    """A question id seen twice keeps its first record: results are keyed by id."""
    seen: set[int] = set()
    kept: list[BirdQuestion] = []
    for question in questions:
        if question.question_id in seen:
            problems.append(
                LoadProblem(
                    where=source,
                    message=f"question_id {question.question_id} appears twice; "
                    "the first record is used",
                    question_id=question.question_id,
                )
            )
            continue
        seen.add(question.question_id)
        kept.append(question)
    return tuple(kept), tuple(problems)


def prompt_for(question: BirdQuestion, *, tool: str, alias: str, evidence: bool = True) -> str:
    """The task given to the agent: the question, its evidence (unless ``evidence`` is False:
    the reference's ``--no-evidence``, BIRD's harder setting), and how to answer."""
    lines = [
        f"Answer this question with one SQLite query over the database `{alias}` "
        f"(use the `{tool}` tool to look at its tables and try queries).",
        "",
        f"Question: {question.question}",
    ]
    if evidence and question.evidence.strip():
        lines.append(f"External knowledge: {question.evidence}")
    lines += [
        "",
        "When the query returns exactly what the question asks for (the columns asked for, "
        "nothing more), call `submit_sql` with it. Only the last submitted query is graded, "
        "by running it and comparing its rows with the reference answer's.",
    ]
    return "\n".join(lines)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _kind(value: Any) -> str:
    return "nothing" if value is None else type(value).__name__
