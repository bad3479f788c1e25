"""awk programs: a tokenizer, the static check, and which implementation may run them.

The static check is what lets an awk without a sandbox mode run at all. It refuses exactly
what ``gawk --sandbox`` refuses at run time (``system()``, every ``getline``, output
redirection and pipes in ``print``/``printf``) plus ``close``, ``fflush``, ``|&``,
``@load``/``@include``/indirect calls, gawk's ``SYMTAB`` (indirect access to ``ARGV``), and
program files (``-f``, ``-E``, ``-i``, ``-l``).

It works on tokens, not on text: strings, regular expressions and comments are opaque, so
``print "a > b"`` is fine while ``$0 ~ /"/ {system("id")} /"/`` is not fooled (a string
stripper reads ``"/ {system("`` as a string). Whether ``/`` starts a regular expression
follows mawk's scanner (a regex unless the previous token can end an operand: a number,
string, variable, ``)``, ``]``, a regex, ``$n``, ``++``/``--``); where awks disagree
(after a builtin name such as ``length``: mawk reads a regex, gawk a division) the program
is refused rather than guessed.

Implementations (``AwkFlavor``, detected by the executor with ``VERSION_ARGS``): gawk runs
with ``--sandbox`` on top of the check (it is preferred whenever installed); mawk, which has
no sandbox mode (``-W sandbox`` is accepted and ignored by 1.3.4), runs on the check alone;
any other awk (BusyBox, the one true awk) is refused with a message naming gawk.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from rho_domain.errors import CommandRefused
from rho_domain.shell.options import Spelling, spec, split_options
from rho_domain.shell.rebuild import rebuild

AwkFlavor = Literal["gawk", "mawk", "other"]
VERSION_ARGS = ("-W", "version")

# Rebuilt with the short letters: mawk knows no long options.
_SPEC = spec(
    "",
    "Fv",
    "",
    "field-separator assign",
    "",
    spelling=Spelling(short_for={"field-separator": "F", "assign": "v"}),
)
_FORBIDDEN = frozenset({"system", "getline", "close", "fflush"})
_BUILTINS = frozenset(
    [
        "length",
        "substr",
        "index",
        "split",
        "sub",
        "gsub",
        "match",
        "sprintf",
        "sin",
        "cos",
        "atan2",
        "exp",
        "log",
        "int",
        "sqrt",
        "rand",
        "srand",
        "tolower",
        "toupper",
    ]
)
_KEYWORDS = frozenset(
    [
        "BEGIN",
        "END",
        "function",
        "func",
        "if",
        "else",
        "while",
        "for",
        "do",
        "break",
        "continue",
        "next",
        "nextfile",
        "exit",
        "return",
        "delete",
        "in",
        "print",
        "printf",
    ]
)
_OPERAND_END = frozenset({"number", "string", "name", "regex", ")", "]", "field", "++", "--"})
_OPERATORS: tuple[str, ...] = (
    "|&",
    ">>",
    "||",
    "&&",
    "==",
    "!=",
    "<=",
    ">=",
    "++",
    "--",
    "+=",
    "-=",
    "*=",
)
_OPERATORS += ("/=", "%=", "^=", "**", "!~")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NUMBER = re.compile(r"(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def flavor_from_version(text: str) -> AwkFlavor:
    """The implementation from the first line of ``awk -W version`` (stdout and stderr)."""
    first = text.strip().splitlines()[0] if text.strip() else ""
    if first.startswith("GNU Awk"):
        return "gawk"
    if first.startswith("mawk"):
        return "mawk"
    return "other"


def _refuse(reason: str) -> CommandRefused:
    return CommandRefused(f"awk: {reason}")


class _Scanner:
    def __init__(self, program: str) -> None:
        self.s = program
        self.i = 0
        self.tokens: list[tuple[str, str]] = []  # (kind, text)

    def previous(self) -> tuple[str, str]:
        return self.tokens[-1] if self.tokens else ("newline", "\n")

    def run(self) -> list[tuple[str, str]]:
        while self.i < len(self.s):
            ch = self.s[self.i]
            if ch in " \t":
                self.i += 1
            elif ch == "\\" and self.s[self.i + 1 : self.i + 2] == "\n":
                self.i += 2
            elif ch == "\n":
                self.add("newline", ch, 1)
            elif ch == "#":
                end = self.s.find("\n", self.i)
                self.i = len(self.s) if end < 0 else end
            elif ch == '"':
                self.literal("string", '"', "string")
            elif ch == "/" and self.regex_here():
                self.literal("regex", "/", "regular expression")
            elif match := _NAME.match(self.s, self.i):
                self.name(match.group())
            elif match := _NUMBER.match(self.s, self.i):
                self.add("number", match.group(), len(match.group()))
            elif ch == "$" and (match := _NUMBER.match(self.s, self.i + 1)):
                self.add("field", "$" + match.group(), 1 + len(match.group()))
            elif ch == "@":
                raise _refuse("'@' (gawk directives and indirect calls) is not allowed")
            else:
                op = next((o for o in _OPERATORS if self.s.startswith(o, self.i)), ch)
                if op == "|&":
                    raise _refuse("'|&' (two-way pipe to a command) is not allowed")
                self.add(op, op, len(op))
        return self.tokens

    def add(self, kind: str, text: str, width: int) -> None:
        self.tokens.append((kind, text))
        self.i += width

    def name(self, word: str) -> None:
        if word in _FORBIDDEN:
            raise _refuse(f"{word!r} runs commands or touches files; not allowed")
        if word == "SYMTAB":
            # gawk's table of every global variable: SYMTAB["AR" "GV"] is ARGV under a name no
            # text check sees, and adds files to read when --sandbox is not in force.
            raise _refuse("'SYMTAB' (gawk's indirect access to ARGV, ARGC...) is not allowed")
        kind = "keyword" if word in _KEYWORDS else "builtin" if word in _BUILTINS else "name"
        self.add(kind, word, len(word))

    def regex_here(self) -> bool:
        kind, text = self.previous()
        if kind == "builtin":
            raise _refuse(
                f"'/' after {text!r} is read as a regex by mawk and as a division by gawk; "
                f"write {text}() or parenthesise"
            )
        return kind not in _OPERAND_END

    def literal(self, kind: str, close: str, what: str) -> None:
        """Add the string or regex literal that starts at ``self.i`` as one opaque token."""
        j = self.i + 1
        while j < len(self.s) and self.s[j] != "\n":
            ch = self.s[j]
            if ch == "\\":
                j += 2
            elif ch == "[" and close == "/":
                j = self.bracket_end(j)
            elif ch == close:
                self.add(kind, self.s[self.i : j + 1], j + 1 - self.i)
                return
            else:
                j += 1
        raise _refuse(f"unterminated {what} in the program")

    def bracket_end(self, j: int) -> int:
        """Index just past the bracket expression at ``j`` (a ``/`` inside does not end it)."""
        k = j + 1
        k += self.s[k : k + 1] == "^"
        k += self.s[k : k + 1] == "]"
        while k < len(self.s) and self.s[k] != "\n":
            if self.s.startswith("[:", k) and (end := self.s.find(":]", k + 2)) >= 0:
                k = end + 2
            elif self.s[k] == "\\":
                k += 2
            elif self.s[k] == "]":
                return k + 1
            else:
                k += 1
        raise _refuse("unterminated bracket expression in a regular expression")


def _print_redirects(tokens: Sequence[tuple[str, str]]) -> bool:
    """True when a print/printf statement has a top-level ``>``, ``>>`` or ``|``."""
    for start, (kind, text) in enumerate(tokens):
        if kind != "keyword" or text not in ("print", "printf"):
            continue
        depth = 0
        for inner, _ in tokens[start + 1 :]:
            if inner in ("(", "["):
                depth += 1
            elif inner in (")", "]"):
                if depth == 0:
                    break
                depth -= 1
            elif inner in (";", "}", "newline") and depth == 0:
                break
            elif inner in (">", ">>", "|") and depth == 0:
                return True
    return False


def check_awk(args: Sequence[str]) -> None:
    """Validate awk's options and program text (the first operand)."""
    parsed = split_options("awk", args, _SPEC)
    if not parsed.operands:
        raise _refuse("the program must be given inline (no -f program files)")
    tokens = _Scanner(parsed.operands[0]).run()
    if _print_redirects(tokens):
        raise _refuse(
            "output redirection or pipe in print/printf is not allowed "
            "(parenthesise comparisons: print ($1 > 3))"
        )


def awk_argv(name: str, args: Sequence[str], flavor: AwkFlavor) -> tuple[str, ...]:
    """The argv to run for a checked awk command on an implementation of ``flavor``: rebuilt
    from its parsed form (``shell.rebuild``), gawk's ``--sandbox`` always first.

    ``name`` is the program to execute (``gawk`` when it is installed). Raises
    ``CommandRefused`` for an awk that is neither gawk nor mawk.
    """
    if flavor in ("gawk", "mawk"):
        forced = ("--sandbox",) if flavor == "gawk" else ()
        built = rebuild(name, split_options("awk", args, _SPEC), _SPEC)
        return (built[0], *forced, *built[1:])
    raise _refuse(
        "the awk installed here is neither gawk nor mawk (BusyBox or another awk without a "
        "sandbox mode), so the restricted shell does not run it; install gawk "
        "(apt-get install gawk) or use grep, sed -n or cut"
    )
