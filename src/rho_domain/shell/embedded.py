"""Programs with an embedded language: find expressions (awk programs: ``awk.py``).

``find``: the expression is checked primary by primary against an allowlist, so ``-exec``,
``-execdir``, ``-ok``, ``-okdir``, ``-delete`` and ``-fprint*``/``-fls`` (which write files) never
pass, nor ``-L``/``-follow`` (links met while walking lead where no word was judged), nor what
looks through such a link without following it (``-xtype``, ``-readable``, ``-writable``,
``-executable``, ``-printf``'s ``%Y``: the target's type, existence or access), nor a
``-newerXt`` date string whose ``TZ="FILE"`` would open a file no word names.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rho_domain.errors import CommandRefused
from rho_domain.shell.machine_programs import date_string_refusal

_FIND_FLAGS = frozenset(
    [
        "-print",
        "-print0",
        "-ls",
        "-prune",
        "-depth",
        "-empty",
        "-true",
        "-false",
        "-quit",
        "-nouser",
        "-nogroup",
        "-xdev",
        "-mount",
        "-daystart",
        "-noleaf",
        "-ignore_readdir_race",
        "-a",
        "-and",
        "-o",
        "-or",
        "-not",
        "!",
        "(",
        ")",
        ",",
    ]
)
_FIND_VALUED = frozenset(
    [
        "-name",
        "-iname",
        "-path",
        "-ipath",
        "-wholename",
        "-iwholename",
        "-regex",
        "-iregex",
        "-type",
        "-size",
        "-mtime",
        "-mmin",
        "-atime",
        "-amin",
        "-ctime",
        "-cmin",
        "-newer",
        "-anewer",
        "-cnewer",
        "-maxdepth",
        "-mindepth",
        "-perm",
        "-user",
        "-group",
        "-uid",
        "-gid",
        "-links",
        "-inum",
        "-samefile",
        "-lname",
        "-ilname",
        "-regextype",
        "-printf",
        "-used",
        "-fstype",
    ]
)
_FIND_NEWER = re.compile(r"^-newer[amcBt][amcBt]$")
# Not -L (nor the -follow primary): find would follow the links it meets while walking, into
# directories outside the workspace or secret ones (``out -> /home/u``) that no word names, and
# print their names; -H follows only the start paths, which are judged as words.
_FIND_GLOBAL = frozenset({"-H", "-P"})
_FIND_FOLLOW = frozenset({"-L", "-follow"})
# Tests that look at a met link's target (its type, or access(2) on it) without following it:
# gone -> <outside>/missing, there -> <outside>/x.txt told whether files out of reach exist.
_FIND_THROUGH = frozenset({"-xtype", "-readable", "-writable", "-executable"})
# A -printf directive: flags, width, precision, then its letter (A, B, C, T take a second one:
# %AY is the access year). %Y is the type of a met link's target.
_PRINTF_DIRECTIVE = re.compile(r"%[-+ #0]*[0-9]*(?:\.[0-9]*)?([ABCT]?.)", re.DOTALL)


def _printf_refusal(value: str) -> str | None:
    """Why find's ``-printf`` format may not run, or None: a ``%Y`` directive."""
    if any(m.group(1) == "Y" for m in _PRINTF_DIRECTIVE.finditer(value)):
        return (
            "find: -printf's %Y follows the symbolic links met while walking (the type of a "
            "target out of reach); use %y, the link's own type"
        )
    return None


def find_takes_value(word: str) -> bool:
    """Whether find's primary ``word`` takes the next word as its value."""
    return word in _FIND_VALUED or bool(_FIND_NEWER.match(word))


def find_parts(args: Sequence[str]) -> tuple[list[str], list[str], list[str]]:
    """The arguments of find as (leading options, start paths, expression), read as find reads
    them (and as ``check_find`` does)."""
    i = 0
    while i < len(args) and args[i] in _FIND_GLOBAL:
        i += 1
    j = i
    while j < len(args) and not args[j].startswith("-") and args[j] not in ("!", "(", ")", ","):
        j += 1
    return list(args[:i]), list(args[i:j]), list(args[j:])


_UNPAIRED = "find: the expression's parentheses do not pair; write each '(' with its ')'"


def check_find(args: Sequence[str]) -> None:
    """Validate find's arguments: leading options, start paths, then an allowlisted expression."""
    if follow := _FIND_FOLLOW.intersection(args):
        raise CommandRefused(
            f"find: {min(follow)} follows the symbolic links met while walking, into "
            "directories outside the workspace or secret ones that no word names; use -H "
            "(start paths only), or name a link's target as a start path"
        )
    if through := _FIND_THROUGH.intersection(args):
        raise CommandRefused(
            f"find: {min(through)} follows the symbolic links met while walking to test their "
            "targets (out of reach or secret, no word names them); use -type, on the link itself"
        )
    leading, starts, _ = find_parts(args)
    i = len(leading) + len(starts)
    # The harness wraps the expression in parentheses (listing_walks): a ")" too many closed
    # them, and what followed ("-false ) , ( -print") ran outside the prune.
    depth = lowest = 0
    while i < len(args):
        arg = args[i]
        i += 1
        depth += {"(": 1, ")": -1}.get(arg, 0)
        lowest = min(lowest, depth)
        if arg in _FIND_FLAGS:
            continue
        if find_takes_value(arg):
            if i >= len(args):
                raise CommandRefused(f"find: {arg} needs a value")
            # -newerXt's value is a date string: its TZ="FILE" opens FILE, as date -d's does
            dated = arg.startswith("-newer") and arg.endswith("t") and len(arg) == 8
            if dated and (why := date_string_refusal(args[i])):
                raise CommandRefused(f"find {arg}: {why}")
            if arg == "-printf" and (why := _printf_refusal(args[i])):
                raise CommandRefused(why)
            i += 1
            continue
        if arg.startswith("-"):
            raise CommandRefused(
                f"find: {arg!r} is not allowed (find may only test and print: no -exec, "
                "-execdir, -ok, -delete, -fprint or -fls)"
            )
        raise CommandRefused(f"find: unexpected word {arg!r} in the expression")
    if depth or lowest:
        raise CommandRefused(_UNPAIRED)
