"""Programs with an embedded language: find expressions and awk programs.

``find``: the expression is checked primary by primary against an allowlist, so ``-exec``,
``-execdir``, ``-ok``, ``-okdir``, ``-delete`` and ``-fprint*``/``-fls`` (which write files) never
pass. ``awk``: the program text is scanned outside string literals; ``system``, ``getline``,
``close``, ``fflush`` and any ``>``, ``>>``, ``|`` at the top level of a ``print``/``printf``
statement (output redirection and pipes) are refused, as are ``-f``/``-E``/``-i``/``-l``
(program, include or shared-library files). RLIMIT_FSIZE and the read-only sandbox back this up.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rho_domain.errors import CommandRefused
from rho_domain.shell.options import spec, split_options

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
        "-readable",
        "-writable",
        "-executable",
        "-follow",
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
        "-xtype",
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
_FIND_GLOBAL = frozenset({"-H", "-L", "-P"})


def check_find(args: Sequence[str]) -> None:
    """Validate find's arguments: leading options, start paths, then an allowlisted expression."""
    i = 0
    while i < len(args) and args[i] in _FIND_GLOBAL:
        i += 1
    while i < len(args) and not args[i].startswith("-") and args[i] not in ("!", "(", ")", ","):
        i += 1  # start paths
    while i < len(args):
        arg = args[i]
        i += 1
        if arg in _FIND_FLAGS:
            continue
        if arg in _FIND_VALUED or _FIND_NEWER.match(arg):
            if i >= len(args):
                raise CommandRefused(f"find: {arg} needs a value")
            i += 1
            continue
        if arg.startswith("-"):
            raise CommandRefused(
                f"find: {arg!r} is not allowed (find may only test and print: no -exec, "
                "-execdir, -ok, -delete, -fprint or -fls)"
            )
        raise CommandRefused(f"find: unexpected word {arg!r} in the expression")


_AWK_SPEC = spec("", "Fv", "", "field-separator assign", "")
_AWK_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')
_AWK_FORBIDDEN = re.compile(r"\b(system|getline|close|fflush)\b|\|&|@")


def _strip_awk_strings(program: str) -> str:
    return _AWK_STRING.sub('""', program)


def _awk_print_redirects(code: str) -> bool:
    """True when a print/printf statement has a top-level ``>`` or ``|`` (redirect or pipe)."""
    for match in re.finditer(r"\bprintf?\b", code):
        depth = 0
        for j in range(match.end(), len(code)):
            ch = code[j]
            if ch in "([":
                depth += 1
            elif ch in ")]":
                if depth == 0:
                    break
                depth -= 1
            elif ch in ";}\n" and depth == 0:
                break
            elif (ch == ">" and depth == 0) or (
                ch == "|" and depth == 0 and "|" not in (code[j + 1 : j + 2], code[j - 1 : j])
            ):
                return True
    return False


def check_awk(args: Sequence[str]) -> None:
    """Validate awk's options and program text (the first operand)."""
    parsed = split_options("awk", args, _AWK_SPEC)
    if not parsed.operands:
        raise CommandRefused("awk: the program must be given inline (no -f program files)")
    program = parsed.operands[0]
    code = _strip_awk_strings(program)
    if '"' in code.replace('""', ""):
        raise CommandRefused("awk: could not understand the string literals of the program")
    if match := _AWK_FORBIDDEN.search(code):
        raise CommandRefused(
            f"awk: {match.group(0).strip()!r} runs commands or touches files; not allowed"
        )
    if _awk_print_redirects(code):
        raise CommandRefused(
            "awk: output redirection or pipe in print/printf is not allowed "
            "(parenthesise comparisons: print ($1 > 3))"
        )
