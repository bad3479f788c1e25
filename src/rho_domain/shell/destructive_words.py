"""Words and options as the destructive-command check reads them (``shell.destructive``).

Contract: ``Arg`` is a parsed word, or None when its value is only known at run time (a glob,
``find -exec``'s ``{}``, what ``xargs`` appends). ``split_options(args)`` reads options the
GNU way and ``long_hits(option, names)`` matches a long option with its abbreviations.
"""

from __future__ import annotations

from collections.abc import Sequence

Arg = str | None


def split_options(args: Sequence[Arg]) -> tuple[list[str], list[Arg]]:
    """Options and operands, GNU style: options may follow operands, ``--`` ends them, a
    short cluster ``-rf`` becomes ``-r`` and ``-f``, a long option ``--name[=value]`` stays
    whole. An unknown word is an operand here; each judge decides what an unknown means.

    A short option that takes a value (``-o VALUE``) reads its value as more flags or as an
    operand: that can only add a reason to ask, never hide one.
    """
    options: list[str] = []
    operands: list[Arg] = []
    for index, arg in enumerate(args):
        if arg == "--":
            operands.extend(args[index + 1 :])
            break
        if arg is None or arg == "-" or not arg.startswith("-"):
            operands.append(arg)
        elif arg.startswith("--"):
            options.append(arg)
        else:
            options.extend(f"-{flag}" for flag in arg[1:])
    return options, operands


def long_hits(option: str, names: frozenset[str]) -> bool:
    """True when ``option`` (``--given[=value]``) may be one of ``names``: ``given`` is an
    abbreviation of a name (GNU getopt and git accept unique prefixes) or starts with one
    (``--delete-after`` for ``delete``). Short options never hit."""
    if not option.startswith("--"):
        return False
    given = option[2:].split("=", 1)[0]
    return bool(given) and any(n.startswith(given) or given.startswith(n) for n in names)


def short_hits(options: Sequence[str], flags: str) -> str | None:
    """The first short option among ``options`` whose letter is in ``flags``."""
    for option in options:
        if not option.startswith("--") and option[1:] in flags:
            return option
    return None
