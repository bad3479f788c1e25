r"""An extended regular expression's alternation written with its common beginnings once.

``alternation(["\.git/config", "\.git/index"])`` is ``(\.git/(config|index))``: the same
language as ``(\.git/config|\.git/index)`` (``A X|A Y`` is ``A(X|Y)``, and a branch that may
end is ``(...)?``), with each shared beginning compiled once. ``find -iregex`` compiles its
expression at every run (glibc's ``regcomp``, in time that grows faster than the text): the
alias scan's 12,961 characters cost 15 ms of the sandbox's CPU a scan on the test machine,
written this way a third (docs/benchmarks.md, "suite27a").

The alternatives are texts of the language ``secret_regex`` writes: literal characters, an
escaped one (``\.``), a bracket expression (``[^/]``, ``[.~ _,-]``), ``.``, a starred atom
(``[^/]*``, ``.*``) and groups (``(#|copy.*of )?``), each an atom compared as text; a ``|``
outside every group and bracket separates alternatives of the list itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def alternation(alternatives: Iterable[str]) -> str:
    """One group matching exactly what any of ``alternatives`` matches (``()`` for none:
    never given one; ``ValueError`` for a text that is not of the language above)."""
    sequences = [
        tuple(atoms(branch)) for alternative in alternatives for branch in split(alternative)
    ]
    body = _emitted(list(dict.fromkeys(sequences)))
    return body if body.startswith("(") and _one_group(body) else f"({body})"


def split(alternative: str) -> list[str]:
    """``alternative`` cut at each ``|`` outside groups and brackets."""
    out, depth, start, at = [], 0, 0, 0
    while at < len(alternative):
        char = alternative[at]
        if char == "\\":
            at += 2
            continue
        if char == "[":
            at = _bracket_end(alternative, at)
            continue
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "|" and depth == 0:
            out.append(alternative[start:at])
            start = at + 1
        at += 1
    out.append(alternative[start:])
    return out


def atoms(text: str) -> list[str]:
    """``text``'s atoms, each with its ``*`` or ``?``: joined they give ``text`` back."""
    out: list[str] = []
    at = 0
    while at < len(text):
        char = text[at]
        if char == "\\":
            end = at + 2
        elif char == "[":
            end = _bracket_end(text, at)
        elif char == "(":
            end = _group_end(text, at)
        elif char in ")|*?+{":
            raise ValueError(f"not an atom at {at} of {text!r}")
        else:
            end = at + 1
        if end < len(text) and text[end] in "*?":
            end += 1
        out.append(text[at:end])
        at = end
    return out


def _emitted(sequences: Sequence[tuple[str, ...]]) -> str:
    """The alternation of ``sequences`` (atoms), each shared first atom written once."""
    ends = any(not sequence for sequence in sequences)
    after: dict[str, list[tuple[str, ...]]] = {}
    for sequence in sequences:
        if sequence:
            after.setdefault(sequence[0], []).append(sequence[1:])
    branches = [first + _emitted(rests) for first, rests in after.items()]
    if not branches:
        return ""
    if len(branches) == 1 and not ends:
        return branches[0]
    return f"({'|'.join(branches)})" + ("?" if ends else "")


def _bracket_end(text: str, at: int) -> int:
    """Where the bracket expression opening at ``at`` ends (past its ``]``)."""
    end = at + 1
    if text[end : end + 1] == "^":
        end += 1
    if text[end : end + 1] == "]":  # a ] first is a member
        end += 1
    close = text.find("]", end)
    if close < 0:
        raise ValueError(f"an unclosed bracket at {at} of {text!r}")
    return close + 1


def _group_end(text: str, at: int) -> int:
    """Where the group opening at ``at`` ends (past its ``)``)."""
    depth, end = 0, at
    while end < len(text):
        char = text[end]
        if char == "\\":
            end += 2
            continue
        if char == "[":
            end = _bracket_end(text, end)
            continue
        depth += {"(": 1, ")": -1}.get(char, 0)
        end += 1
        if depth == 0:
            return end
    raise ValueError(f"an unclosed group at {at} of {text!r}")


def _one_group(text: str) -> bool:
    """Whether ``text`` is one group, unquantified (its first ``(`` closes at its end)."""
    return _group_end(text, 0) == len(text)
