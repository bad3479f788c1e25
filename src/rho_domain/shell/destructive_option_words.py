"""Words the check cannot see that a program may read as options (``shell.destructive``).

Options decide whether a command asks (``tar --checkpoint-action=exec=sh x.sh``, ``rsync
-e``, ``rg --pre``, ``git log --output=``, ``npm -g``, ``cp --target-directory=/etc``), and
two kinds of word are chosen at run time by someone other than the command's writer:

* a glob: it expands to the names of files, and whoever wrote a file chose its name
  (``tar -cf a.tar *`` in a directory holding a file named
  ``--checkpoint-action=exec=sh x.sh`` runs ``sh x.sh``). The shell expands it after the
  check, and a command of the same line (or anything running beside it) can make the file
  between the two, so no reading of the directory could settle it: a glob that may expand to
  a name starting with ``-`` asks, unless the program is one none of whose options runs or
  writes anything (``ls``, ``cat``, ``grep``, ``wc``...: ``HARMLESS``) or a ``--`` before it
  ends the options (only globs between them: ``tar -cf a.tar -- *``). A pattern that starts
  with a literal name or ``./`` cannot (``./*``, ``src/*.py``). ``make``, ``dd`` and ``env``
  read a ``NAME=value`` word as a setting wherever it stands (``make SHELL=...``, ``dd
  of=/dev/sda``), so any glob to them asks unless it starts with ``./`` or ``/``;
* what ``xargs`` and ``parallel`` append: read as options by a program with a row in the
  table unless ``--`` ends its options first.

A glob that starts with ``./``, ``../`` or ``/`` expands to paths, never to an option, a
``NAME=value`` setting or rsync's ``host:path``: the rows that ask for an unknown word only
because it may be one of those (rsync, fallocate, dd, zip, 7-Zip: ``PATH_SAFE_ROWS``) read
it as the path it is (``rsync -a ./* dest/`` runs unasked); rm, whose files it removes are
then unnamed, and the runners, whose script or code it would be, still ask.

Contract: ``paths_shown(first, argv, patterns, judged)``: ``judged`` (the words as the walk
judges them, a glob None) with each path-shaped glob's pattern in place; ``row_words(name,
words, shown)``: the words ``name``'s row reads; ``glob_option_reason(argv, patterns) ->
str`` (``patterns[i]`` the glob pattern of ``argv[i]`` or None);
``appended_option_reason(appender, name, words) -> str``; each the reason to ask, or "".
"""

from __future__ import annotations

from collections.abc import Sequence

from rho_domain.shell.destructive_glob_words import glob_verb_reason
from rho_domain.shell.destructive_readers import reader
from rho_domain.shell.destructive_words import Arg

# programs none of whose options runs a command, writes a file or chooses what another
# program does: their words only choose what is read or printed
HARMLESS = frozenset(
    [
        "ls", "cat", "wc", "head", "tail", "grep", "egrep", "fgrep", "du", "stat", "md5sum",
        "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum", "cksum",
        "sum", "basename", "dirname", "realpath", "readlink", "echo", "diff", "cmp", "nl",
        "tac", "od", "hexdump", "strings", "rev", "cut", "paste", "comm", "join", "fold",
        "fmt", "column", "expand", "unexpand", "test", "[", "true", "false", ":", "touch",
        "mkdir", "which", "whereis", "whatis", "apropos", "type", "help",
    ]
)  # fmt: skip
# programs that read a NAME=value word as a setting wherever it stands
_ASSIGNING = frozenset(["make", "gmake", "dd", "env"])


def glob_option_reason(argv: Sequence[str], patterns: Sequence[str | None]) -> str:
    """Why a glob among ``argv``'s words asks because it may expand to an option (or a
    setting) of the program that reads it (``shell.destructive_readers``: ``sudo tar -cf
    a.tar *`` gives it to tar, ``python3 x.py *`` to the script), or to a subcommand its
    row reads (``shell.destructive_glob_words``: ``docker r* x``), or ""."""
    if not any(patterns[1:]):
        return ""
    words = [
        None if pattern is not None else word for word, pattern in zip(argv, patterns, strict=True)
    ]
    for index, pattern in enumerate(patterns[1:], 1):
        found = reader(words, index) if pattern is not None else None
        if found is None or found[1] in HARMLESS:
            continue
        at, name = found
        if name in _ASSIGNING and not pattern.startswith(("./", "/")):  # type: ignore[union-attr]
            return (
                f"the glob {argv[index]} given to {name} may expand to a file name read as a "
                f"setting (NAME=value) or an option: name the files, or write ./{argv[index]}"
            )
        before = slice(at + 1, index)
        if may_be_option(pattern or "") and not _options_ended(argv[before], patterns[before]):
            return (
                f"the glob {argv[index]} given to {name} may expand to a file name read as an "
                "option, and whoever wrote a file chose its name (a file named "
                "--checkpoint-action=exec=... makes tar run it): "
                f"write ./{argv[index]}, or put -- before it"
            )
    return glob_verb_reason(argv, patterns)  # docker r* x: may be docker rm x


PATH_SAFE_ROWS = frozenset(["rsync", "fallocate", "dd", "zip", "7z", "7za", "7zz"])
_PATH_SHAPED = ("./", "../", "/")


def paths_shown(
    first: str | None, argv: Sequence[str], patterns: Sequence[str | None], judged: Sequence[Arg]
) -> tuple[Arg, ...]:
    """``judged`` with each glob that starts with ``./``, ``../`` or ``/`` shown as its
    pattern (not where xargs, parallel or find fill words in: their words were changed)."""
    if first in ("xargs", "parallel", "find") or len(judged) != len(argv):
        return tuple(judged)
    return tuple(
        word if pattern is not None and pattern.startswith(_PATH_SHAPED) else judge
        for word, pattern, judge in zip(argv, patterns, judged, strict=True)
    )


def row_words(name: str, words: Sequence[Arg], shown: Sequence[Arg] | None) -> Sequence[Arg]:
    """The words after ``name`` its table row reads: path-shaped globs as their patterns for
    the rows in ``PATH_SAFE_ROWS``, as unknown words for every other."""
    if shown is not None and len(shown) == len(words) and name in PATH_SAFE_ROWS:
        return shown[1:]
    return words[1:]


def may_be_option(pattern: str) -> bool:
    """True when the glob ``pattern`` may match a name starting with ``-``: it starts with
    ``*``, ``?``, ``-`` or a bracket that may hold ``-``, not with a literal name or ``./``."""
    if pattern.startswith("\\"):  # a quoted character: itself
        return pattern[1:2] == "-"
    head = pattern[:1]
    if head in ("*", "?", "-"):
        return True
    if head != "[":
        return False
    end = pattern.find("]", 2)
    body = pattern[1:end] if end > 0 else pattern[1:]
    return "-" in body or body[:1] in ("!", "^")


def _options_ended(before: Sequence[str], patterns: Sequence[str | None]) -> bool:
    """True when ``before`` (the words ahead of a glob) hold ``--`` followed only by globs:
    the ``--`` is then the reading program's own, not a wrapper's (``sudo -- tar ... *``)."""
    for index in range(len(before) - 1, -1, -1):
        if before[index] == "--":
            return True
        if patterns[index] is None:
            return False
    return False


def appended_option_reason(appender: Arg, name: Arg, words: Sequence[Arg]) -> str:
    """Why what ``appender`` (xargs, parallel) appends to ``name words`` asks: ``name`` has
    a row in the table, and its options decide the row (``rg --pre``, ``tar --to-command``,
    ``npm -g``, ``git log --output=``), unless ``--`` ends them first."""
    if _ends_options(words):
        return ""
    return (
        f"{appender} appends words {name} may read as options, which decide whether "
        f"it asks (put -- before them: {appender} {name} ... --)"
    )


def _ends_options(words: Sequence[Arg]) -> bool:
    """True when ``words`` end with ``--`` that ends the options (not an option's value, as
    in ``tar -tf --``): what is appended after it is an operand."""
    return len(words) > 2 and words[-1] == "--" and not (words[-2] or "-").startswith("-")
