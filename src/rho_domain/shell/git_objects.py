"""git's reads of objects no path names: which words of a git stage name an object by id.

``git show <sha>`` (the id of a blob ``git ls-tree HEAD`` printed) or ``git show v1`` (a tag
pointing at a blob) reads a file's content with no path the secrets policy could judge.
``git_object_args`` lists those words; the executors ask git which of them are blobs and
refuse those (``stage_argv`` locally, ``restricted`` on Daytona). Split from ``reads.py``,
which judges a stage's path words and keeps its recursive readers away from secrets.
"""

from __future__ import annotations

from collections.abc import Sequence

from rho_domain.shell.git import SUBCOMMANDS
from rho_domain.shell.git_revs import revision_sides, split_rev_path
from rho_domain.shell.options import split_options


def git_subcommand(args: Sequence[str]) -> int | None:
    """Index in ``args`` (git's own words, after ``git``) of the subcommand, or None."""
    i = 0
    while i < len(args):
        if args[i] == "-c":
            i += 2
        elif args[i].startswith("-"):
            i += 1
        else:
            return i
    return None


_GIT_OBJECT_READERS = frozenset({"show", "cat-file", "diff", "grep"})


def git_object_args(argv: Sequence[str]) -> tuple[str, ...]:
    """The object names of ``git show/cat-file/diff/grep`` that have no path part (before
    ``--``; both ends of a range), each also peeled (``name^{}``): the executor asks git which
    of them are blobs and refuses those, because a blob named by id (``git ls-tree HEAD`` then
    ``git show <sha>``) or by a tag pointing at it has no path to judge. Words with a path part
    (``rev:path``, see ``git_revs``) are judged by that path instead."""
    if not argv or argv[0] != "git":
        return ()
    args = list(argv[1:])
    index = git_subcommand(args)
    if index is None or args[index] not in _GIT_OBJECT_READERS:
        return ()
    sub = args[index]
    # Parsed as git will read it: "--no-index" after "--" or as an option's value is no
    # option, and a value is no revision.
    parsed = split_options(f"git {sub}", args[index + 1 :], SUBCOMMANDS[sub])
    if parsed.has("no-index"):
        return ()
    revisions = list(parsed.operands[: parsed.separator])
    if sub == "grep" and not parsed.has("e", "f"):
        revisions = revisions[1:]  # the first operand is the pattern
    out: list[str] = []
    for arg in revisions:
        if arg == "-" or "\n" in arg:
            continue
        for side in revision_sides(arg):
            if split_rev_path(side)[1] is None and not side.startswith(":/"):
                out += [side, f"{side}^{{}}"]
    return tuple(dict.fromkeys(out))
