"""The words ``xargs``, ``parallel`` and ``find -exec`` fill in (``shell.destructive``).

Besides what they append, both put each input item into the words of their command wherever
a replacement string stands: ``xargs -I X curl URL -o X`` writes where the input says, and so
does ``xargs -I X sh -c 'cp a X'`` (inside a shell string), ``xargs -i tee {}``, ``parallel
curl URL -o {.}``. A word holding a replacement string is unknown to the check (None), as
a glob is, so the destination rule asks and a shell string holding one cannot be read: it
was read as written (``cp a X``: a file named X in the workspace) and ran unasked.

The strings: xargs' ``-I R``, ``-IR``, ``--replace[=R]``, ``-i[R]`` (``{}`` by default) and
BSD's ``-J R``; parallel's ``{}`` family (any word holding ``{`` and ``}``: ``{.}``, ``{/}``,
``{1}``...) and its ``-I R``, ``--replace R``, ``--extensionreplace R``, ``--er R``...
parallel's Perl code (``{= perl =}``, ``--rpl``, ``--parens``, ``--plus``' strings with an
argument) asks (``shell.destructive_parallel``). ``find``'s
``-exec``, ``-execdir``, ``-ok`` and ``-okdir`` put each found path where ``{}`` stands in
their command, which ends at ``;`` or ``+`` (``find / -name authorized_keys -exec cp k {}
';'`` writes every file found: its ``;`` was read as cp's destination).

Contract: ``replaced(argv) -> tuple[Arg, ...]``: an xargs or parallel command's words with each
one a replacement string stands in as None; ``filled``;
``command_end(first, argv, start)``: where the command a wrapper runs from ``start`` ends;
``appends_unknown(first, argv)``; ``appender_within(command)``: the xargs or
parallel command a wrapper runs (``sudo xargs gzip``), judged as a command of its own.
"""

from __future__ import annotations

from collections.abc import Sequence

from rho_domain.shell.destructive_parallel import SEPARATE_VALUES, perl_reason
from rho_domain.shell.destructive_table import program_name
from rho_domain.shell.destructive_words import Arg
from rho_domain.shell.syntax_tree import SimpleCommand

_XARGS_VALUED = "adEeLlnPs"  # xargs' short options that take a value
# parallel's options whose value is a replacement string of its own
_PARALLEL_VALUED = frozenset(
    ["-I", "--replace", "--extensionreplace", "--er", "--basenamereplace", "--bnr",
     "--dirnamereplace", "--dnr", "--basenameextensionreplace", "--bner", "--seqreplace",
     "--slotreplace"]
)  # fmt: skip


def replaced(argv: Sequence[Arg]) -> tuple[Arg, ...]:
    """``argv`` (``xargs`` or ``parallel`` first) with every word after the option naming a
    replacement string that holds one as None."""
    parallel = program_name(argv[0]) == "parallel"
    strings = _parallel_strings(argv) if parallel else _xargs_strings(argv)
    words: list[Arg] = list(argv[:1])
    for index, word in enumerate(argv[1:], 1):
        held = word is not None and any(s in word for at, s in strings if index > at)
        braced = parallel and word is not None and "{" in word and "}" in word
        words.append(None if held or braced else word)
    return tuple(words)


def _xargs_strings(argv: Sequence[Arg]) -> list[tuple[int, str]]:
    """(index of the word after which it holds, string) for xargs' replacement strings."""
    found: list[tuple[int, str]] = []
    for index, word in enumerate(argv[1:], 1):
        if word is None or not word.startswith("-"):
            continue
        following = argv[index + 1] if index + 1 < len(argv) else None
        if word == "--replace":
            found.append((index, "{}"))
        elif word.startswith("--replace="):
            found.append((index, word.split("=", 1)[1] or "{}"))
        elif not word.startswith("--"):
            found.extend(_cluster_string(word[1:], index, following))
    return [(at, s) for at, s in found if s]


def _cluster_string(letters: str, index: int, following: Arg) -> list[tuple[int, str]]:
    """The replacement string a short cluster (``-I X``, ``-rIX``, ``-i``) names."""
    for at, letter in enumerate(letters):
        rest = letters[at + 1 :]
        if letter in "IJ":
            return [(index, rest)] if rest else [(index + 1, following or "")]
        if letter == "i":
            return [(index, rest or "{}")]
        if letter in _XARGS_VALUED:  # -n 1, -d x, -a file: the rest is its value
            return []
    return []


def _parallel_strings(argv: Sequence[Arg]) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    for index, word in enumerate(argv[1:], 1):
        following = argv[index + 1] if index + 1 < len(argv) else None
        if word in _PARALLEL_VALUED and following:
            found.append((index + 1, following))
        elif word is not None and "=" in word and word.split("=", 1)[0] in _PARALLEL_VALUED:
            found.append((index, word.split("=", 1)[1]))
        elif word is not None and word.startswith("-I") and len(word) > 2:
            found.append((index, word[2:]))
    return [(at, s) for at, s in found if s]


def filled(
    first: Arg, argv: Sequence[Arg], named: Sequence[Arg]
) -> tuple[tuple[Arg, ...], tuple[Arg, ...], str]:
    """``argv`` and ``named`` (its words as given, a glob's pattern in place) with the words
    ``first`` fills from its input as None when it is xargs or parallel, and the reason
    parallel's Perl code asks, or ""."""
    if first == "find":
        return _found(argv), _found(named), ""
    if first not in ("xargs", "parallel"):
        return tuple(argv), tuple(named), ""
    words = replaced(argv)
    why = perl_reason(argv) if first == "parallel" else ""
    program = _program_index(argv, parallel=first == "parallel")
    if why or program is None or program >= len(argv):  # xargs --: runs echo (crashed here)
        return words, replaced(named), why
    if argv[program] is None:
        why = f"the program {first} runs is a glob, which the approval check cannot see: name it"
    elif words[program] is None:
        why = f"{first} runs a program its input names ({argv[program]} holds a replacement string)"
    return words, replaced(named), why


_FIND_RUNS = frozenset(["-exec", "-execdir", "-ok", "-okdir"])


def _found(argv: Sequence[Arg]) -> tuple[Arg, ...]:
    """``find``'s words with each word of an ``-exec`` command holding ``{}`` as None."""
    words: list[Arg] = []
    inside = False
    for word in argv:
        if inside and word in (";", "+"):
            inside = False
        elif word in _FIND_RUNS:
            inside = True
        words.append(None if inside and word is not None and "{}" in word else word)
    return tuple(words)


def command_end(first: Arg, argv: Sequence[Arg], start: int) -> int:
    """Where the command ``first`` runs from ``argv[start]`` ends: at the ``;`` or ``+`` of
    the find ``-exec`` it stands in (``find -exec sudo cp a {} ;`` too), else at the end."""
    if first != "find":
        return len(argv)
    inside = False
    for index, word in enumerate(argv):
        if inside and word in (";", "+"):
            if index >= start:
                return index
            inside = False
        elif word in _FIND_RUNS:
            inside = True
    return len(argv)


def appender_within(command: SimpleCommand) -> SimpleCommand | None:
    """The xargs or parallel command a wrapper runs (``sudo xargs``, ``nice parallel``), as a
    command of its own, or None."""
    patterns = command.patterns or (None,) * len(command.argv)
    for index in range(1, len(command.argv)):
        if patterns[index] is None and program_name(command.argv[index]) in _APPENDERS:
            return SimpleCommand(argv=command.argv[index:], patterns=tuple(patterns[index:]))
    return None


_APPENDERS = ("xargs", "parallel")


def appends_unknown(first: Arg, argv: Sequence[Arg]) -> bool:
    """True when ``first`` (xargs, parallel) appends words the check cannot see: parallel
    given all its items after ``:::`` (``parallel gzip ::: a b``) appends only those, which
    are among its words already; ``::::``, ``-a`` and standard input are files unread."""
    if first == "xargs":
        return True
    if first != "parallel" or ":::" not in argv:
        return first == "parallel"
    unread = ("::::", "-a", "--arg-file", "--a", ":::+", "::::+")
    return any(w is None or w in unread or w.startswith("--arg-file=") for w in argv)


def _program_index(argv: Sequence[Arg], *, parallel: bool) -> int | None:
    """Where the command xargs or parallel runs starts: the first word that is neither an
    option nor the value of one given apart (``-I X``, ``-n 1``, ``--arg-file FILE``)."""
    index = 1
    while index < len(argv):
        word = argv[index]
        if word is None or word == "--" or not word.startswith("-"):
            return index + (word == "--")
        valued = word in SEPARATE_VALUES or (parallel and word in _PARALLEL_VALUED)
        index += 2 if valued else 1
    return None
