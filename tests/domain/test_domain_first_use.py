"""``FirstUse``: an expression compiled at its first call, the same pattern after."""

from __future__ import annotations

import re

import pytest

from rho_domain.first_use import FirstUse


def test_compiles_at_the_first_call_and_keeps_the_pattern() -> None:
    expression = FirstUse(r"^a=(\w+)$", re.MULTILINE)
    assert expression.text == r"^a=(\w+)$"
    assert expression._compiled is None  # nothing compiled by the module that names it
    first = expression()
    assert first is expression()
    assert first.flags & re.MULTILINE
    assert first.findall("x\na=1\na=2") == ["1", "2"]


def test_a_bad_expression_fails_at_its_first_use() -> None:
    expression = FirstUse(r"(unclosed")
    with pytest.raises(re.error):
        expression()
