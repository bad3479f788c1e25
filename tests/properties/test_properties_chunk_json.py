"""The streamed chunks' JSON parser (``chunks.loads``) is ``json.loads``: same value for every
document, an error for every text that is not one, whatever whitespace or extra data surrounds
it."""

from __future__ import annotations

import json
import math

from hypothesis import given
from hypothesis import strategies as st

from rho_adapters.model.chunks import loads

SCALARS = (
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8)
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)
SPACE = st.sampled_from(["", " ", "\n", "\t", "\r\n ", "  "])
EXTRA = st.sampled_from(["", "", "x", "{}", "]", ",", "0", "\x00"])


def _same(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    return a == b and type(a) is type(b)


def _assert_like_json_loads(text: str) -> None:
    try:
        expected = json.loads(text)
    except ValueError:
        try:
            loads(text)
        except ValueError:
            return
        raise AssertionError(f"{text!r} was accepted; json.loads refuses it") from None
    assert _same(loads(text), expected)


@given(VALUES, SPACE, SPACE, EXTRA, st.booleans())
def test_documents_with_any_surroundings_parse_as_json_loads(
    value: object, before: str, after: str, extra: str, compact: bool
) -> None:
    separators = (",", ":") if compact else (", ", ": ")
    _assert_like_json_loads(before + json.dumps(value, separators=separators) + after + extra)


@given(st.text(max_size=40))
def test_any_text_is_accepted_or_refused_as_json_loads_does(text: str) -> None:
    _assert_like_json_loads(text)


def test_a_streamed_chunk_and_the_texts_around_it() -> None:
    chunk = '{"choices":[{"index":0,"delta":{"content":"hi"}}]}'
    assert loads(chunk) == json.loads(chunk)
    assert loads(" " + chunk + "\n") == json.loads(chunk)
    for bad in (chunk + "x", chunk + chunk, "", "[DONE]", chunk[:-1]):
        try:
            loads(bad)
        except ValueError:
            continue
        raise AssertionError(f"{bad!r} was accepted")
