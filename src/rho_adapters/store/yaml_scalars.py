"""The scalars of config.yaml (``yaml_emit``): how PyYAML's SafeRepresenter writes a value
as text, whether its resolver reads a string back unquoted as that string, which styles
libyaml's emitter (0.2.5, ``analyze_scalar``, with ``unicode`` off) allows for it, and its
escapes in double quotes. Nothing here imports yaml (the one-shot's ~17 ms, issue 33); the
patterns are PyYAML's own, copied verbatim, and compiled at the first string that starts like
a number.
"""

from __future__ import annotations

import functools
import re
from typing import Any

PLAIN, SINGLE, DOUBLE = "plain", "single", "double"

_BOOLS = frozenset(  # yes, Yes, YES, ...: the YAML 1.1 booleans PyYAML resolves
    form
    for word in ("yes", "no", "true", "false", "on", "off")
    for form in (word, word.capitalize(), word.upper())
)
_OTHER_TAGS = frozenset(("~", "null", "Null", "NULL", "<<", "=", "!", "&", "*"))
_BLOCK_FIRST = frozenset("#,[]{}&*!|>'\"%@`")
_BREAKS = frozenset("\r\n\x85\u2028\u2029")
_ESCAPES = {"\0": "0", "\a": "a", "\b": "b", "\t": "t", "\n": "n", "\v": "v", "\f": "f"}
_ESCAPES |= {"\r": "r", "\x1b": "e", '"': '"', "\\": "\\", "\x85": "N", "\xa0": "_"}
_ESCAPES |= {"\u2028": "L", "\u2029": "P"}
_NUMBERS: list[re.Pattern[str]] = []  # PyYAML's float, int and timestamp patterns, verbatim


def _numbers() -> list[re.Pattern[str]]:
    """Compiled at the first string that starts like a number (most configs have none)."""
    if not _NUMBERS:
        _NUMBERS.extend(
            re.compile(pattern, re.X)
            for pattern in (
                r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?
                    |\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?
                    |[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*
                    |[-+]?\.(?:inf|Inf|INF)
                    |\.(?:nan|NaN|NAN))$""",
                r"""^(?:[-+]?0b[0-1_]+
                    |[-+]?0[0-7_]+
                    |[-+]?(?:0|[1-9][0-9_]*)
                    |[-+]?0x[0-9a-fA-F_]+
                    |[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$""",
                r"""^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]
                    |[0-9][0-9][0-9][0-9] -[0-9][0-9]? -[0-9][0-9]?
                     (?:[Tt]|[ \t]+)[0-9][0-9]?
                     :[0-9][0-9] :[0-9][0-9] (?:\.[0-9]*)?
                     (?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)$""",
            )
        )
    return _NUMBERS


def reads_as_str(text: str) -> bool:
    """Whether PyYAML's resolver reads ``text``, unquoted, as a string (not a bool, null,
    number, timestamp, merge or value key)."""
    if not text or text in _BOOLS or text in _OTHER_TAGS:
        return False
    return text[0] not in "-+.0123456789" or not any(p.match(text) for p in _numbers())


def scalar_text(value: Any) -> tuple[str, bool]:
    """(text, whether it is a string) as PyYAML's SafeRepresenter writes a scalar."""
    kind = type(value)
    if kind is str:
        if not value.isascii():
            try:
                value.encode()
            except UnicodeEncodeError as exc:
                raise Unsupported(f"a string with a lone surrogate ({value!r:.60})") from exc
        return value, True
    if value is None:
        return "null", False
    if kind is bool:
        return ("true" if value else "false"), False
    if kind is int:
        return str(value), False
    if kind is float:
        if value != value:
            return ".nan", False
        if value in (float("inf"), float("-inf")):
            return (".inf" if value > 0 else "-.inf"), False
        text = repr(value).lower()
        return (text.replace("e", ".0e", 1) if "." not in text and "e" in text else text), False
    raise Unsupported(f"a {kind.__name__} value ({value!r:.60})")


class Unsupported(Exception):
    """A value config.yaml cannot hold; ``path`` is filled in on the way out."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what
        self.path: list[str] = []


def string_style(text: str) -> tuple[bool, str]:
    """(multiline, style) of a string in block context: ``PLAIN`` where libyaml allows it and
    it reads back as that string, else ``SINGLE`` where allowed, else ``DOUBLE``. Short texts
    (keys, names, modes: the same few in every config) are remembered."""
    return _short_style(text) if len(text) <= 64 else _style(text)


def _style(text: str) -> tuple[bool, str]:
    multiline, plain, single = styles(text)
    return multiline, PLAIN if plain and reads_as_str(text) else SINGLE if single else DOUBLE


_short_style = functools.lru_cache(maxsize=4096)(_style)


def styles(text: str) -> tuple[bool, bool, bool]:
    """(multiline, plain allowed, single quotes allowed) for a string in block context, as
    libyaml's ``analyze_scalar`` judges with ``unicode`` off: only ASCII from space to ``~``
    and the line feed are printed as they are."""
    if not text:
        return False, True, True
    if not text.isascii() or not text.replace("\n", "").isprintable():
        return not _BREAKS.isdisjoint(text), False, False  # escapes: double quotes
    if "\n" in text:
        return True, False, " \n" not in text and "\n " not in text
    first, last = text[0], text[-1]
    indicator = (
        first in _BLOCK_FIRST
        or (first in "?:-" and text[1:2] in ("", " "))
        or text[:3] in ("---", "...")
        or ": " in text
        or last == ":"
        or " #" in text
    )
    return False, not indicator and first != " " and last != " ", True


def escape(char: str) -> str:
    """Libyaml's escape of one character in double quotes (without the backslash)."""
    known = _ESCAPES.get(char)
    if known is not None:
        return known
    code = ord(char)
    return f"x{code:02X}" if code <= 0xFF else f"u{code:04X}" if code <= 0xFFFF else f"U{code:08X}"
