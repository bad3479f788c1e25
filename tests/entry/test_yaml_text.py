"""``load_yaml``: the configuration's YAML reader reads what ``yaml.safe_load`` reads, and as
safely (libyaml's parser when present; the values come from the same safe constructor)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from rho_entry.config.yaml_text import load_yaml

SHIPPED = Path(__file__).parents[2] / "src" / "rho_entry" / "config"


@pytest.mark.parametrize(
    "text",
    [
        "",
        "version: 1\nmodels:\n  m: {input: 0.5, output: 1.5, taken: 2026-01-31}\n",
        "a: yes\nb: off\nc: 0o17\nd: 1_000\ne: .inf\nf: ~\ng: '007'\nh: [1, 2.5, x]\n",
        "key: |\n  two\n  lines\nother: >\n  folded\n  text\n",
        "anchors: &a {x: 1}\nagain: *a\nünïcødé: ✓\n",
    ],
)
def test_it_reads_what_safe_load_reads(text: str) -> None:
    assert load_yaml(text) == yaml.safe_load(text)


def test_the_shipped_yaml_files_read_the_same() -> None:
    files = sorted(SHIPPED.rglob("*.yaml")) + sorted(SHIPPED.rglob("*.md"))
    assert files, SHIPPED
    for path in files:
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".md":  # a prompt template: its frontmatter
            if not text.startswith("---"):
                continue
            text = text.split("---")[1]
        assert load_yaml(text) == yaml.safe_load(text), path


@pytest.mark.parametrize(
    "text", ["a: !!python/object/apply:os.getcwd []\n", "a: [1, 2\n", "a: b: c\n"]
)
def test_unsafe_tags_and_bad_syntax_are_yaml_errors(text: str) -> None:
    with pytest.raises(yaml.YAMLError):
        load_yaml(text)


@pytest.mark.parametrize(
    ("text", "key", "lines"),
    [
        ("max_turns: 3\nmodel: m\nmax_turns: 100\n", "'max_turns'", (1, 3)),
        ("budget:\n  max_cost_usd: 1\n  max_cost_usd: 9\n", "'max_cost_usd'", (2, 3)),
        ("stream: yes\nstream: false\n", "'stream'", (1, 2)),
        ("yes: 1\ntrue: 2\n", "True", (1, 2)),  # two spellings of one key
    ],
)
def test_a_key_given_twice_in_a_mapping_is_refused_naming_it_and_both_lines(
    text: str, key: str, lines: tuple[int, int]
) -> None:
    """PyYAML keeps the last value without a word; YAML forbids the repetition."""
    with pytest.raises(yaml.YAMLError) as info:
        load_yaml(text)
    message = str(info.value)
    assert f"found the key {key} again (first on line {lines[0]})" in message
    assert f"line {lines[1]}, column" in message


def test_merge_keys_and_equal_keys_in_different_mappings_are_not_duplicates() -> None:
    text = "base: &b {a: 1}\nc:\n  <<: *b\n  a: 2\nl: [{k: 1}, {k: 2}]\n"
    assert load_yaml(text) == {"base": {"a": 1}, "c": {"a": 2}, "l": [{"k": 1}, {"k": 2}]}
