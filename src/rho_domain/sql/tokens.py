"""What the SQL lexer (``lexer.py``) reads with and gives out: ``LexRules``, how one dialect
under one server setting reads text, and the ``Token`` values (``Kind``) it produces.

Tokens are plain frozen values: ``text`` is what the checks compare (a WORD upper-cased, a
QUOTED identifier decoded, any STRING ``<string>``), ``raw`` the word as written, so names can
be folded per dialect. Nothing here reads text.
"""

from __future__ import annotations

from enum import Enum

import attrs

from rho_domain.value_methods import value_eq, value_hash, value_repr


class Kind(Enum):
    """What a token is; only words and punctuation are ever inspected."""

    WORD = "word"  # an unquoted identifier or keyword
    QUOTED = "quoted"  # a quoted identifier
    STRING = "string"  # any string literal (contents never inspected)
    NUMBER = "number"
    PARAM = "param"  # $1, ?, :name
    PUNCT = "punct"  # one operator or punctuation character


@attrs.frozen
class Token:
    """One token. ``text``: WORD upper-cased (for keyword tests); QUOTED the decoded name;
    STRING ``<string>``; others their raw text. ``raw`` is the word as written (WORD only)."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    kind: Kind
    text: str
    raw: str = attrs.field(default="", eq=False)

    def is_word(self, *words: str) -> bool:
        """True for an unquoted word equal to one of ``words`` (upper-cased keyword form)."""
        return self.kind is Kind.WORD and self.text in words

    def is_punct(self, char: str) -> bool:
        """True for the punctuation token ``char``."""
        return self.kind is Kind.PUNCT and self.text == char


@attrs.frozen(kw_only=True)
class LexRules:
    """How one dialect (under one server setting) reads text."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    dialect: str
    nested_comments: bool = False
    dash_needs_space: bool = False  # MySQL: "--" starts a comment only before whitespace
    hash_comments: bool = False  # MySQL "#"
    backslash_strings: bool = False  # '\'' escapes inside ordinary '...' strings
    double_quote_strings: bool = False  # MySQL "..." is a string (unless ANSI_QUOTES)
    e_strings: bool = False  # E'...' with backslash escapes
    dollar_quotes: bool = False
    backtick_idents: bool = False
    bracket_idents: bool = False  # SQLite [x]
    bracket_doubles: bool = False  # MariaDB sql_mode=MSSQL [x]: "]]" is one "]" in it
    q_quotes: bool = False  # Oracle q'[...]'
    executable_comments: bool = False  # MySQL /*! */ is code: refuse
    unicode_idents: bool = False  # PostgreSQL/Vertica U&"..." [UESCAPE 'c'] and U&'...'
    params: str = "?"  # characters that start a bind parameter ($1, ?, :name, @name)
    line_ends: str = "\n"  # what ends a -- (or #) comment: PostgreSQL's scanner also ends it at \r
