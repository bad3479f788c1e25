"""Loading the BIRD layout: malformed records are reported by name and skipped, the rest runs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import attrs
import pytest

from rho_domain.errors import ConfigError
from rho_domain.evals import parse_questions, prompt_for
from rho_entry.evals.bird_data import load_bird
from rho_entry.evals.sample_data import write_sample


@pytest.fixture
def sample(tmp_path: Path) -> Path:
    return write_sample(tmp_path / "bird")


def test_the_sample_is_in_birds_layout(sample: Path) -> None:
    dataset = load_bird(sample)
    assert len(dataset.questions) == 24
    assert dataset.problems == ()
    counts = {
        d: sum(q.difficulty == d for q in dataset.questions)
        for d in ("simple", "moderate", "challenging")
    }
    assert counts == {"simple": 10, "moderate": 9, "challenging": 5}
    assert set(dataset.databases) == {"shop", "school", "flights"}
    assert dataset.databases["shop"] == sample / "dev_databases" / "shop" / "shop.sqlite"
    records = json.loads((sample / "dev.json").read_text())
    assert set(records[0]) == {"question_id", "db_id", "question", "evidence", "SQL", "difficulty"}


def test_a_missing_database_skips_its_questions_only(sample: Path) -> None:
    shutil.rmtree(sample / "dev_databases" / "school")
    dataset = load_bird(sample)
    assert {q.db_id for q in dataset.questions} == {"shop", "flights"}
    assert len(dataset.questions) == 15
    assert len(dataset.problems) == 9
    first = dataset.problems[0]
    assert first.question_id == 10
    assert str(first) == (
        "dev.json: question 10: database 'school' is missing: expected "
        f"{sample / 'dev_databases' / 'school' / 'school.sqlite'}"
    )


def test_bad_records_are_named_and_skipped(sample: Path) -> None:
    records = json.loads((sample / "dev.json").read_text())
    records[1].pop("SQL")
    records[2]["difficulty"] = "hard"
    records[3]["question_id"] = "3"
    records[4] = ["not", "an", "object"]
    records[5]["question_id"] = 0  # a duplicate id
    (sample / "dev.json").write_text(json.dumps(records))
    dataset = load_bird(sample)
    assert [str(p) for p in dataset.problems] == [
        "dev.json: item 1: SQL: expected a non-empty string, got nothing",
        "dev.json: item 2: difficulty: 'hard' is not one of simple, moderate, challenging",
        "dev.json: item 3: question_id: expected an integer, got str",
        "dev.json: item 4: expected an object with question_id, db_id, ..., got list",
        "dev.json: question_id 0 appears twice; the first record is used",
    ]
    assert len(dataset.questions) == 19
    assert dataset.problems[0].question_id == 1


def test_a_misspelt_field_is_named_with_the_field_meant(sample: Path) -> None:
    # A hand-edited or converted dev.json: a required field misspelt said only that the
    # field was missing ("question: expected a non-empty string, got nothing"), and an
    # optional one was silently dropped: no evidence in the prompt, or every question of
    # the file counted "simple" under a misspelt difficulty.
    records = json.loads((sample / "dev.json").read_text())
    records[0]["questoin"] = records[0].pop("question")
    records[1]["sql"] = records[1].pop("SQL")
    records[2]["dificulty"] = records[2].pop("difficulty")
    records[3]["evidance"] = records[3].pop("evidence")
    records[4]["source"] = "bird-mini"  # another key, close to no field: allowed
    (sample / "dev.json").write_text(json.dumps(records))
    dataset = load_bird(sample)
    assert [str(p) for p in dataset.problems] == [
        "dev.json: item 0: questoin: no field of a BIRD record; did you mean 'question'?",
        "dev.json: item 1: sql: no field of a BIRD record; did you mean 'SQL'?",
        "dev.json: item 2: dificulty: no field of a BIRD record; did you mean 'difficulty'?",
        "dev.json: item 3: evidance: no field of a BIRD record; did you mean 'evidence'?",
    ]
    assert 4 in [q.question_id for q in dataset.questions]


def test_a_bad_json_line_in_jsonl_skips_that_line(sample: Path) -> None:
    records = json.loads((sample / "dev.json").read_text())
    lines = [json.dumps(r) for r in records[:4]]
    lines[2] = lines[2][:-5]  # torn
    (sample / "dev.json").unlink()
    (sample / "dev.jsonl").write_text("\n".join(lines) + "\n\n")
    dataset = load_bird(sample)
    assert [q.question_id for q in dataset.questions] == [0, 1, 3]
    (problem,) = dataset.problems
    assert str(problem).startswith("dev.jsonl: line 3: not JSON (")


def test_a_questions_file_that_is_not_json_names_the_place(sample: Path) -> None:
    (sample / "dev.json").write_text('[{"question_id": 1,\n  oops}]')
    with pytest.raises(ConfigError, match=r"dev.json: not JSON at line 2, column 3"):
        load_bird(sample)
    (sample / "dev.json").write_text('{"question_id": 1}')
    with pytest.raises(ConfigError, match="expected a JSON array of questions, got dict"):
        load_bird(sample)


def test_a_wrong_folder_says_what_to_point_at(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not a directory"):
        load_bird(tmp_path / "absent")
    with pytest.raises(ConfigError, match=r"no dev.json \(nor dev.jsonl\) there; point --data"):
        load_bird(tmp_path)
    with pytest.raises(ConfigError, match=r"no train\.json"):
        load_bird(tmp_path, split="train")


def test_the_prompt_gives_the_question_with_its_evidence() -> None:
    (question,), _ = parse_questions(
        [{"question_id": 7, "db_id": "shop", "question": "How many?", "evidence": "many = COUNT(*)",
          "SQL": "SELECT 1", "difficulty": "simple"}],
        source="dev.json",
    )  # fmt: skip
    prompt = prompt_for(question, tool="sqlite", alias="shop")
    assert "Question: How many?\nExternal knowledge: many = COUNT(*)\n" in prompt
    assert "`submit_sql`" in prompt
    assert "`sqlite`" in prompt
    assert "`shop`" in prompt
    assert "SELECT 1" not in prompt  # the gold SQL never reaches the agent
    bare = prompt_for(attrs.evolve(question, evidence=""), tool="sqlite", alias="shop")
    assert "External knowledge" not in bare
