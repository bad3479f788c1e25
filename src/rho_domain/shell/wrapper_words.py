"""The words a wrapper reads before the command it runs (``sudo``, ``env``, ``timeout``...).

A wrapper's options, their values and its own operands (timeout's duration, chrt's priority,
taskset's mask, flock's lock file) are its words, never a command: ``timeout -s KILL 0 ls``
runs ls, not ``kill 0 ls``, and ``env -u shutdown make`` runs make. Both the walk
(``shell.destructive_walk``: which suffixes of a line are commands) and the glob reader
(``shell.destructive_readers``: ``sudo -u ls tar -cf a.tar *`` gives ``*`` to tar) read
them here.

The tables are the programs' own (GNU coreutils, util-linux, sudo 1.9, OpenBSD's doas, GNU
time, bash's ``exec`` and ``command``): a short cluster is read letter by letter (``-nu
root``), a long option by any prefix GNU getopt accepts (``--sig KILL``), a value glued or
given apart. Fail closed: an option not in a wrapper's table, an ambiguous prefix, a word the
check cannot see, ``env -S`` (its command is a string) or an operand not of its shape (a
timeout's duration that is no number: busybox's older ``timeout -s KILL rm -rf x`` runs rm)
leaves the reading unsure, and every later word is then read as a command may be.

Contract: ``command_start(argv, at) -> int | None``: where the command the wrapper at
``argv[at]`` runs starts, or None (not a wrapper, no command, or unsure);
``wrapper_words(argv, readers) -> frozenset[int]``: the positions the wrappers from
``argv[0]`` on read as their own words (and their command's, when it only reads).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import attrs

from rho_domain.shell.destructive_table import program_name
from rho_domain.shell.destructive_words import Arg
from rho_domain.value_methods import value_eq, value_hash, value_repr

_DURATION = re.compile(r"^(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?[smhd]?$")
_PRIORITY = re.compile(r"^\d+$")
_CPU_MASK = re.compile(r"^(0[xX])?[0-9a-fA-F,:\-]+$")


def _any_file(word: str) -> object:
    return not word.startswith("-")


@attrs.frozen
class _Wrapper:
    """One wrapper's options: short letters that are flags, that take a value (glued or the
    next word) or that take one only glued; long names alike; the shapes of its operands."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    flags: str = ""
    valued: str = ""
    glued_only: str = ""  # sudo -h: help alone, -hHOST a host
    long_flags: frozenset[str] = frozenset()
    long_valued: frozenset[str] = frozenset()
    operands: tuple[Callable[[str], object], ...] = ()
    assigns: bool = False  # NAME=value words before the command (env, sudo)


def _longs(words: str) -> frozenset[str]:
    return frozenset(f"--{w}" for w in words.split())


_WRAPPERS: dict[str, _Wrapper] = {
    "sudo": _Wrapper(
        flags="ABbEeHiKklNnPSsVv", valued="aCcDgpRrTtUu", glued_only="h",
        long_flags=_longs("askpass background bell preserve-env edit set-home help login "
                          "remove-timestamp reset-timestamp list non-interactive "
                          "preserve-groups stdin shell version validate"),
        long_valued=_longs("auth-type close-from login-class chdir group host prompt chroot "
                           "role type command-timeout other-user user"),
        assigns=True,
    ),
    "doas": _Wrapper(flags="Lns", valued="aCu"),
    "env": _Wrapper(
        flags="i0v", valued="uC",
        long_flags=_longs("ignore-environment null debug list-signal-handling block-signal "
                          "default-signal ignore-signal"),
        long_valued=_longs("unset chdir"), assigns=True,
    ),
    "nice": _Wrapper(valued="n", long_valued=_longs("adjustment")),
    "nohup": _Wrapper(),
    "setsid": _Wrapper(flags="cfw", long_flags=_longs("ctty fork wait")),
    "command": _Wrapper(flags="p"),
    "exec": _Wrapper(flags="cl", valued="a"),
    "timeout": _Wrapper(
        flags="v", valued="ks", long_flags=_longs("preserve-status foreground verbose"),
        long_valued=_longs("kill-after signal"), operands=(_DURATION.match,),
    ),
    "stdbuf": _Wrapper(valued="ioe", long_valued=_longs("input output error")),
    "ionice": _Wrapper(flags="t", valued="cn", long_flags=_longs("ignore"),
                       long_valued=_longs("class classdata")),
    "time": _Wrapper(flags="apqvV", valued="fo",
                     long_flags=_longs("append portability quiet verbose"),
                     long_valued=_longs("format output")),
    "chrt": _Wrapper(
        flags="bdfioRrampv", valued="TPD",
        long_flags=_longs("batch deadline fifo idle other rr reset-on-fork all-tasks max pid "
                          "verbose"),
        long_valued=_longs("sched-runtime sched-period sched-deadline"),
        operands=(_PRIORITY.match,),
    ),
    "taskset": _Wrapper(flags="apc", long_flags=_longs("all-tasks pid cpu-list"),
                        operands=(_CPU_MASK.match,)),
    "flock": _Wrapper(
        flags="sxenouF", valued="wE",
        long_flags=_longs("shared exclusive nonblock nb close unlock no-fork verbose"),
        long_valued=_longs("wait timeout conflict-exit-code"), operands=(_any_file,),
    ),
}  # fmt: skip
_NICE_NUMBER = re.compile(r"^--?[-+]?\d+$")  # nice -5, nice --5: the obsolete adjustment


def command_start(argv: Sequence[Arg], at: int) -> int | None:
    """Where the command the wrapper ``argv[at]`` runs starts, or None when ``argv[at]`` is
    no wrapper, runs no command, or its words are not all known (see the module)."""
    start = _start(argv, at)
    return start if isinstance(start, int) else None


def wrapper_words(argv: Sequence[Arg], readers: frozenset[str] = frozenset()) -> frozenset[int]:
    """The positions of ``argv`` that the wrappers from ``argv[0]`` on read as their own
    options, values and operands: none of them is a command; nor is any word of the
    command they run when it is one of ``readers``, programs none of whose words runs a
    command (``grep shutdown log``, ``sudo echo reboot``)."""
    own: set[int] = set()
    at = 0
    while (inner := command_start(argv, at)) is not None:
        own.update(range(at + 1, inner))
        at = inner
    if program_name(argv[at]) in readers:
        own.update(range(at + 1, len(argv)))
    return frozenset(own)


def unseen_program(argv: Sequence[Arg]) -> str:
    """Why the program a wrapper runs is not known before it runs (``sudo ./*``, ``timeout 5
    *``: the first name the glob matches runs, the rest are its words), or "": its command
    word is a glob or a generated word (None), or the wrapper's words are not all known and
    one of them is."""
    at = 0
    while isinstance(start := _start(argv, at), int):
        wrapper = program_name(argv[at])
        at = start
        if argv[at] is None:
            return _unseen(wrapper)
    if start is _UNSURE and None in argv[at + 1 :]:
        return (
            f"{program_name(argv[at])}'s words hold a glob or generated word, and the approval "
            "check cannot tell its command from them (a glob may be several words, an option "
            "it does not know, env -S): name the program"
        )
    return ""


def _unseen(wrapper: str | None) -> str:
    return (
        f"the program {wrapper} runs is a glob or generated word, which the approval check "
        "cannot see (the first name it matches runs): name the program"
    )


_UNSURE = "unsure"


def _start(argv: Sequence[Arg], at: int) -> int | str | None:
    """``command_start``, or ``_UNSURE`` when ``argv[at]`` is a wrapper whose words are not
    all known (an unknown option, a generated word, an operand out of shape)."""
    name = program_name(argv[at]) or ""
    spec = _WRAPPERS.get(name)
    if spec is None:
        return None
    index = at + 1
    while index < len(argv):
        word = argv[index]
        if word is None:  # sudo ./*: where its command stands (an option's value is passed)
            break
        if word == "--":
            index += 1
            break
        if word == "-" and name == "env":  # a mere - is -i
            index += 1
        elif word.startswith("-") and word != "-":
            taken = _option(word, spec, name)
            if taken is None or None in argv[index + 1 : index + taken]:
                return _UNSURE  # a glob as a value may be several words (sudo -u r* ls)
            index += taken
        elif spec.assigns and "=" in word:
            index += 1  # NAME=value
        else:
            break
    for shape in spec.operands:
        word = argv[index] if index < len(argv) else None
        if index < len(argv) and (word is None or not shape(word)):
            return _UNSURE
        index += 1
    return index if index < len(argv) else None


def _option(word: str, spec: _Wrapper, name: str) -> int | None:
    """How many words the option ``word`` takes (1 or 2), or None when it is unknown."""
    if word.startswith("--"):
        option, glued, _ = word.partition("=")
        valued = [v for v in spec.long_valued if v.startswith(option)]
        flags = [f for f in spec.long_flags if f.startswith(option)]
        if option in spec.long_valued or (len(valued) == 1 and not flags):
            return 1 if glued else 2
        if option in spec.long_flags or (len(flags) == 1 and not valued):
            return 1  # a flag, or one whose value is only ever glued (env --block-signal=)
        if name == "nice" and _NICE_NUMBER.match(word):
            return 1
        return None
    if name == "nice" and _NICE_NUMBER.match(word):
        return 1
    letters = word[1:]
    for place, letter in enumerate(letters):
        if letter in spec.valued:
            return 2 if place == len(letters) - 1 else 1
        if letter in spec.glued_only:
            return 1
        if letter not in spec.flags:
            return None
    return 1
