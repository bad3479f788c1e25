"""A model answer whose fields hold a number where text belongs, text where a number
belongs, or an object where a list belongs: kept for what it says, never dropped without a
word nor a crash.

Before: a choice ``index: "0"`` was taken for another choice (n>1) and its answer dropped;
``content: 42`` was dropped; a call's ``arguments`` given as a JSON object ran with ``{}``;
``arguments: 5`` or ``true`` ran it with ``{}`` too (the model never told its call was
malformed); ``content`` as one part object or as bare string parts was dropped;
``tool_calls`` as one object (not a list of one) lost the call, the answer finishing
``tool_calls`` with none; a whole answer whose ``message`` was a string crashed with
``AttributeError: 'str' object has no attribute 'get'``."""

from __future__ import annotations

import json
from typing import Any

from _model_support import DONE, calls_of, collect, data, make_model, run_body, text_of

from rho_adapters.fakes.wire import raw_reply

CALL = {"id": "a", "function": {"name": "read", "arguments": '{"p": 1}'}}


def _choice(**choice: Any) -> bytes:
    return data({"id": "c", "choices": [{"index": 0, **choice}]})


async def test_stream_fields_of_another_type_are_kept() -> None:
    stop = _choice(delta={}, finish_reason="stop")
    calls = _choice(delta={}, finish_reason="tool_calls")
    as_object = {**CALL, "function": {"name": "read", "arguments": {"p": 1}}}
    cases: list[tuple[list[bytes], str, list[tuple[str, str, str]]]] = [
        ([_choice(index="0", delta={"content": "hi"}), stop], "hi", []),
        ([_choice(delta={"content": 42}), stop], "42", []),
        (
            [_choice(delta={"tool_calls": {"index": 0, **CALL}}), calls],
            "",
            [("a", "read", '{"p": 1}')],
        ),
        (
            [_choice(delta={"tool_calls": [{"index": "0", **as_object}]}), calls],
            "",
            [("a", "read", '{"p": 1}')],
        ),
        ([_choice(delta={"content": {"type": "text", "text": "hi"}}), stop], "hi", []),
        ([_choice(delta={"content": ["hel", {"type": "text", "text": "lo"}]}), stop], "hello", []),
    ]
    for value in (5, True, "x"):  # not an object: kept, so the loop refuses it by name
        as_value = {**CALL, "function": {"name": "read", "arguments": value}}
        written = value if isinstance(value, str) else json.dumps(value)
        cases.append(
            (
                [_choice(delta={"tool_calls": [{"index": 0, **as_value}]}), calls],
                "",
                [("a", "read", written)],
            )
        )
    for pieces, text, expected in cases:
        events = await run_body(*pieces, DONE)
        assert (text_of(events), calls_of(events)) == (text, expected), pieces


async def test_whole_answer_fields_of_another_type_are_kept() -> None:
    whole = {"content-type": "application/json"}
    cases: list[tuple[dict[str, Any], str, list[tuple[str, str, str]]]] = [
        ({"index": "0", "message": {"content": "hi"}}, "hi", []),
        ({"index": 0, "message": "hi"}, "hi", []),
        ({"index": 0, "message": {"content": 4.5}}, "4.5", []),
        ({"index": 0, "message": {"tool_calls": CALL}}, "", [("a", "read", '{"p": 1}')]),
    ]
    for choice, text, expected in cases:
        body = json.dumps({"choices": [{**choice, "finish_reason": "stop"}]}).encode()
        # an empty stream: the client asks again without streaming
        model, _, _ = make_model(raw_reply(b""), raw_reply(body, headers=whole))
        try:
            events = await collect(model)
        finally:
            await model.aclose()
        assert (text_of(events), calls_of(events)) == (text, expected), choice
