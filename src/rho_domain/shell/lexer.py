r"""Tokenizer for the bash subset the restricted shell understands.

It reads a command line the way bash would, but only as far as it fully understands it: every
construct that would make bash *compute* a word (parameter, command, arithmetic, process, brace
or tilde expansion, ANSI-C quoting, unquoted expanding here-documents) raises
``CommandRefused`` naming the construct. What comes out are literal words (quotes removed),
operators and redirections (``shell.tokens``), so the argv that is later validated is exactly
the argv that runs.
The one expansion kept is pathname expansion: a word with an unquoted ``*``, ``?`` or ``[``
carries a ``pattern`` (quoted characters escaped with ``\``) that ``shell.glob`` expands
through the executor at run time, as bash would.

Contract: ``tokenize(text) -> list[Token]``; raises ``CommandRefused`` with a reason.
"""

from __future__ import annotations

import re

import attrs

from rho_domain.errors import CommandRefused
from rho_domain.shell.tokens import Token, TokenKind

__all__ = ["MAX_LENGTH", "Token", "TokenKind", "check_hygiene", "tokenize"]

MAX_LENGTH = 8192

# Characters that end an unquoted word (bash "metacharacters").
_META = frozenset(" \t\n|&;()<>")
_GLOB = frozenset("*?[")
_NAME_START = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")
# What may follow "$" and make bash expand something.
_EXPANDING_AFTER_DOLLAR = _NAME_START | frozenset("0123456789{([@*#?$!-'\"")

# The unquoted head of an assignment word: NAME=, NAME+=, NAME[...]=
_ASSIGNS = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[^\]'\"]*\])?\+?=")


def check_hygiene(text: str) -> None:
    """Refuse input the lexer must never see: NUL, CR and other control characters, huge input."""
    if not text.strip():
        raise CommandRefused("empty command")
    if len(text) > MAX_LENGTH:
        raise CommandRefused(f"command longer than {MAX_LENGTH} characters")
    for ch in text:
        code = ord(ch)
        if (code < 32 and ch not in "\n\t") or code == 127:
            raise CommandRefused(f"control character {code:#04x} in the command")
        if 0x80 <= code < 0xA0 or ch in "\u200b\u200c\u200d\u2028\u2029\ufeff":
            raise CommandRefused(f"invisible or control character U+{code:04X} in the command")


class _Lexer:
    def __init__(self, text: str) -> None:
        self.s = text
        self.i = 0
        self.tokens: list[Token] = []
        self.pending_heredocs: list[tuple[int, str, bool, bool]] = []

    def peek(self, offset: int = 0) -> str:
        j = self.i + offset
        return self.s[j] if j < len(self.s) else ""

    def run(self) -> list[Token]:
        while self.i < len(self.s):
            ch = self.peek()
            if ch in " \t":
                self.i += 1
            elif ch == "\\" and self.peek(1) == "\n":
                self.i += 2  # line continuation between words
            elif ch == "\n":
                self.i += 1
                self.tokens.append(Token(kind="newline", text="\n"))
                self.read_heredoc_bodies()
            elif ch == "#":
                while self.i < len(self.s) and self.s[self.i] != "\n":
                    self.i += 1
            elif ch in "|&;()":
                self.operator()
            elif ch in "<>":
                self.redirect(None)
            else:
                self.word()
        if self.pending_heredocs:
            raise CommandRefused("here-document without its body and delimiter line")
        return self.tokens

    def operator(self) -> None:
        two = self.s[self.i : self.i + 2]
        if two == "&>":
            self.redirect(None)
            return
        if two in ("||", "&&", "|&", ";;", ";&"):
            self.i += 2
            self.tokens.append(Token(kind="op", text=two))
            return
        self.i += 1
        self.tokens.append(Token(kind="op", text=two[0]))

    def redirect(self, fd: int | None) -> None:
        for op in ("<<<", "<<-", "&>>", "<<", ">>", ">|", "<>", "<&", ">&", "&>", "<", ">"):
            if self.s.startswith(op, self.i):
                break
        self.i += len(op)
        if self.peek() == "(" and op in ("<", ">"):
            raise CommandRefused(f"process substitution {op}( ... ) is not allowed")
        self.tokens.append(Token(kind="redirect", text=op, fd=fd))
        if op in ("<<", "<<-"):
            while self.peek() in (" ", "\t"):
                self.i += 1
            if not self.peek() or self.peek() in _META:
                raise CommandRefused("here-document without a delimiter word")
            delim = self.word(collect=False)
            self.pending_heredocs.append(
                (len(self.tokens) - 1, delim.text, delim.quoted, op == "<<-")
            )

    def read_heredoc_bodies(self) -> None:
        for index, delim, quoted, strip_tabs in self.pending_heredocs:
            lines: list[str] = []
            while True:
                if self.i >= len(self.s):
                    raise CommandRefused(f"here-document not terminated by {delim!r}")
                end = self.s.find("\n", self.i)
                end = len(self.s) if end < 0 else end
                line = self.s[self.i : end]
                self.i = end + 1
                if strip_tabs:
                    line = line.lstrip("\t")
                if line == delim:
                    break
                lines.append(line)
            body = "".join(line + "\n" for line in lines)
            if not quoted and any(c in body for c in "$`\\"):
                raise CommandRefused(
                    "unquoted here-document with $, ` or \\ would be expanded; quote the "
                    "delimiter (<<'EOF') to pass the text literally"
                )
            self.tokens[index] = attrs.evolve(self.tokens[index], heredoc=body)
        self.pending_heredocs.clear()

    def word(self, *, collect: bool = True) -> Token:
        start = self.i
        out: list[str] = []
        pattern: list[str] = []  # the same characters, quoted ones escaped for shell.glob
        magic = False
        quoted = False
        head = ""  # the characters before the first quoted one: bash's NAME= must be there
        while self.i < len(self.s) and self.s[self.i] not in _META:
            ch = self.s[self.i]
            at_start = self.i == start
            if ch == "'":
                head, quoted = (head if quoted else "".join(out)), True
                end = self.s.find("'", self.i + 1)
                if end < 0:
                    raise CommandRefused("unterminated single quote")
                out.append(self.s[self.i + 1 : end])
                pattern.extend("\\" + c for c in self.s[self.i + 1 : end])
                self.i = end + 1
            elif ch == '"':
                head, quoted = (head if quoted else "".join(out)), True
                before = len("".join(out))
                self.double_quoted(out)
                pattern.extend("\\" + c for c in "".join(out)[before:])
            elif ch == "\\":
                nxt = self.peek(1)
                if not nxt:
                    raise CommandRefused("backslash at the end of the command")
                if nxt != "\n":  # a line continuation is removed, as bash does: no quoting
                    head, quoted = (head if quoted else "".join(out)), True
                    out.append(nxt)
                    pattern.append("\\" + nxt)
                self.i += 2
            elif ch == "$":
                self.dollar(in_double=False)
                out.append("$")
                pattern.append("$")
                self.i += 1
            elif ch == "`":
                raise CommandRefused("command substitution `...` is not allowed")
            elif ch in _GLOB:
                magic = True
                out.append(ch)
                pattern.append(ch)
                self.i += 1
            elif ch in "{}":
                raise CommandRefused(f"unquoted brace {ch!r} (brace expansion); quote it")
            elif ch == "~" and (at_start or self.s[self.i - 1] in "=:"):
                raise CommandRefused("tilde expansion (~) is not allowed; use a relative path")
            else:
                out.append(ch)
                pattern.append(ch)
                self.i += 1
        text = "".join(out)
        if (
            collect
            and self.peek()
            and self.peek() in "<>"
            and not quoted
            and text.isascii()
            and text.isdigit()
        ):
            # "2>file": a descriptor number glued to a redirection operator.
            self.redirect(int(text))
            return self.tokens[-1]
        token = Token(
            kind="word",
            text=text,
            quoted=quoted,
            pattern="".join(pattern) if magic else None,
            assigns=quoted and bool(_ASSIGNS.match(head)),
        )
        if collect:
            self.tokens.append(token)
        return token

    def double_quoted(self, out: list[str]) -> None:
        self.i += 1
        while True:
            if self.i >= len(self.s):
                raise CommandRefused("unterminated double quote")
            ch = self.s[self.i]
            if ch == '"':
                self.i += 1
                return
            if ch == "\\":
                nxt = self.peek(1)
                if nxt in ('"', "\\", "$", "`"):
                    out.append(nxt)
                    self.i += 2
                    continue
                if nxt == "\n":
                    self.i += 2
                    continue
                out.append("\\")
                self.i += 1
                continue
            if ch == "`":
                raise CommandRefused("command substitution `...` is not allowed")
            if ch == "$":
                self.dollar(in_double=True)
            out.append(ch)
            self.i += 1

    def dollar(self, *, in_double: bool) -> None:
        """Refuse "$" when bash would expand it; a "$" followed by nothing special is literal."""
        nxt = self.peek(1)
        if in_double and nxt == '"':
            return
        if nxt not in _EXPANDING_AFTER_DOLLAR or not nxt:
            return
        if nxt == "(":
            what = (
                "arithmetic expansion $((...))"
                if self.peek(2) == "("
                else "command substitution $(...)"
            )
        elif nxt == "[":
            what = "arithmetic expansion $[...]"
        elif nxt == "{":
            what = "parameter expansion ${...}"
        elif nxt == "'":
            what = "ANSI-C quoting $'...'"
        elif nxt == '"':
            what = 'locale quoting $"..."'
        else:
            what = "variable expansion $" + nxt
        raise CommandRefused(f"{what} is not allowed: the restricted shell runs literal words only")


def tokenize(text: str) -> list[Token]:
    """Split ``text`` into tokens, or raise ``CommandRefused`` naming what is not understood."""
    check_hygiene(text)
    return _Lexer(text).run()
