"""The BIRD layout on disk, as published.

::

    DIR/dev.json                              questions (a JSON array; dev.jsonl: one per line)
    DIR/dev_databases/<db_id>/<db_id>.sqlite  one database per db_id

``--split train`` reads ``train.json`` and ``train_databases/`` the same way. A record that
cannot be used (a missing field, a bad JSON line, a database file that is not there) is a
``LoadProblem`` naming the file and what to fix; the other questions run. A missing questions
file, or one that is not JSON at all, is a ConfigError: nothing could run.
"""

from __future__ import annotations

import json
from pathlib import Path

import attrs

from rho_domain.errors import ConfigError
from rho_domain.evals.bird import BirdQuestion, LoadProblem, parse_question_lines, parse_questions
from rho_domain.value_methods import value_eq, value_hash, value_repr
from rho_entry.config.home import expanded


@attrs.frozen(kw_only=True)
class BirdDataset:
    """Questions that can run (each with its database file) and the records that cannot."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    root: Path
    split: str
    questions: tuple[BirdQuestion, ...]
    databases: dict[str, Path]  # db_id -> SQLite file, for every db_id the questions use
    problems: tuple[LoadProblem, ...] = ()

    def database(self, question: BirdQuestion) -> Path:
        """The SQLite file of ``question``'s database."""
        return self.databases[question.db_id]


def questions_file(root: Path, split: str) -> Path:
    """``DIR/<split>.json``, else ``DIR/<split>.jsonl``; ConfigError naming both if neither."""
    for name in (f"{split}.json", f"{split}.jsonl"):
        if (root / name).is_file():
            return root / name
    raise ConfigError(
        f"--data {root}: no {split}.json (nor {split}.jsonl) there; point --data at the "
        f"folder of BIRD's {split} split (it holds {split}.json and {split}_databases/)"
    )


def database_file(root: Path, split: str, db_id: str) -> Path:
    """Where BIRD keeps ``db_id``'s database."""
    return root / f"{split}_databases" / db_id / f"{db_id}.sqlite"


def load_bird(root: Path | str, *, split: str = "dev") -> BirdDataset:
    """Read the questions of ``split`` under ``root`` and find their databases."""
    root = expanded(root)
    if not root.is_dir():
        raise ConfigError(f"--data {root}: not a directory")
    path = questions_file(root, split)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read it ({exc})") from exc
    try:
        if path.suffix == ".jsonl":
            questions, problems = parse_question_lines(text, source=path.name)
        else:
            questions, problems = parse_questions(_decode(text, path), source=path.name)
    except ValueError as exc:
        raise ConfigError(str(exc)) from exc
    kept: list[BirdQuestion] = []
    found: dict[str, Path] = {}
    missing: list[LoadProblem] = []
    for question in questions:
        db = database_file(root, split, question.db_id)
        if question.db_id in found or db.is_file():
            found[question.db_id] = db
            kept.append(question)
            continue
        missing.append(
            LoadProblem(
                where=f"{path.name}: question {question.question_id}",
                message=f"database {question.db_id!r} is missing: expected {db}",
                question_id=question.question_id,
            )
        )
    return BirdDataset(
        root=root,
        split=split,
        questions=tuple(kept),
        databases=found,
        problems=(*problems, *missing),
    )


def _decode(text: str, path: Path) -> object:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{path}: not JSON at line {exc.lineno}, column {exc.colno} ({exc.msg}); BIRD's "
            f"questions file is one JSON array (use {path.stem}.jsonl for one record per line)"
        ) from exc
    except RecursionError:  # legal JSON nested past the parser: no questions file is
        raise ConfigError(
            f"{path}: nested too deeply to read; BIRD's questions file is one JSON array of "
            "flat records"
        ) from None
