r"""sed scripts, read the way GNU sed 4.9 compiles them, so no command opens a file or a shell.

sed's own language reads and writes files and runs commands: ``r``/``R`` (read a file),
``w``/``W`` (write one), ``e`` (run a command) and the ``w`` and ``e`` flags of ``s///``. The
harness forces ``--sandbox`` as well, which makes GNU sed refuse exactly these; this check is
the layer that holds when the flag is not where sed reads it (an argv the model shaped so that
``--sandbox`` landed after ``--`` ran ``r credentials.json``), and on a sed without the flag.

``check_sed(parsed)`` joins the scripts as sed does (every ``-e``/``--expression`` in order,
else the first operand; consecutive ``-e`` scripts behave as lines of one script, which is how
``-e 'a\' -e 'w x'`` makes ``w x`` text) and parses them with ``compile_program``'s grammar
(sed/compile.c): addresses (``/re/I``, ``\cREc``, ``N~S``, ``$``, ``addr,+N``), ``!``,
blocks, labels (they end at a blank, ``;``, ``}`` or ``#``, and the next command may follow
without a separator: ``b x w f`` writes), text of ``a``/``i``/``c`` (to an unescaped newline),
``s`` and ``y`` with any delimiter (a backslash escapes it; in a regex a bracket expression
hides it: ``s/[/]/x/``), ``s`` flags with blanks between them, ``#`` comments. What it
cannot read the way sed would is refused too, rather than guessed.
"""

from __future__ import annotations

from rho_domain.errors import CommandRefused
from rho_domain.shell.options import Parsed

_BLANKS = " \t"
_SPACES = " \t\n\v\f\r"
_SIMPLE = frozenset("=dDFgGhHnNpPzx")
_FILES = frozenset("rRwW")
_LABEL_END = frozenset(" \t\n;}#")


class _Refusal(Exception):
    """A reason the script is refused, raised deep in the parse."""


class _Script:
    def __init__(self, text: str) -> None:
        self.s = text
        self.i = 0

    def next(self) -> str:
        """The next character, or "" at the end (sed's EOF)."""
        ch = self.s[self.i : self.i + 1]
        self.i += 1
        return ch

    def back(self) -> None:
        """Give back the character ``next`` returned (also the end: ``next`` always counts)."""
        self.i -= 1

    def nonblank(self) -> str:
        ch = self.next()
        while ch and ch in _BLANKS:
            ch = self.next()
        return ch

    def integer(self, ch: str) -> None:
        if not ch.isdigit() or not ch.isascii():
            raise _Refusal("a number was expected")
        while (ch := self.next()) and ch.isdigit() and ch.isascii():
            pass
        self.back()

    def end_of_command(self) -> None:
        ch = self.nonblank()
        if ch in ("}", "#"):
            self.back()
        elif ch not in ("", "\n", ";"):
            raise _Refusal(f"unexpected {ch!r} after a command")

    def label(self) -> None:
        ch = self.nonblank()
        while ch and ch not in _LABEL_END:
            ch = self.next()
        self.back()

    def delimited(self, slash: str, *, regex: bool) -> None:
        """One part of ``s``/``y``/an address, up to the unescaped ``slash``."""
        if not slash or slash == "\n" or not slash.isascii():
            raise _Refusal("a delimiter is missing or not a single-byte character")
        while (ch := self.next()) and ch != "\n":
            if ch == slash:
                return
            if ch == "\\":
                if not self.next():
                    break
            elif ch == "[" and regex and self.bracket() != "]":
                break
        raise _Refusal("an unterminated regular expression, s or y command")

    def bracket(self) -> str:
        """snarf_char_class: skip a bracket expression; return the character that ended it."""
        ch = self.next()
        if ch == "^":
            ch = self.next()
        if ch == "]":
            ch = self.next()
        state, delim = 0, ""
        while True:
            if ch in ("", "\n"):
                return ch
            if ch in ".:=":
                if state == 1:
                    state, delim = 2, ch
                    ch = self.next()
                    continue
                if state == 2 and ch == delim:
                    state = 3
                    ch = self.next()
                    continue
            elif ch == "[":
                state = 1 if state == 0 else state
                ch = self.next()
                continue
            elif ch == "]":
                if state in (0, 1):
                    return ch
                if state == 3:
                    state = 0
            state &= ~1
            ch = self.next()

    def address(self, ch: str) -> bool:
        if ch in ("/", "\\"):
            self.delimited(self.next() if ch == "\\" else ch, regex=True)
            while self.nonblank() in ("I", "M"):
                pass
            self.back()
        elif ch.isdigit() and ch.isascii():
            self.integer(ch)
            if self.nonblank() == "~":
                self.integer(self.nonblank())
            else:
                self.back()
        elif ch in ("+", "~"):
            self.integer(self.nonblank())
        elif ch != "$":
            return False
        return True

    def text(self) -> None:
        """The text of a/i/c, up to an unescaped newline (a backslash escapes any character)."""
        ch = self.nonblank()
        if not ch:
            raise _Refusal("a, i and c need text")
        if ch == "\\":
            # the character after a backslash here is text as it is, never an escape (a
            # newline starts the text on the next line): a, two backslashes, a newline and
            # "w f" is one line of text, then a w command
            self.next()
            ch = self.next()
        while ch and ch != "\n":
            if ch == "\\":
                self.next()
            ch = self.next()

    def substitute(self) -> None:
        slash = self.next()
        self.delimited(slash, regex=True)
        self.delimited(slash, regex=False)
        while True:
            ch = self.nonblank()
            if ch == "w":
                raise _Refusal("the w flag of s writes a file")
            if ch == "e":
                raise _Refusal("the e flag of s runs the pattern space as a command")
            if ch in ("}", "#"):
                self.back()
                return
            if ch in ("", "\n", ";"):
                return
            if ch.isdigit() and ch.isascii():
                self.integer(ch)
            elif ch not in "gpiImM":
                raise _Refusal(f"unknown flag {ch!r} of s")

    def program(self) -> None:
        depth = 0
        while True:
            ch = self.next()
            while ch and ch in _SPACES + ";":
                ch = self.next()
            if not ch:
                break
            addressed = self.address(ch)
            if addressed:
                ch = self.nonblank()
                if ch == ",":
                    if not self.address(self.nonblank()):
                        raise _Refusal("an address is missing after ','")
                    ch = self.nonblank()
            if ch == "!":
                ch = self.nonblank()
            depth = self.command(ch, addressed, depth)
        if depth:
            raise _Refusal("an unmatched '{'")

    def command(self, ch: str, addressed: bool, depth: int) -> int:
        """Parse one command whose letter is ``ch``; return the block depth after it."""
        if ch == "e":
            raise _Refusal("the e command runs a shell command")
        if ch in _FILES:
            raise _Refusal(f"the {ch} command {'reads' if ch in 'rR' else 'writes'} a file")
        if ch == "#" and not addressed:
            while self.next() not in ("", "\n"):
                pass
        elif ch in ("v", "b", "t", "T") or (ch == ":" and not addressed):
            self.label()
        elif ch == "{":
            return depth + 1
        elif ch == "}" and not addressed and depth:
            self.end_of_command()
            return depth - 1
        elif ch in ("a", "i", "c"):
            self.text()
        elif ch in ("q", "Q", "l", "L"):
            arg = self.nonblank()
            if arg.isdigit() and arg.isascii():
                self.integer(arg)
            elif arg:
                self.back()
            self.end_of_command()
        elif ch in _SIMPLE:
            self.end_of_command()
        elif ch == "s":
            self.substitute()
        elif ch == "y":
            slash = self.next()
            self.delimited(slash, regex=False)
            self.delimited(slash, regex=False)
            self.end_of_command()
        else:
            raise _Refusal(f"unknown command {ch!r}" if ch else "a command is missing")
        return depth


def scripts(parsed: Parsed) -> tuple[str, ...]:
    """The scripts sed runs for its parsed arguments: every -e in order, else the first
    operand."""
    given = tuple(v or "" for name, v in parsed.options if name in ("e", "expression"))
    return given or parsed.operands[:1]


def check_sed(parsed: Parsed) -> None:
    """Refuse a sed script that reads or writes a file or runs a command (``r R w W e``, the
    ``w`` and ``e`` flags of ``s``), or that cannot be read the way GNU sed reads it."""
    script = _Script("\n".join(scripts(parsed)))
    try:
        script.program()
    except _Refusal as refusal:
        raise CommandRefused(
            f"sed: {refusal} (at character {min(script.i, len(script.s))} of the script); "
            "the restricted shell runs only scripts that read their input and print"
        ) from None
