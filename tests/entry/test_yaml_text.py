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
