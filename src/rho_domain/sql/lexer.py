r"""A real SQL lexer, one set of rules per dialect.

The lexer turns text into tokens and drops comments, so the classifier never sees a keyword
that sits inside a string literal, a quoted identifier or a comment. It understands, per
dialect: ``'...'`` with doubled quotes, PostgreSQL/Vertica ``E'...'`` backslash escapes and
``$tag$...$tag$`` dollar quotes, MySQL backslash escapes and ``"..."`` strings, Oracle
``q'[...]'`` alternative quoting, quoted identifiers (``"x"``, `` `x` ``, ``[x]``), nested
``/* */`` comments (PostgreSQL), ``#`` comments and the ``--`` + whitespace rule (MySQL).

Where the server can be configured to read the same text two ways (MySQL
``NO_BACKSLASH_ESCAPES``, PostgreSQL ``standard_conforming_strings``, Vertica comment
nesting), a dialect has several ``LexRules``; the classifier requires every reading to pass.

Identifiers come out as the engine reads them: quoted identifiers without their quotes,
PostgreSQL/Vertica ``U&"d\0061t\+000061"`` decoded (``\XXXX``, ``\+XXXXXX``, surrogate
pairs, any ``UESCAPE 'c'`` escape character, comments allowed before ``UESCAPE``), so that
the classifier decides on the real name, never on one spelling of it. Words keep their raw
text beside the upper-cased keyword form, so names can be folded per dialect with ASCII-only
case rules (as the engines do: the long s, U+017F, never becomes ``s``).

Fail closed: an unterminated string, identifier or comment, a malformed Unicode escape, a
MySQL executable comment (``/*! ... */``, ``/*M! ... */``, which the server *runs*) and a
MySQL optimizer hint (``/*+ ... */``, which can lift the statement's time limit), raise
``StatementRefused``.

The rules and the tokens are ``tokens.py``'s values; the ``U&`` decoding is
``unicode_names.py``'s.
"""

from __future__ import annotations

from rho_domain.errors import StatementRefused
from rho_domain.sql.comments import BLANKS, block_comment_end, dash_comment, line_end, skip_blanks
from rho_domain.sql.tokens import Kind, LexRules, Token
from rho_domain.sql.unicode_names import decode_unicode_escapes

_WORD_START = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")
_DIGITS = frozenset("0123456789")
_Q_CLOSE = {"[": "]", "{": "}", "(": ")", "<": ">"}


# Outside literals and comments, only these characters are SQL; anything else (a backslash,
# a control character) is refused rather than guessed at.
_PUNCTUATION = frozenset("()[]{},;.:+-*/%<>=!~^&|@#?$`")


def _is_word_start(ch: str) -> bool:
    return ch in _WORD_START or ord(ch) > 127


def _is_word_char(ch: str) -> bool:
    return _is_word_start(ch) or ch in _DIGITS or ch == "$"


_SEMICOLON = Token(Kind.PUNCT, ";")


class _Lexer:
    def __init__(self, text: str, rules: LexRules) -> None:
        self.text = text
        self.rules = rules
        self.pos = 0
        self.tokens: list[Token] = []
        self.end = 0  # just after the last token that is not a ";" (``statement_end``)

    def refuse(self, why: str) -> StatementRefused:
        return StatementRefused(f"{why} (at character {self.pos + 1})")

    def run(self) -> tuple[Token, ...]:
        n, counted = len(self.text), 0
        while self.pos < n:
            self._step()
            if len(self.tokens) > counted:  # this step read a token
                counted = len(self.tokens)
                self.end = self.pos if self.tokens[-1] != _SEMICOLON else self.end
        return tuple(self.tokens)

    def _step(self) -> None:
        """Read what starts at ``pos``: a blank, a comment or one token."""
        text, n = self.text, len(self.text)
        ch = text[self.pos]
        nxt = text[self.pos + 1] if self.pos + 1 < n else ""
        if ch in BLANKS:
            self.pos += 1
        elif (ch == "-" and nxt == "-" and dash_comment(text, self.pos, self.rules)) or (
            ch == "#" and self.rules.hash_comments
        ):
            self.pos = line_end(text, self.pos, self.rules)
        elif ch == "/" and nxt == "*":
            self.pos = block_comment_end(text, self.pos, self.rules)
        elif ch == "'":
            self._quoted("'", Kind.STRING, backslash=self.rules.backslash_strings)
        elif ch == '"':
            kind = Kind.STRING if self.rules.double_quote_strings else Kind.QUOTED
            self._quoted('"', kind, backslash=kind is Kind.STRING and self.rules.backslash_strings)
        elif ch == "`" and self.rules.backtick_idents:
            self._quoted("`", Kind.QUOTED, backslash=False)
        elif ch == "[" and self.rules.bracket_idents:
            self._bracket_ident()
        elif ch == "$" and self.rules.dollar_quotes and self._dollar_quote():
            pass
        elif _is_word_start(ch):
            self._word()
        elif ch in _DIGITS or (ch == "." and nxt in _DIGITS):
            self._number()
        elif ch in self.rules.params and self._param():
            pass
        elif ch in _PUNCTUATION:
            self.tokens.append(Token(Kind.PUNCT, ch))
            self.pos += 1
        else:
            raise self.refuse(f"unexpected character {ch!r} outside a literal")

    def _quoted(self, quote: str, kind: Kind, *, backslash: bool) -> None:
        text, i = self.text, self.pos + 1
        parts: list[str] = []
        while True:
            if i >= len(text):
                raise self.refuse(f"unterminated {quote} quote")
            ch = text[i]
            if backslash and ch == "\\":
                i += 2  # escaped; only strings have escapes, and their text is not kept
            elif ch == quote:
                if text[i + 1 : i + 2] == quote:  # doubled quote is one quote character
                    parts.append(quote)
                    i += 2
                else:
                    break
            else:
                parts.append(ch)
                i += 1
        self.pos = i + 1
        self.tokens.append(Token(kind, "".join(parts) if kind is Kind.QUOTED else "<string>"))

    def _bracket_ident(self) -> None:
        if self.rules.bracket_doubles:
            self._quoted("]", Kind.QUOTED, backslash=False)
            return
        end = self.text.find("]", self.pos + 1)
        if end < 0:
            raise self.refuse("unterminated [ identifier")
        self.tokens.append(Token(Kind.QUOTED, self.text[self.pos + 1 : end]))
        self.pos = end + 1

    def _dollar_quote(self) -> bool:
        text, start = self.text, self.pos
        # A dollar quote cannot follow an identifier character ("a$b$" is one identifier).
        if start and _is_word_char(text[start - 1]):
            return False
        end = start + 1
        while end < len(text) and text[end] != "$":
            if not (_is_word_char(text[end]) and text[end] != "$"):
                return False
            end += 1
        tag = text[start : end + 1]
        if end >= len(text) or (len(tag) > 2 and tag[1] in _DIGITS):
            return False
        close = text.find(tag, end + 1)
        if close < 0:
            raise self.refuse(f"unterminated dollar quote {tag}")
        self.pos = close + len(tag)
        self.tokens.append(Token(Kind.STRING, "<string>"))
        return True

    def _word(self) -> None:
        text, start, i = self.text, self.pos, self.pos
        while i < len(text) and _is_word_char(text[i]):
            i += 1
        word = text[start:i]
        upper = word.upper()
        nxt = text[i : i + 1]
        self.pos = i
        rules = self.rules
        if nxt == "'" and (
            upper in ("N", "B", "X", "_UTF8MB4", "_BINARY", "_LATIN1", "_UTF8")
            or (upper in ("E", "U") and rules.e_strings)
        ):
            # Prefixed literals; E'' always honours backslashes.
            self._quoted("'", Kind.STRING, backslash=rules.backslash_strings or upper == "E")
            return
        if rules.unicode_idents and nxt == "&" and upper == "U":
            quote = text[i + 1 : i + 2]
            if quote in ("'", '"'):
                self.pos = i + 1  # U&'...' (a string) / U&"..." (an identifier to decode)
                self._unicode_quoted(quote)
                return
        if rules.q_quotes and upper in ("Q", "NQ") and nxt == "'":
            self._q_quote(i + 1)
            return
        self.tokens.append(Token(Kind.WORD, upper, word))

    def _unicode_quoted(self, quote: str) -> None:
        self._quoted(quote, Kind.QUOTED, backslash=False)
        token = self.tokens.pop()
        escape = self._uescape()
        if quote == "'":
            self.tokens.append(Token(Kind.STRING, "<string>"))
        else:
            self.tokens.append(Token(Kind.QUOTED, decode_unicode_escapes(token.text, escape)))

    def _uescape(self) -> str:
        """Consume an optional ``UESCAPE 'c'`` (comments allowed before it); return ``c``."""
        text = self.text
        at = skip_blanks(self.text, self.pos, self.rules)
        if text[at : at + 7].upper() != "UESCAPE" or _is_word_char(text[at + 7 : at + 8] or " "):
            return "\\"
        at = skip_blanks(self.text, at + 7, self.rules)
        literal = text[at : at + 3]
        if len(literal) != 3 or literal[0] != "'" or literal[2] != "'":
            raise self.refuse("UESCAPE must be followed by a one-character string")
        char = literal[1]
        if char in "0123456789abcdefABCDEF+'\" \t\r\n\f":
            raise self.refuse(f"invalid UESCAPE character {char!r}")
        self.pos = at + 3
        return char

    def _q_quote(self, at: int) -> None:
        if at >= len(self.text):
            raise self.refuse("unterminated q'' quote")
        opener = self.text[at]
        closer = _Q_CLOSE.get(opener, opener) + "'"
        end = self.text.find(closer, at + 1)
        if end < 0 or opener.isspace():
            raise self.refuse("unterminated q'' quote")
        self.pos = end + 2
        self.tokens.append(Token(Kind.STRING, "<string>"))

    def _number(self) -> None:
        text, i = self.text, self.pos
        while i < len(text) and (text[i] in _DIGITS or text[i] in "._" or text[i].isalpha()):
            # An exponent's sign belongs to the number only before a digit: every engine
            # here reads "1e--" as 1e (MySQL's name, or 1 and the name e) and a comment.
            if (
                text[i] in "eE"
                and text[i + 1 : i + 2] in ("+", "-")
                and text[i + 2 : i + 3] in _DIGITS
            ):
                i += 1
            i += 1
        self.tokens.append(Token(Kind.NUMBER, text[self.pos : i]))
        self.pos = i

    def _param(self) -> bool:
        text, i = self.text, self.pos + 1
        while i < len(text) and _is_word_char(text[i]):
            i += 1
        if i == self.pos + 1 and text[self.pos] != "?":
            return False  # a lone "$", ":" or "@" (so "::" is punctuation, never a parameter)
        self.tokens.append(Token(Kind.PARAM, text[self.pos : i]))
        self.pos = i
        return True


def tokenize(text: str, rules: LexRules) -> tuple[Token, ...]:
    """Tokens of ``text`` under ``rules``, comments dropped. Raises ``StatementRefused``."""
    return _Lexer(text, rules).run()


def statement_end(text: str, rules: LexRules) -> int:
    """Where ``text``'s statement ends under ``rules``: just after its last token but a ";"
    (what follows is semicolons, blanks and comments). Raises ``StatementRefused``."""
    lexer = _Lexer(text, rules)
    lexer.run()
    return lexer.end
