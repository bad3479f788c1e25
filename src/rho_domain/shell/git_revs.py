"""git's revision syntax, read the way git reads it, so no spelling names a secret blob unseen.

git resolves ``<rev>:<path>`` (a file in a commit or tree), ``:<path>`` and ``:<n>:<path>`` (a
file in the index) by itself, without the path ever existing on disk. ``split_rev_path``
follows git's own rule (``get_oid_with_context`` in object-name.c): a word starting with
``:/`` is a commit-message search with no path; any other word starting with ``:`` is an index
path (after ``0:`` to ``3:``); otherwise the path starts after the first ``:`` outside
``{...}``, so ``HEAD^{/fir*st:*}:.env`` names ``.env``, not ``*}:.env``.

``history_paths(sub, args)`` lists every path a git command names that may exist only in
history: the path part of every revision word, the paths after ``--`` and ``git blame``'s
operands. ``check_git`` judges them by their text against the secrets policy, since there is
no file on disk to resolve. What the model cannot name (a secret met while walking history:
``git log -p``, ``git show HEAD``, ``git log -G``) is kept out by the exclusion pathspecs of
``reads.secret_safe_argv``; options that would defeat those (``--follow`` swaps the pathspec
for a renamed file's old name; ``log -L`` follows renames and refuses pathspecs) are refused.
"""

from __future__ import annotations

from collections.abc import Sequence

from rho_domain.names import short_name_refusal
from rho_domain.secrets import SecretPolicy

# Revision suffixes that do not change which object a word names.
_SUFFIXES = ("^@", "^!")


def split_rev_path(word: str) -> tuple[str, str | None]:
    """``(revision, path)`` as git reads ``word``; ``path`` is None when the word names no
    file inside an object (a commit, a tree, a blob id, a message search)."""
    if word.startswith(":"):
        if word.startswith(":/"):
            return word, None  # :/<regex> searches commit messages; the rest is the regex
        if len(word) >= 3 and word[1] in "0123" and word[2] == ":":
            return word[:3], word[3:]
        return ":", word[1:]
    depth = 0
    for i, ch in enumerate(word):
        if ch == "{":
            depth += 1
        elif ch == "}" and depth:
            depth -= 1
        elif ch == ":" and not depth:
            return word[:i], word[i + 1 :]
    return word, None


def revision_sides(word: str) -> tuple[str, ...]:
    """The object names git may resolve for a revision word: the word itself and, as git's
    ``handle_dotdot`` splits at the first ``..`` (``...``) before reading either side, both
    ends of a range; a leading ``^`` and the ``^@``/``^!`` suffixes are dropped. An empty end
    (``A..``) means HEAD and is left out."""
    sides = [word]
    dots = -1 if word.startswith(":/") else word.find("..")
    if dots >= 0:
        width = 3 if word.startswith("...", dots) else 2
        sides += [word[:dots], word[dots + width :]]
    out: list[str] = []
    for side in sides:
        side = side.removeprefix("^")
        for suffix in _SUFFIXES:
            side = side.removesuffix(suffix)
        if side:
            out.append(side)
    return tuple(dict.fromkeys(out))


def line_range_file(value: str) -> str | None:
    """The file of a ``-L`` value (``start,end:file`` or ``:funcname:file``), as git splits it."""
    if value.startswith(":"):
        end = value.find(":", 1)
        return value[end + 1 :] if end > 0 else None
    _, colon, rest = value.partition(":")
    return rest if colon else None


def pathspec_body(word: str, *, from_cwd: bool = False) -> str | None:
    """The path the pathspec ``word`` names, its magic taken off (``:(top,literal)a/b``,
    ``:/a/b`` and ``:!a/b`` name ``a/b``). With ``from_cwd``, None when the magic makes it
    the repository root's (``top``, ``/``): only a path git reads from its directory."""
    if word.startswith(":("):
        close = word.find(")")
        if close < 0:
            return word
        magic = word[2:close].split(",")
        return None if from_cwd and "top" in magic else word[close + 1 :]
    if not word.startswith(":"):
        return word
    body = word[1:]
    signs = len(body) - len(body.lstrip("/!^"))
    top = "/" in body[:signs]
    body = body[signs:].removeprefix(":")
    return None if from_cwd and top else body


def blame_paths(operands: Sequence[str], separator: int | None) -> tuple[list[str], list[str]]:
    """``(paths, tree_paths)``: the operands of ``git blame`` that may name the blamed file, as
    git's builtin/blame.c picks it; the others are revisions (``HEAD~1``), judged as such.
    With ``--``: the words after it (of ``blame -- <path> <rev>``, the first). Without: the
    last operand or, of exactly two, the first when the last is a revision (``blame <path>
    <rev>``), which git alone can tell. Either of those two is in ``tree_paths``: the other
    is a revision, so git reads the file from its tree only (``tree_path_refusal``)."""
    if separator is not None:
        after = list(operands[separator:])
        return (after[:1] if separator == 0 and len(after) == 2 else after), []
    if len(operands) == 2:
        return [], list(operands)
    return list(operands[-1:]), []


def tree_path_refusal(policy: SecretPolicy, path: str) -> str | None:
    """``policy.refusal(path)`` for a path git only looks up in a tree, name by name as the
    bytes stand: NTFS never opens it, so the shape of a Windows short name (rule 4, judged
    last) is no other name there. ``HEAD~1``, blamed as ``git blame HEAD~1 FILE``, has it."""
    reason = policy.refusal(path)
    return None if reason == short_name_refusal(path) else reason


def history_paths(
    sub: str, operands: Sequence[str], after_dashes: Sequence[str], separator: int | None = None
) -> list[str]:
    """Every path the git subcommand ``sub`` may read from history: the path part of each
    operand that is a revision word, every operand after ``--``, ``git blame``'s file
    (``blame_paths``: blame reads it from the named revision even when it is not on disk)
    and ``git ls-tree``'s after its tree (``:(top).config/gh/`` lists ``gh`` from anywhere);
    a pathspec's magic taken off. They are relative to the repository's root or, some, to
    the stage's directory, where ``git_relative`` judges them again. ``separator`` is the
    number of operands before the model's ``--``, if any. Blame's ``tree_paths`` are not
    among them: their judge is ``tree_path_refusal``."""
    paths: list[str] = []
    for word in operands:
        for side in revision_sides(word):
            _, path = split_rev_path(side)
            if path is not None:
                paths.append(path)
    tail = list(after_dashes)
    if sub == "blame":
        tail = blame_paths(operands, separator)[0]
    elif sub == "ls-tree":
        tail.extend(operands[1:])
    return [*paths, *(body for word in tail if (body := pathspec_body(word)) is not None)]


def names_pathspec(rest: Sequence[str]) -> bool:
    """Whether a rebuilt git subcommand's words ``rest`` name a pathspec that may match paths
    never judged by their text: a word after the model's ``--``, or an operand with a
    wildcard or pathspec magic (git reads ``'*/gh/*'`` and ``':(icase)x'`` as pathspecs
    without ``--``). A plain operand is a revision, or a path on disk judged by its real path."""
    if "--" in rest and rest.index("--") < len(rest) - 1:
        return True
    return any(
        not w.startswith("-") and (w.startswith(":") or any(c in w for c in "*?[")) for w in rest
    )
