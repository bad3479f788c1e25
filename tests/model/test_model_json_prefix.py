"""Arguments cut at the output limit told from arguments written wrong (``cut_short``): a
server that says ``tool_calls`` for a cut call (llama-cpp-python, capture 16) is read as
``length`` only when the arguments are the start of a JSON text; other invalid JSON is the
model's mistake, and the tool layer says what is wrong with it."""

from __future__ import annotations

import pytest

from rho_adapters.model.json_prefix import cut_short

CUT = [
    '{"path": ".',
    '{ "path',
    '{"a": 1,',
    '{"a": tru',
    '{"a": nul',
    '{"a": [1, 2',
    '{"a": [1,',
    '{"a": "x\\u12',
    '{"p": "C:\\\\',  # cut after an escaped backslash: the string is whole so far
    '{"p": "a\\\\u12',  # "\\" then "u12" as text: no escape left unfinished
    '{"a": {"b": ["c\\',
    '{"a"',
    '{"a":',
    '{"a": 1.',
    '{"a": 1e',
    '{"a": -',
    "{",
    "[",
    '{ "path": "/Users/u/.npm/x.dll,\n}\ndef list_all:\n    files = dir(',  # capture 15
]
WRONG = [
    '{"path": "."}}',
    "{'path': '.'}",
    '{"a": 1]',
    '{"a": 1} x',
    '{"a" 1}',
    '{"a": 01',
    '{"a": trux',
    '{"a": 1,}',
    "hello",
    '{"a": 1}',  # whole: not cut
]


@pytest.mark.parametrize("text", CUT)
def test_the_start_of_a_json_text_was_cut(text: str) -> None:
    assert cut_short(text)


@pytest.mark.parametrize("text", WRONG)
def test_a_text_no_ending_makes_json_was_not_cut(text: str) -> None:
    assert not cut_short(text)
