r"""Text from the model, made safe to print on a terminal: control characters shown, not obeyed.

A terminal obeys what it is sent. ESC starts a command (erase the line, move the cursor up,
set the window title), CR returns to the start of the line, a backspace steps back, and
Unicode format characters reorder or hide what follows (RLO, LRI, zero-width joiners). A
tool call's arguments, an answer or a tool's output can carry any of them, so that an
approval prompt shows ``ls -la`` while ``touch X; ...`` runs. ``visible`` shows each such
character as a Python-style escape instead: ``\x1b``, ``\r``, ``\x08``, ``\u202e``.

Escaped: every C0 and C1 control character and DEL (category Cc) except the newline and the
tab, which keep their meaning; format characters (Cf: bidi overrides and isolates,
zero-width characters, the BOM); line and paragraph separators (Zl, Zp); blanks other than
the space (Zs: a no-break space looks like a space but is not one to the shell); lone
surrogates (Cs). Everything else, accents, CJK and emoji included, prints as itself.

Contract: ``visible(text, newlines=True) -> str`` is printable (with ``newlines``, apart from
``\n`` and ``\t``); the result of ``visible`` is unchanged by ``visible`` (escapes are ASCII);
``hidden_count(text)`` is how many characters ``visible`` escapes. ``json_visible(document)``
is the same for JSON printed as JSON: the characters are written as JSON ``\uXXXX`` escapes
(``json.dumps`` leaves C1 controls, DEL, bidi and separators raw), so the document is printable
and parses to the same value. ``as_run(arguments)`` is a tool call's raw JSON arguments as its
tool reads them, written again, for every listing a human approves from.
"""

from __future__ import annotations

import json
import unicodedata

_ESCAPED_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Zs", "Cs"})
_NAMED = {"\r": "\\r", "\n": "\\n", "\t": "\\t"}


def visible(text: str, *, newlines: bool = True) -> str:
    """``text`` with every character a terminal would obey or hide shown as an escape; with
    ``newlines`` the newline and the tab are kept, without them they are escaped too (for
    one-line displays)."""
    if text.isprintable():  # the common case: no work
        return text
    return "".join(_shown(ch, newlines) for ch in text)


def json_visible(document: str) -> str:
    """``document`` (JSON text, as ``json.dumps`` writes it) with every character ``visible``
    would escape written as a JSON escape: printable, and the same value once parsed. Outside
    strings JSON has only ASCII punctuation and blanks, so only string contents change."""
    if document.isprintable():
        return document
    return "".join(_json_shown(ch) for ch in document)


def _json_shown(ch: str) -> str:
    if _shown(ch, True) == ch:
        return ch
    code = ord(ch)
    if code < 0x10000:
        return f"\\u{code:04x}"
    high, low = divmod(code - 0x10000, 0x400)  # a surrogate pair, as JSON spells it
    return f"\\u{0xD800 + high:04x}\\u{0xDC00 + low:04x}"


def as_run(arguments: str) -> str:
    r"""A call's arguments as its tool reads them (``json.loads``), written again: a key given
    twice (``{"command": "ls", "command": "rm -rf ~"}``: the last one runs) or JSON escapes
    (``"\u0072\u006d -rf ~"`` runs ``rm -rf ~``) showed a human something other than
    what an approval (its digest) runs, where the raw text was printed. Text that is not a
    JSON object is shown as it is. Escape the result with ``visible`` to print it."""
    try:
        parsed = json.loads(arguments)
    except (ValueError, RecursionError):
        return arguments
    return json.dumps(parsed, ensure_ascii=False) if isinstance(parsed, dict) else arguments


def shell_word(text: str) -> str:
    """``text`` as one word of a command line printed for the user to paste into a shell:
    quoted (``shlex.quote``) unless it holds nothing a shell treats specially, then made
    ``visible``. A call id is the model's choice and a session id a directory's name: as
    they came, ``c1;touch pwned;`` in ``--approve c1;touch pwned;@DIGEST`` ran a command."""
    import shlex

    return visible(shlex.quote(text), newlines=False)


def hidden_count(text: str) -> int:
    """How many characters of ``text`` ``visible`` escapes (newlines and tabs kept)."""
    if text.isprintable():
        return 0
    return sum(1 for ch in text if _shown(ch, True) != ch)


def _shown(ch: str, newlines: bool) -> str:
    if ch == " " or (newlines and ch in "\n\t"):
        return ch
    if unicodedata.category(ch) not in _ESCAPED_CATEGORIES:
        return ch
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"
