"""Where SQL comments and blanks end, per dialect, for the lexer (``lexer.py``).

A ``--`` comment (MySQL: only when followed by a space or control character), a ``#``
comment, and a ``/* */`` comment (nested where PostgreSQL and Vertica nest them) are
skipped, never read: nothing in them reaches the classifier. Fail closed: an unterminated
``/*`` comment, a MySQL executable comment (``/*! ... */``, ``/*M! ... */``, which the server
runs) and a MySQL optimizer hint (``/*+ ... */``) raise ``StatementRefused`` naming the
character the comment starts at.
"""

from __future__ import annotations

from rho_domain.errors import StatementRefused
from rho_domain.sql.tokens import LexRules

# Only ASCII whitespace separates tokens: every engine here reads any other character
# (U+00A0, U+2028, zero-width space...) as part of an identifier, so this lexer does too
# ("lower\u00a0(x)" calls a function named "lower\u00a0", not lower).
BLANKS = frozenset(" \t\n\r\f\v")


def dash_comment(text: str, at: int, rules: LexRules) -> bool:
    """Whether the ``--`` at ``at`` starts a comment under ``rules``."""
    if not rules.dash_needs_space:
        return True
    after = text[at + 2 : at + 3]
    # MySQL: "--" followed by an ASCII space or control character (my_isspace,
    # my_iscntrl on one byte), or at the very end. Not str.isspace(): U+00A0 and the
    # other Unicode spaces are identifier characters to the server ("1 --\u00a0" is
    # 1 - -"\u00a0"), and a comment to Python would hide the code after them.
    return after == "" or after in BLANKS or ord(after) < 32 or after == "\x7f"


def line_end(text: str, at: int, rules: LexRules) -> int:
    """Where a line comment starting at ``at`` ends: after the first of the dialect's
    ``line_ends`` (PostgreSQL ends one at a lone CR as well), else the end of the text."""
    end = len(text)
    for char in rules.line_ends:  # each search stops where the last one ended
        found = text.find(char, at, end)
        if found >= 0:
            end = found
    return end + 1 if end < len(text) else end


def block_comment_end(text: str, at: int, rules: LexRules) -> int:
    """Where the ``/*`` comment starting at ``at`` ends (after its ``*/``). Raises
    ``StatementRefused`` for an unterminated one, and under MySQL's rules for an executable
    comment or an optimizer hint."""
    if rules.executable_comments and (text.startswith("/*!", at) or text.startswith("/*M!", at)):
        raise _refused("MySQL executable comments (/*! ... */) are refused", at)
    if rules.executable_comments and text.startswith("/*+", at):
        # MySQL 8 reads an optimizer hint here: MAX_EXECUTION_TIME(N) and SET_VAR(...)
        # replace the session's time limit and settings for the statement. MariaDB reads
        # a plain comment; neither is needed to read data.
        raise _refused(
            "MySQL optimizer hints (/*+ ... */) are refused: they can lift the statement's "
            "time limit (MAX_EXECUTION_TIME, SET_VAR); write /* + ... */ for a comment",
            at,
        )
    depth, i = 1, at + 2
    while depth:
        if i >= len(text) - 1:
            raise _refused("unterminated /* comment", at)
        pair = text[i : i + 2]
        if pair == "*/":
            depth, i = depth - 1, i + 2
        elif pair == "/*" and rules.nested_comments:
            depth, i = depth + 1, i + 2
        else:
            i += 1
    return i


def skip_blanks(text: str, at: int, rules: LexRules) -> int:
    """The first position from ``at`` that is not whitespace or a comment."""
    while at < len(text):
        if text[at] in BLANKS:
            at += 1
        elif text.startswith("--", at):
            at = line_end(text, at, rules)
        elif text.startswith("/*", at):
            at = block_comment_end(text, at, rules)
        else:
            break
    return at


def _refused(why: str, at: int) -> StatementRefused:
    return StatementRefused(f"{why} (at character {at + 1})")
