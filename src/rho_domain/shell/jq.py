r"""jq in the restricted shell: its own argument grammar, and a program that opens no file itself.

jq's language reaches the filesystem on its own: ``import "credentials" as $c {search: "."};``
reads ``credentials.json`` from any directory the metadata names, ``include "x";`` reads
``x.jq``, and ``"x" | modulemeta`` reads a module's file. ``-L``/``--library-path`` only adds to
the search list (jq 1.6 measured: ``-L /nonexistent`` still imports through ``{search: "."}``),
so the fence is the program text: ``check_jq`` finds the program the way jq does and refuses
those three words wherever they are code. The files jq opens by name on the command line
(input operands, ``--rawfile``/``--slurpfile`` values) are words the executor judges by real
path like every other; ``-f``/``--from-file`` (a program the check cannot see), ``-L`` and
``--argfile`` are refused.

The tokenizer follows jq's lexer: strings are opaque except their ``\(...)`` interpolations,
which are code again; ``#`` comments end at the newline, and a comment ending in a backslash is
refused (jq 1.7.1 continues such a comment onto the next line, jq 1.6 does not: the two would
read different programs). ``.import`` (a field), ``$import`` (a variable), ``"import"`` and an
object key ``{import: 1}`` are not directives and pass.

Contract: ``check_jq(args)`` (arguments without the program name) returns None or raises
``CommandRefused`` naming what to change.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rho_domain.errors import CommandRefused

_FLAGS = "rcSesnjaMCR"
_LONG_FLAG_NAMES = (
    "raw-output compact-output sort-keys exit-status slurp null-input join-output "
    "ascii-output monochrome-output color-output tab raw-input seq stream raw-output0 "
    "args jsonargs"
)
_LONG_FLAGS = frozenset(_LONG_FLAG_NAMES.split())
# jq's options that take their values as the next one or two arguments (never --opt=value).
_LONG_VALUED = {"indent": 1, "arg": 2, "argjson": 2, "slurpfile": 2, "rawfile": 2}
_FILE_PROGRAM = frozenset({"f", "from-file", "L", "library-path", "argfile"})
# Words of jq's language that open files: module directives and module metadata.
FORBIDDEN = frozenset({"import", "include", "modulemeta"})
_IDENT = re.compile(r"(?:[A-Za-z_][A-Za-z_0-9]*::)*[A-Za-z_][A-Za-z_0-9]*")
_BLANK = re.compile(r"(?:\s+|#[^\n]*)*")


def _refuse(reason: str) -> CommandRefused:
    return CommandRefused(f"jq: {reason}")


def _file_option(option: str) -> CommandRefused:
    return _refuse(
        f"option {option!r} is not allowed: it makes jq read a program or module file the "
        "restricted shell cannot check; give the program inline"
    )


def program_text(args: Sequence[str]) -> str | None:
    """The program jq runs for ``args`` (its first positional argument), or None when there is
    none; raises ``CommandRefused`` for an option outside the allowlist, wherever it is (jq
    reads options after the program too: ``jq . -f x`` would take ``.`` as a file name)."""
    positional: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg == "--":
            positional.extend(args[i:])
            break
        if arg.startswith("--"):
            name = arg[2:]
            if name in _FILE_PROGRAM:
                raise _file_option(arg)
            if name in _LONG_VALUED:
                i += _LONG_VALUED[name]
                if i > len(args):
                    raise _refuse(f"option {arg} needs {_LONG_VALUED[name]} value(s)")
            elif name not in _LONG_FLAGS:
                raise _refuse(
                    f"option {arg!r} is not allowed in the restricted shell (only read-only "
                    "options, spelled out in full; jq takes no --option=value)"
                )
        elif arg.startswith("-") and len(arg) > 1:
            for ch in arg[1:]:
                if ch in _FILE_PROGRAM:
                    raise _file_option(f"-{ch}")
                if ch not in _FLAGS:
                    raise _refuse(f"option '-{ch}' is not allowed in the restricted shell")
        else:
            positional.append(arg)
    return positional[0] if positional else None


class _Scanner:
    """jq's lexer, reduced to what matters here: which identifiers are code."""

    def __init__(self, text: str) -> None:
        self.s = text
        self.i = 0

    def code(self, closing: str | None) -> None:
        """Scan code up to the unmatched ``closing`` (``)`` of an interpolation) or the end."""
        depth = 0
        while self.i < len(self.s):
            ch = self.s[self.i]
            if ch == "#":
                self.comment()
            elif ch == '"':
                self.string()
            elif self.s.startswith("..", self.i):
                self.i += 2  # recursion, one token: in "..import" the word is code
            elif ch in "$.@" and (match := _IDENT.match(self.s, self.i + 1)):
                self.i = match.end()  # a variable, a field or a format: never a directive
            elif match := _IDENT.match(self.s, self.i):
                self.word(match.group(), match.end())
            elif ch == "(":
                depth += 1
                self.i += 1
            elif ch == ")" and closing and depth == 0:
                self.i += 1
                return
            else:
                depth -= ch == ")"
                self.i += 1
        if closing:
            raise _refuse("unterminated string interpolation \\( in the program")

    def comment(self) -> None:
        end = self.s.find("\n", self.i)
        end = len(self.s) if end < 0 else end
        if self.s[self.i : end].rstrip("\r").endswith("\\"):
            raise _refuse(
                "a comment ending in a backslash continues onto the next line in jq 1.7.1 but "
                "not in older jq; remove the backslash"
            )
        self.i = end

    def string(self) -> None:
        self.i += 1
        while self.i < len(self.s):
            ch = self.s[self.i]
            if ch == '"':
                self.i += 1
                return
            if ch == "\\" and self.s.startswith("\\(", self.i):
                self.i += 2
                self.code(")")
            else:
                self.i += 2 if ch == "\\" else 1
        raise _refuse("unterminated string in the program")

    def word(self, word: str, end: int) -> None:
        self.i = end
        if word not in FORBIDDEN:
            return
        after = _BLANK.match(self.s, end)
        if after is not None and self.s.startswith(":", after.end()):
            return  # an object key ({import: 1}), not a directive
        raise _refuse(
            f"{word!r} reads module or data files from the filesystem; not allowed "
            "(pass data with --arg, --argjson, --slurpfile or --rawfile)"
        )


def check_jq(args: Sequence[str]) -> None:
    """Validate jq's arguments and program; raise ``CommandRefused`` naming the reason."""
    program = program_text(args)
    if program is not None:
        _Scanner(program).code(None)
