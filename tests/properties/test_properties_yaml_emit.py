"""config.yaml's emitter (``rho_adapters.store.yaml_emit``) against PyYAML, the oracle: for
any tree of what a config holds, ``emit`` writes ``yaml.dump(..., Dumper=CSafeDumper,
sort_keys=False)``'s text byte for byte, and both of PyYAML's safe loaders (libyaml's, which
the store reads with, and the pure-Python one) read it back as the same data, types included
(True is not 1, 1.0 is not 1, "1" is not 1, a nan is a nan)."""

from __future__ import annotations

import math
from typing import Any

import pytest
import yaml
from hypothesis import example, given
from hypothesis import strategies as st

from rho_adapters.store.yaml_emit import emit

# the oracle is libyaml's emitter, as PyYAML's wheels bundle it
pytestmark = pytest.mark.skipif(not yaml.__with_libyaml__, reason="PyYAML without libyaml")

# What YAML 1.1 reads as something else than a string, in the forms PyYAML resolves, and what
# makes a plain scalar mean something else (indicators, comments, breaks, escapes).
TRICKY = [
    *["yes", "Yes", "YES", "no", "No", "NO", "y", "n", "Y", "N", "true", "True", "TRUE"],
    *["false", "False", "on", "ON", "On", "off", "Off", "OFF", "null", "Null", "NULL", "~"],
    *["nUll", "0x1F", "0o17", "017", "0b101", "1_000", "+1", "-1", ".5", "-.5", "1e3"],
    *["1.0e+3", "1.0E-3", "6.02e+23", ".inf", "-.Inf", "+.INF", ".NaN", ".nan", "1:30"],
    *["190:20:30.15", "-1:30", "0", "00", "0.0", "-0", "2001-12-14", "2001-12-14 21:59:43.10 -5"],
    *["2001-12-14t21:59:43.10-05:00", "=", "<<", "<<x", "!", "&", "*", "|", ">", "%", "@", "`"],
    *["'", '"', "\\", "#", "-", "--", "---", "...", "?", ":", ",", "[", "]", "{", "}", "-x", "?x"],
    *[":x", "a:", "a:b", "", " ", "  ", ": ", " #", "a #b", "a#b", "- ", "? ", "a\n", "\n", "\na"],
    *[" a", "a ", "\t", "\r", "\r\n", "\x00", "\x07", "\x1b", "\x7f", "\x85", "\xa0", "\u2028"],
    *["\u2029", "\ufeff", "é", "日本", "\U0001f600", "\U0010ffff", "'", "''", "a'b", 'a"b', "a\\b"],
    *["\\n", "x" * 20, "word", "a b", "key: value", "- item", "[1, 2]", "{a: 1}", "&anchor"],
    "*alias",
]
PIECES = st.sampled_from(TRICKY) | st.text(max_size=6) | st.sampled_from([" ", " ", "\n"])
STRINGS = st.lists(PIECES, max_size=30).map("".join) | st.sampled_from(TRICKY)
FLOATS = st.floats() | st.sampled_from([-0.0, 1e300, 5e-324, 1e16, 1e17, 0.1, -1.5e-7])
SCALARS = st.none() | st.booleans() | st.integers() | st.integers(min_value=2**64) | FLOATS
KEYS = STRINGS | st.integers() | st.booleans() | st.none()
TREES = st.dictionaries(
    KEYS,
    st.recursive(
        SCALARS | STRINGS,
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=4),
        max_leaves=16,
    ),
    max_size=6,
)


def _same(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return (a == b and math.copysign(1, a) == math.copysign(1, b)) or (a != a and b != b)
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(map(_same, a, b))
    return bool(a == b)


def _check(data: dict[Any, Any]) -> None:
    text = emit(data)
    assert text == yaml.dump(data, Dumper=yaml.CSafeDumper, sort_keys=False)
    assert _same(yaml.load(text, Loader=yaml.CSafeLoader), data), text
    assert _same(yaml.safe_load(text), data), text


@given(TREES)
@example({"k": float("nan"), "nan": [float("inf"), float("-inf"), -0.0]})
@example({"s": "word " * 40, "q": "'" + "it's " * 30, "d": "é " * 60 + "  x  " * 10})
@example({"x" * 90 + " ": "x" * 90 + " ", "k" * 100: " x", "q" * 99: "y" * 90 + " "})
@example({"é " * 70: {"a b " * 40 + "é": ["\t x " * 30]}, "x" * 129 + " y": "z"})
@example({"k" * 129: 1, "é" * 64: 2, "a\nb": {"c\u2028": []}, "": {}})
def test_emit_is_csafedumpers_text_and_reads_back_as_the_same_data(data: dict[Any, Any]) -> None:
    _check(data)


@given(st.lists(st.sampled_from(["a", "bb", " ", "  ", "'", "é", "\n", "x" * 30]), max_size=80))
def test_long_strings_fold_as_libyaml_folds_them(pieces: list[str]) -> None:
    text = "".join(pieces)
    _check({"key": text, "list": [[text]], "nested": {"deeper": {text[:40]: text}}})


def test_every_tricky_string_alone_as_key_and_value() -> None:
    for text in TRICKY:
        _check({text: text, "in": [text, {text: [text]}]})
