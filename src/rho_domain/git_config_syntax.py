r"""A git configuration text read as git reads it: its ``(section, key, value)`` entries.

A port of the reader in git's ``config.c`` (``git_parse_source``, ``get_base_var``,
``get_extended_base_var``, ``get_value``, ``parse_value``), character by character, because
every shortcut read some text differently from git (probeshell23b, ``git config --list`` the
oracle): a UTF-8 BOM hid the first section; a ``\`` ending a line's comment joined the next
entry to that comment; ``str.splitlines`` broke lines at form feeds, ``\x1c`` and U+2028, so
``x = a\x0c[http]`` moved the entries below it into another section; a ``]`` inside a quoted
subsection ended the header early. Only ``\n`` (and ``\r\n``) ends a line, only space, tab,
CR and LF are blanks, and a comment runs to the line's end whatever it holds.

Where git would stop with "bad config line" the entries read so far are kept: git refuses
the whole file then, so nothing it names is used until the user mends it, and what they mend
it to is most likely what was there.
"""

from __future__ import annotations

import string

__all__ = ["entries"]

_BLANKS = " \t\r\n"  # git's isspace (sane_ctype): no form feed, no vertical tab
_LETTERS = frozenset(string.ascii_letters)
_KEY_CHARS = frozenset(string.ascii_letters + string.digits + "-")
_ESCAPES = {"n": "\n", "t": "\t", "b": "\b", '"': '"', "\\": "\\"}
_END = ""  # what ``_Source.next`` gives past the end: git's EOF, read as a newline


class _Source:
    r"""The text one character at a time, ``\r\n`` read as ``\n`` (git's get_next_char)."""

    def __init__(self, text: str) -> None:
        self.text = text.removeprefix("\ufeff")  # git skips a whole UTF-8 BOM at the start
        self.at = 0

    def next(self) -> str:
        if self.at >= len(self.text):
            return _END
        char = self.text[self.at]
        self.at += 1
        if char == "\r" and self.text.startswith("\n", self.at):
            self.at += 1
            return "\n"
        return char


def entries(text: str) -> list[tuple[str, str, str | None]]:
    """Every ``(section, key, value)`` of ``text``: the section and key lowercase, the
    subsection dropped, the value unquoted and unescaped (None for a key with no ``=``, which
    git reads as true)."""
    found: list[tuple[str, str, str | None]] = []
    source = _Source(text)
    section: str | None = None
    comment = False
    while (char := source.next()) != _END:
        if char == "\n":
            comment = False
        elif comment or char in _BLANKS:
            continue
        elif char in "#;":
            comment = True
        elif char == "[":
            section = _section(source)
            if section is None:
                break
        elif char in _LETTERS:
            entry = _entry(source, char)
            if entry is None:
                break
            if section is not None:  # git reads a key before any section, and uses none
                found.append((section, *entry))
        else:
            break
    return found


def _section(source: _Source) -> str | None:
    """The section name of a header after its ``[`` (``[s]``, ``[s "sub"]``, ``[s.sub]``),
    lowercase, without its subsection; None when git would refuse the header."""
    name: list[str] = []
    while (char := source.next()) != _END:
        if char == "]":
            return "".join(name).split(".", 1)[0].lower() or None
        if char in _BLANKS:
            return "".join(name).lower() if _subsection_closes(source) else None
        if char not in _KEY_CHARS and char != ".":
            return None
        name.append(char)
    return None


def _subsection_closes(source: _Source) -> bool:
    r"""Whether a quoted subsection (``"..."``, ``\`` escaping anything but a newline, a
    ``]`` inside it no end) and the header's ``]`` follow."""
    while (char := source.next()) in _BLANKS and char != _END:
        continue
    if char != '"':
        return False
    while (char := source.next()) != '"':
        if char == "\\":
            char = source.next()
        if char in ("\n", _END):
            return False
    return source.next() == "]"


def _entry(source: _Source, first: str) -> tuple[str, str | None] | None:
    """The key starting with ``first`` and its value; None when git would refuse the line."""
    key = [first]
    while (char := source.next()) in _KEY_CHARS and char != _END:
        key.append(char)
    while char in (" ", "\t"):
        char = source.next()
    if char in ("\n", _END):
        return "".join(key).lower(), None
    if char != "=":
        return None
    value = _value(source)
    return None if value is None else ("".join(key).lower(), value)


def _value(source: _Source) -> str | None:
    r"""A value after its ``=`` to the line's end: quotes removed, escapes undone (``\`` and
    a newline continue the line), a comment outside quotes dropped, blanks outside quotes
    trimmed at either end and each one inside kept as a space; None when git refuses it
    (an unknown escape, a quote left open at the line's end)."""
    out: list[str] = []
    quoted = comment = False
    spaces = 0
    while True:
        char = source.next()
        if char in ("\n", _END):
            return None if quoted else "".join(out)
        if comment:
            continue
        if char in _BLANKS and not quoted:
            spaces += 1 if out else 0
            continue
        if char in "#;" and not quoted:
            comment = True
            continue
        if spaces:
            out.append(" " * spaces)
            spaces = 0
        if char == "\\":
            escaped = source.next()
            if escaped == "\n":
                continue
            if escaped not in _ESCAPES:
                return None
            out.append(_ESCAPES[escaped])
        elif char == '"':
            quoted = not quoted
        else:
            out.append(char)
