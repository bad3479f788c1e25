"""A command line's words as the shell gives them to the program, for the readers of git's
configurations (``git_named_files``, ``credential_helpers``): split as the shell splits,
``$NAME`` filled from an environment, and the values of options given by any unique start.
Pure: text in, words out.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

__all__ = ["option_values", "words_of"]

_VARIABLE = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")
_BLANKS = {ord(c): " " for c in "\t\r\n"}  # shlex's whitespace; str.split's others are not


def words_of(value: str, env: Mapping[str, str]) -> list[str]:
    """A command line's words as the shell gives them to the program: split (on blanks when
    a quote is left open), each with its ``$NAME`` and ``${NAME}`` expanded from ``env``
    (unset: empty, as the shell does) and also as written (a word in single quotes is not
    expanded)."""
    if not any(mark in value for mark in "'\"\\"):
        # no quote and no escape: the shell's words are its blanks' pieces (what
        # shlex.split gives), without importing shlex on every executor's start (a
        # machine's /etc/gitconfig often names a helper: the one-shot pays it otherwise)
        words = [word for word in value.translate(_BLANKS).split(" ") if word]
    else:
        import shlex

        try:
            words = shlex.split(value, comments=False)
        except ValueError:
            words = value.split()
    expanded = [_VARIABLE.sub(lambda m: env.get(m[1] or m[2], ""), word) for word in words]
    return [*expanded, *(w for w, e in zip(words, expanded, strict=True) if w != e)]


def option_values(words: list[str], options: tuple[str, ...], dashes: tuple[str, ...]) -> list[str]:
    """The values of ``options`` after one of ``dashes`` in ``words``, ``--file=x`` and
    ``--file x``, and of every unique start of one (``--fi=x``, ``-f x``): git's option
    parser takes those, and Perl's Getopt::Long with one dash too."""
    found: list[str] = []
    for at, word in enumerate(words):
        dash = next((d for d in dashes if word.startswith(d) and word[len(d) : len(d) + 1]), "")
        name, equals, value = word[len(dash) :].partition("=")
        if not dash or word.startswith("---") or not any(o.startswith(name) for o in options):
            continue
        if equals:
            found.append(value)
        elif at + 1 < len(words):
            found.append(words[at + 1])
    return found
