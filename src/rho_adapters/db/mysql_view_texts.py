"""A MariaDB/MySQL view's query as the server writes it, read for what it calls and reads.

``judged_text`` empties its string literals (a literal calls nothing); ``relations_named``
finds the ``(database, name)`` pairs it may read. Pure: text in, names out.
"""

from __future__ import annotations

import functools
import re

# A string literal as MariaDB's information_schema writes a view's query or a column's
# expression (backslash escapes, measured under NO_BACKSLASH_ESCAPES too), or a quoted name.
_LITERAL = re.compile(r"(`(?:[^`]|``)*`)|'(?:[^'\\]|\\.)*'", re.DOTALL)
_NAME = r"`(?:[^`]|``)*`"
_CHAIN = re.compile(rf"{_NAME}(?:\.{_NAME})*")
# What follows a name that is called: `db`.`f`(...) is a stored function, not a relation.
_CALLED = re.compile(r"\s*\(")
# A view's query as a run of names, words, parentheses and other marks (literals emptied).
_SCAN = re.compile(rf"(?P<chain>{_CHAIN.pattern})|(?P<word>\w+)|(?P<mark>[^\s\w])")
# The functions whose parentheses hold a ``from`` that reads no relation.
_FROM_INSIDE = frozenset({"extract", "trim"})


def judged_text(text: str) -> str:
    r"""MariaDB's ``text`` with every string literal emptied: a literal calls nothing, and
    one holding an escaped quote (``'x\'y'``) reads otherwise under NO_BACKSLASH_ESCAPES,
    a reading the check must pass too, so its view or table was refused as unreadable."""
    return _LITERAL.sub(lambda found: found[1] or "''", text)


# Cached: the server's own views (100 on MariaDB) and the others are judged before each
# statement, and their texts seldom change.
@functools.lru_cache(maxsize=1024)
def relations_named(query: str) -> frozenset[tuple[str, str]]:
    """The ``(database, name)`` pairs ``query`` (a view's, as the server writes it: every
    name in backticks, a relation as `` `db`.`name` `` right after ``from`` or ``join``, a
    column as `` `t`.`c` `` or `` `db`.`t`.`c` ``) may read, spelled as written: each
    two-part name in a relation's place (an alias or a column spelled like a database no
    longer hides one: `` from `hid`.`tune` `hid` ``), and each whose first part qualifies no
    column (is neither a lone name, an alias, nor the second part of another two-part name)."""
    text = judged_text(query)
    chains = [
        tuple(part[1:-1].replace("``", "`") for part in re.findall(_NAME, found[0]))
        for found in _CHAIN.finditer(text)
        if not _CALLED.match(text, found.end())  # a stored function: the check judges calls
    ]
    qualifiers = {c[0] for c in chains if len(c) == 1} | {c[1] for c in chains if len(c) == 2}
    unqualified = {(c[0], c[1]) for c in chains if len(c) == 2 and c[0] not in qualifiers}
    return frozenset(unqualified | _in_relation_place(text))


def _in_relation_place(text: str) -> set[tuple[str, str]]:
    """The two-part names of ``text`` (literals emptied) standing where a relation stands:
    after ``from`` or ``join`` (``straight_join``, ``left join``), past the parentheses
    that group joins, but not the ``from`` of ``extract(year from `t`.`c`)`` or ``trim``."""
    found: set[tuple[str, str]] = set()
    opened: list[str] = []  # the word right before each open parenthesis, innermost last
    relation_next, word = False, ""
    for token in _SCAN.finditer(text):
        if token["chain"]:
            parts = tuple(p[1:-1].replace("``", "`") for p in re.findall(_NAME, token[0]))
            if relation_next and len(parts) == 2:
                found.add((parts[0], parts[1]))
            relation_next, word = False, ""
        elif token["word"]:
            word = token[0].lower()
            if word == "from":
                relation_next = not opened or opened[-1] not in _FROM_INSIDE
            else:
                relation_next = word.endswith("join")
        elif token[0] == "(":
            opened.append(word)
            word = ""
        else:
            if token[0] == ")" and opened:
                opened.pop()
            relation_next, word = False, ""
    return found
