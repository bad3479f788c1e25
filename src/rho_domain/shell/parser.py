"""Parser for the restricted shell: tokens to a small syntax tree of lists, pipelines and words.

Grammar (everything else is refused with a reason)::

    list      := pipeline ( (";" | "&&" | "||" | NEWLINE) pipeline )* [";" | NEWLINE]
    pipeline  := command ( ("|" | "|&") command )*
    command   := "(" list ")" | simple
    simple    := ( WORD | redirect )+

Background jobs (``&``), ``case`` terminators, function definitions, keywords (``if``,
``for``, ``!``, ``[[``, ...), variable assignments and shell builtins other than ``cd`` never
reach the plan. There is no count cap that fails open: past the caps the line is refused.

Contract: ``parse(text) -> CommandList``; raises ``CommandRefused``. The tree's values are
syntax_tree.py.
"""

from __future__ import annotations

import re

from rho_domain.errors import CommandRefused
from rho_domain.shell.lexer import tokenize
from rho_domain.shell.syntax_tree import CommandList, Pipeline, Redirection, SimpleCommand, Subshell
from rho_domain.shell.tokens import Token

MAX_COMMANDS = 64
MAX_DEPTH = 8

KEYWORDS = frozenset(
    [
        "if",
        "then",
        "else",
        "elif",
        "fi",
        "case",
        "esac",
        "for",
        "select",
        "while",
        "until",
        "do",
        "done",
        "function",
        "time",
        "coproc",
        "{",
        "}",
        "[[",
        "]]",
        "!",
        "in",
    ]
)
# Builtins whose whole point is to change the shell or run something else.
BUILTINS = frozenset(
    [
        "alias",
        "bg",
        "bind",
        "break",
        "builtin",
        "caller",
        "command",
        "compgen",
        "complete",
        "declare",
        "dirs",
        "disown",
        "enable",
        "eval",
        "exec",
        "exit",
        "export",
        "fc",
        "fg",
        "getopts",
        "hash",
        "help",
        "history",
        "jobs",
        "kill",
        "let",
        "local",
        "logout",
        "mapfile",
        "popd",
        "pushd",
        "read",
        "readarray",
        "readonly",
        "return",
        "set",
        "shift",
        "shopt",
        "source",
        "suspend",
        "trap",
        "type",
        "typeset",
        "ulimit",
        "umask",
        "unalias",
        "unset",
        "wait",
        ".",
        ":",
    ]
)
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")


class _Parser:
    def __init__(self, tokens: list[Token]) -> None:
        self.tokens = tokens
        self.pos = 0
        self.commands = 0

    def peek(self) -> Token | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def skip_newlines(self) -> None:
        while (tok := self.peek()) is not None and tok.kind == "newline":
            self.pos += 1

    def parse_list(self, depth: int, *, closing: bool) -> CommandList:
        if depth > MAX_DEPTH:
            raise CommandRefused(f"subshells nested deeper than {MAX_DEPTH}")
        items: list[tuple[str, Pipeline]] = []
        op = ""
        expected = 0  # number of items parsed when the last operator was read
        self.skip_newlines()
        while True:
            tok = self.peek()
            if tok is None or (closing and tok.kind == "op" and tok.text == ")"):
                if (op in ("&&", "||") and len(items) == expected) or not items:
                    raise CommandRefused("syntax error: a command is missing")
                return CommandList(items=tuple(items))
            items.append((op, self.parse_pipeline(depth)))
            tok = self.peek()
            if tok is None:
                continue
            if tok.kind == "newline" or (tok.kind == "op" and tok.text == ";"):
                self.pos += 1
                op = ";"
                self.skip_newlines()
            elif tok.kind == "op" and tok.text in ("&&", "||"):
                self.pos += 1
                op = tok.text
                expected = len(items)
                self.skip_newlines()
            elif tok.kind == "op" and tok.text == ")" and closing:
                continue
            else:
                raise _unexpected(tok)

    def parse_pipeline(self, depth: int) -> Pipeline:
        commands = [self.parse_command(depth)]
        merge = []
        while (tok := self.peek()) is not None and tok.kind == "op" and tok.text in ("|", "|&"):
            self.pos += 1
            merge.append(tok.text == "|&")
            self.skip_newlines()
            commands.append(self.parse_command(depth))
        merge.append(False)
        return Pipeline(commands=tuple(commands), merge_stderr=tuple(merge))

    def parse_command(self, depth: int) -> SimpleCommand | Subshell:
        self.commands += 1
        if self.commands > MAX_COMMANDS:
            raise CommandRefused(f"more than {MAX_COMMANDS} commands in one line")
        tok = self.peek()
        if tok is not None and tok.kind == "op" and tok.text == "(":
            self.pos += 1
            if (nxt := self.peek()) is not None and nxt.kind == "op" and nxt.text == "(":
                raise CommandRefused("arithmetic command ((...)) is not allowed")
            body = self.parse_list(depth + 1, closing=True)
            end = self.peek()
            if end is None or end.kind != "op" or end.text != ")":
                raise CommandRefused("syntax error: '(' without its ')'")
            self.pos += 1
            after = self.peek()
            if after is not None and after.kind in ("word", "redirect"):
                raise CommandRefused("words or redirections after a subshell are not allowed")
            return Subshell(body=body)
        return self.parse_simple()

    def parse_simple(self) -> SimpleCommand:
        argv: list[str] = []
        patterns: list[str | None] = []
        redirections: list[Redirection] = []
        while (tok := self.peek()) is not None:
            if tok.kind == "word":
                if not argv and (not tok.quoted or tok.assigns):
                    _check_command_word(tok.text)
                if not argv and tok.pattern is not None:
                    raise CommandRefused(
                        f"{tok.text!r}: a glob cannot name the program; name it literally"
                    )
                argv.append(tok.text)
                patterns.append(tok.pattern)
                self.pos += 1
            elif tok.kind == "redirect":
                self.pos += 1
                redirections.append(self.redirection(tok))
            elif tok.kind == "op" and tok.text == "(":
                raise CommandRefused(
                    "function definitions and '(' inside a command are not allowed"
                )
            else:
                break
        if not argv:
            tok = self.peek()
            if tok is None or redirections:
                raise CommandRefused("a redirection without a command is not allowed")
            raise _unexpected(tok)
        return SimpleCommand(
            argv=tuple(argv),
            redirections=tuple(redirections),
            patterns=tuple(patterns) if any(p is not None for p in patterns) else (),
        )

    def redirection(self, tok: Token) -> Redirection:
        if tok.text in ("<<", "<<-"):
            return Redirection(op="<<", fd=tok.fd, heredoc=tok.heredoc)
        target = self.peek()
        if target is None or target.kind != "word":
            raise CommandRefused(f"redirection {tok.text} without a target")
        self.pos += 1
        if tok.text == "<<<":  # bash does not expand globs in a here-string
            return Redirection(op="<<<", fd=tok.fd, heredoc=target.text + "\n")
        if target.pattern is not None:
            raise CommandRefused(
                f"glob {target.text!r} as a redirection target is not allowed; name the file"
            )
        return Redirection(op=tok.text, fd=tok.fd, target=target.text)


def _check_command_word(word: str) -> None:
    if _ASSIGNMENT.match(word):
        raise CommandRefused(f"variable assignment {word.split('=', 1)[0]}=... is not allowed")
    if word in KEYWORDS:
        raise CommandRefused(f"shell keyword {word!r} is not supported by the restricted shell")


def _unexpected(tok: Token) -> CommandRefused:
    if tok.kind == "op" and tok.text == "&":
        return CommandRefused("background jobs (&) are not allowed")
    if tok.kind == "op" and tok.text in (";;", ";&"):
        return CommandRefused(f"{tok.text!r} (case syntax) is not allowed")
    return CommandRefused(f"syntax error near {tok.text!r}")


def parse(text: str) -> CommandList:
    """Parse a command line into a ``CommandList``, or raise ``CommandRefused``."""
    parser = _Parser(tokenize(text))
    result = parser.parse_list(0, closing=False)
    if parser.peek() is not None:
        raise _unexpected(parser.peek())  # type: ignore[arg-type]
    return result
