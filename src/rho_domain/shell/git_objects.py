"""git's reads of objects no path names: which words of a git stage name an object by id.

``git show <sha>`` (the id of a blob ``git ls-tree HEAD`` printed) or ``git show v1`` (a tag
pointing at a blob) reads a file's content with no path the secrets policy could judge, and a
tree named by id (``.ssh``'s, which ``git ls-tree HEAD`` prints) lists the files inside a
secret directory (``git ls-tree``, ``cat-file -p``, ``show``) or, walked by ``git grep`` or
``git diff``, prints them: their paths then start at that tree, where the exclusion pathspecs
(``**/.ssh/**``) match nothing, and so do those of a tree named ``HEAD:.config`` (``gh/hosts.yml``
inside it is ``.config/gh``). ``git_object_args`` lists the words to type; the executors ask
git the type of each and raise ``objects_refusal``'s reason (``stage_argv`` locally,
``restricted`` on Daytona). Split from ``reads.py``, which judges a stage's path words and keeps
its recursive readers away from secrets.
"""

from __future__ import annotations

from collections.abc import Sequence

from rho_domain.shell.git import SUBCOMMANDS
from rho_domain.shell.git_revs import revision_sides, split_rev_path
from rho_domain.shell.git_tree_list import EMPTY_TREES
from rho_domain.shell.options import Parsed, split_options


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


# parse-options reads their "--" as the end of options only: an operand after it is still the
# object (git cat-file -p -- ID, git ls-tree -- ID lists that tree), not a path.
_DASHDASH_ENDS_OPTIONS = frozenset({"ls-tree", "cat-file"})


def revisions_and_paths(sub: str, parsed: Parsed) -> tuple[list[str], list[str]]:
    """The operands of ``git sub`` (``parsed``) that git reads as revisions or objects, and
    those it reads as paths, split where git splits them: at the model's ``--`` for the
    revision walkers, never for ``cat-file`` (objects only) and ``ls-tree`` (a tree-ish, then
    paths, ``--`` or not); ``grep``'s pattern (no ``-e``/``-f``) is neither."""
    operands = list(parsed.operands)
    end = len(operands) if parsed.separator is None else parsed.separator
    if sub == "grep" and not parsed.has("e", "f") and operands:
        operands, end = operands[1:], max(end - 1, 0)
    if sub == "cat-file":
        return operands, []
    if sub == "ls-tree":
        return operands[:1], operands[1:]
    return operands[:end], operands[end:]


_GIT_OBJECT_READERS = frozenset({"show", "cat-file", "diff", "grep", "ls-tree"})
# They walk a tree they are given to its leaves, naming its files from that tree's root.
_TREE_WALKERS = frozenset({"diff", "grep"})


def git_object_args(argv: Sequence[str]) -> tuple[str, ...]:
    """The object names of ``git show/cat-file/diff/grep/ls-tree`` to type (its
    ``revisions_and_paths``, both ends of a range): each one with no path part, also peeled
    (``name^{}``), and, for ``diff`` and ``grep``, each ``rev:path`` one too. The executor asks
    git their types and refuses what ``object_refusal`` says; a blob's word with a path part
    (``rev:path``, see ``git_revs``) is judged by that path instead."""
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
    revisions = revisions_and_paths(sub, parsed)[0]
    out: list[str] = []
    for arg in revisions:
        if arg == "-" or "\n" in arg:
            continue
        for side in revision_sides(arg):
            path = split_rev_path(side)[1]
            if path is None and not side.startswith(":/"):
                out += [side, f"{side}^{{}}"]
            elif path and sub in _TREE_WALKERS:
                out.append(side)
    return tuple(dict.fromkeys(out))


def object_refusal(argv: Sequence[str], name: str, kind: str) -> str | None:
    """Why ``name`` (one of ``git_object_args(argv)``), an object of type ``kind`` (as
    ``git cat-file --batch-check=%(objecttype)`` says it), may not be read; None when it may.
    A blob named by id has no path to judge; a tree named by id has none either (but the
    empty tree, which holds nothing), and a tree that ``diff`` or ``grep`` walk names its
    files from its own root, past the exclusions of secret directories."""
    kind = kind.strip()
    path = split_rev_path(name)[1]
    if kind == "blob" and path is None:
        return (
            f"git: {name!r} is a file's content named by id; name it as rev:path "
            "(HEAD:src/app.py) so the secrets policy can judge the path"
        )
    if kind != "tree" or name.removesuffix("^{}") in EMPTY_TREES:
        return None
    if path is None:
        return (
            f"git: {name!r} is a directory named by id, which may be a secret one (.ssh); "
            "name it as rev:path (HEAD:src) so the secrets policy can judge the path"
        )
    sub = argv[1 + (git_subcommand(argv[1:]) or 0)]
    if sub not in _TREE_WALKERS:
        return None  # one level of names below a path the policy judged
    return (
        f"git {sub}: {name!r} is a directory whose files git would name from inside it, "
        "where the exclusions of secret directories (.ssh, .config/gh) do not apply; name "
        f"the revision and the directory as a path: git {sub} ... REV -- {path}"
    )


def objects_refusal(argv: Sequence[str], objects: Sequence[str], answer: str) -> str | None:
    """Why the ``objects`` of ``argv`` (``git_object_args``) may not be read, given git's
    whole answer to ``cat-file --batch-check=%(objecttype)`` (a line an object, in order);
    None when each may. An answer short of a line for each is refused too: git answered
    nothing, having found no repository where it looked. The check failed open before, so a
    parent swapped for a link while it ran (redfiles27) passed a blob's id that the stage,
    started after it, then read. A ``missing`` object passes: the words typed include what
    is no object (``cat-file``'s type word, a range), and the stage reads the repository
    the check read (``held_dirs.run_held``; the limit without bubblewrap is in
    docs/security.md)."""
    kinds = answer.splitlines()
    for name, kind in zip(objects, kinds, strict=False):
        if reason := object_refusal(argv, name, kind):
            return reason
    if len(kinds) < len(objects):
        return (
            f"git: {objects[len(kinds)]!r} could not be checked as an object of this "
            "repository (git gave no answer: no repository where it looked, or a directory "
            "on the way changed meanwhile), so nothing ran; run it again"
        )
    return None
