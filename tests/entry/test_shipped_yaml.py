"""The shipped YAML documents read without yaml (``yaml_text``, ``data/shipped_yaml.json``):
the JSON is current (``python -m rho_entry.config.shipped`` rewrites it), each document reads
as PyYAML reads it, types included, a text that differs in a byte is parsed, and a start that
reads the price table and the default prompt imports no yaml."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
import yaml

from rho_domain.errors import ConfigError
from rho_entry.config.shipped import shipped_texts, snapshot
from rho_entry.config.yaml_text import SHIPPED_FILE, load_yaml, parse_yaml


def _typed(value: Any) -> Any:
    """``value`` with each scalar's type beside it: 1, 1.0 and True compare unequal."""
    if isinstance(value, dict):
        return {_typed(k): _typed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_typed(v) for v in value]
    return (type(value).__name__, value)


def test_the_parsed_documents_are_current() -> None:
    assert SHIPPED_FILE.read_text(encoding="utf-8") == snapshot(), (
        "a shipped YAML document changed: run python -m rho_entry.config.shipped"
    )


@pytest.mark.parametrize("source", sorted(shipped_texts()))
def test_a_shipped_document_reads_as_pyyaml_reads_it(source: str) -> None:
    text = shipped_texts()[source]
    expected = _typed(yaml.safe_load(text))
    assert _typed(load_yaml(text)) == expected
    assert _typed(parse_yaml(text, invalid="x")) == expected
    first = load_yaml(text)
    first.clear()  # what a caller gets is its own
    assert _typed(load_yaml(text)) == expected


def test_a_text_that_differs_is_parsed() -> None:
    text = shipped_texts()["data/prices.yaml"]
    edited = text.replace("output: 10.0", "output: 11", 1)
    assert edited != text
    assert load_yaml(edited) == yaml.safe_load(edited)
    assert load_yaml(edited)["models"]["gpt-5"]["output"] == 11
    with pytest.raises(ConfigError, match=r"^prices: invalid YAML: "):
        parse_yaml(text + "\n  - [", invalid="prices: invalid YAML")


def test_a_start_reads_the_shipped_documents_without_yaml() -> None:
    code = (
        "import sys\n"
        "from rho_entry.config.prices import shipped_prices\n"
        "from rho_entry.config.system_prompt import default_prompt_template\n"
        "print(shipped_prices().lookup('gpt-5-mini') is not None)\n"
        "print(sorted(default_prompt_template(None).vars)[:2])\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('yaml', '_yaml')))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["True", "['capabilities', 'databases']", "[]"]
