"""One reading of a JSON text: the parse every reader of a tool call's arguments, or of a
request body, agrees on.

Python's ``json.loads`` takes ``{"command": "ls", "command": "rm -rf ~"}`` as its last key
and ``NaN``/``Infinity`` as numbers. Another parser may read the first key (a log, a proxy, a
hook written in another language, a human reading the raw text shown for approval) or refuse
the constant (an MCP server handed ``NaN``), so what was checked or shown need not be what ran.
``one_reading`` refuses both: a text it returns reads the same in every parser.

Bytes are read as UTF-8 and nothing else. ``json.loads`` guesses an encoding for bytes, by
their byte order mark or where their NULs fall: a server's body sent as UTF-16 or UTF-32 (or
with a UTF-8 mark) was read as JSON, while a proxy or a log that takes the body as the UTF-8
it is declared (``Content-Type: application/json``, where any other charset is refused)
read NULs and noise.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["one_reading"]


class _Ambiguous(ValueError):
    """A text two parsers may read differently (``str`` says how, for the sender)."""


def one_reading(text: str | bytes | bytearray) -> Any:
    """``json.loads(text)``, refusing what two parsers may read differently.

    Raises ``json.JSONDecodeError`` for malformed JSON (a byte order mark included),
    ``UnicodeDecodeError`` for bytes that are not UTF-8, ``RecursionError`` for nesting past
    the parser, and any other ``ValueError`` for a text that is JSON but ambiguous: its
    message says, after a subject such as "the body", what to fix (a key given twice,
    ``NaN``, ``Infinity``)."""
    if not isinstance(text, str):
        text = bytes(text).decode("utf-8")  # never json's guess (see the module's docstring)
    return json.loads(text, object_pairs_hook=_each_key_once, parse_constant=_constant)


def _each_key_once(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise _Ambiguous(f"gives the key {key[:100]!r} twice: send each key once")
        found[key] = value
    return found


def _constant(name: str) -> Any:
    raise _Ambiguous(f"holds {name}, which is not a JSON number: send a number")
