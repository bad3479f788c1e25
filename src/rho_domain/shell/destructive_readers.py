"""Which program reads a word as a possible option (``shell.destructive_option_words``).

A glob among a command's words is read by the program whose words it is: ``sudo ls *`` gives
``*`` to ls, not to sudo, since a wrapper reads its own options only up to its command. So
the reader is found by walking the wrappers through the words they read before their command
(``shell.wrapper_words``: ``sudo -u ls tar *``: ls is sudo's user, tar the reader). An
interpreter's options end at its script (``python3 x.py *.json``, ``node x.js *``, ``ruby
x.rb *``, ``bash s.sh *``): what follows goes to the script, which reads it as the
repository's code does, so no program this check knows reads it. ``python -m MOD``'s words
go to the module (``python3 -m pytest *``: pytest, whose ``--basetemp=DIR`` removes DIR).

Fail closed: an option of a wrapper or an interpreter not in its table, a word the check
cannot see where the command should stand, or ``env -S`` stops the walk there, and that
program is the reader.

Contract: ``reader(argv, index) -> tuple[int, str] | None``: where the program reading
``argv[index]`` stands and its name, or None when only a script reads it.
"""

from __future__ import annotations

from collections.abc import Sequence

from rho_domain.shell.destructive_table import program_name
from rho_domain.shell.destructive_words import Arg
from rho_domain.shell.wrapper_words import command_start


def _set(words: str) -> frozenset[str]:
    return frozenset(words.split())


# interpreter: (flags, options whose value is given apart, options that end its options
# with a value of code or a module the rest is given to)
_INTERPRETERS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "python": (_set("-u -B -O -OO -E -s -S -I -P -q -b -bb -d -R -v"),
               frozenset(["-W", "-X"])),
    "node": (_set("--no-warnings --enable-source-maps --trace-warnings --expose-gc "
                       "--inspect --inspect-brk --no-deprecation --trace-uncaught"),
             frozenset(["-r", "--require", "--import", "--loader", "-C", "--conditions"])),
    "ruby": (_set("-w -W -v -d -l -n -p -a -s -U"), frozenset(["-I", "-r", "-C"])),
    "perl": (_set("-w -W -X -T -t -s -n -p -a -l -U"), frozenset()),
    "bash": (_set("-e -x -u -v -n -f -h -l -r -p -i --login --norc --noprofile --posix "
                       "--restricted --verbose"),
             frozenset(["-o", "+o", "-O", "+O", "--rcfile", "--init-file"])),
}  # fmt: skip
_SHELLS = frozenset(["sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "busybox-sh"])


def reader(argv: Sequence[Arg], index: int) -> tuple[int, str] | None:
    """Where the program that reads ``argv[index]`` stands and its name (the first word's
    when unsure), or None when the words go to a script."""
    at = 0
    while True:
        name = program_name(argv[at]) or ""
        inner = command_start(argv, at)
        if inner is None or inner >= index or argv[inner] is None:
            break
        at = inner
    kind = _kind(name)
    if kind is None:
        return at, name
    flags, valued = _INTERPRETERS[kind]
    script = _script(argv, at, flags, valued)
    if script is None or script >= index:
        return at, name
    if argv[script - 1] == "-m" and kind == "python":  # python3 -m pytest *: pytest reads
        return script, argv[script] or name
    return None


def _kind(name: str) -> str | None:
    """The interpreter table ``name`` is read by (python3.12 is python), or None."""
    if name in _SHELLS:
        return "bash"
    base = name.rstrip("0123456789.")  # python3.12, perl5.36, ruby3.2
    return {"pypy": "python", "nodejs": "node"}.get(base, base if base in _INTERPRETERS else None)


def _script(
    argv: Sequence[Arg], at: int, flags: frozenset[str], valued: frozenset[str]
) -> int | None:
    """Where an interpreter's script (or python -m's module) stands, or None when an option
    is not in its table or no script is given."""
    index = at + 1
    while index < len(argv):
        word = argv[index]
        if word is None:
            return None
        if word == "-m" and index + 1 < len(argv):
            return index + 1
        if word == "--":
            return index + 1 if index + 1 < len(argv) else None
        if not word.startswith(("-", "+")) or word == "-":
            return index
        if word in valued:
            index += 2
        elif word in flags or (word[:2] in valued and len(word) > 2) or _glued_long(word):
            index += 1
        else:
            return None
    return None


def _glued_long(word: str) -> bool:
    """``--name=value``: the value is glued, so the next word is not taken."""
    return word.startswith("--") and "=" in word
