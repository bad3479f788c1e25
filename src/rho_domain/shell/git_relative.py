"""git's paths into history that git reads from the stage's directory, judged from there.

``check_git`` judges every path a git stage names in history by its text, since no file on
disk stands for it. Some of those paths git takes relative to the directory it runs in: a
revision's ``./path`` and ``../path`` (``HEAD:./config.json``, the index's ``:./config.json``),
``git blame``'s file, ``git ls-tree``'s paths and every path after ``--``. Their text alone
does not say where they lead: ``cd .docker && git show HEAD:./config.json`` and
``git blame HEAD -- config.json`` there printed a docker login committed and since removed
from the work tree (present, the word names the file and is judged by its real path), and
``cd .config && git ls-tree HEAD gh/`` listed what ``gh`` held. ``cwd_history_refusal``
judges each of them joined to the stage's canonical directory, as the executors know it.
A pathspec's magic (``:(top)``, ``:/``) makes a path the repository root's: its text is
judged as such by ``check_git`` (``git_revs.history_paths``).

A revision's path without ``./`` is the root's, but git's error for one it does not find
there looks it up from the stage's directory too and names what it finds:
``cd .config && git show HEAD:gh/NAME`` answered ``path '.config/gh/NAME' exists, but not
'gh/NAME'`` (the index's ``:gh/NAME`` likewise), an oracle for the names inside a committed
secret directory, whose names the listings hide. So every revision path is judged joined to
the stage's directory as well: such a command is refused, and from the root the join is the
root's own path.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from functools import partial

from rho_domain.secrets import SecretPolicy
from rho_domain.shell.git import SUBCOMMANDS
from rho_domain.shell.git_objects import git_subcommand, revisions_and_paths
from rho_domain.shell.git_revs import (
    blame_paths,
    pathspec_body,
    revision_sides,
    split_rev_path,
    tree_path_refusal,
)
from rho_domain.shell.options import Parsed, split_options


def relative_history_paths(argv: Sequence[str]) -> tuple[str, ...]:
    """The paths into history of the git stage ``argv`` that git reads relative to the
    stage's directory, or names from there in its errors (every revision's path; see the
    module docstring); () for any other stage. ``git blame``'s file when git reads it from
    a tree only is not here but in ``blamed_in_tree``."""
    if (stage := _parsed(argv)) is None:
        return ()
    sub, parsed = stage
    before, paths = revisions_and_paths(sub, parsed)
    if sub == "blame":  # its file, as git picks it, not its revisions (HEAD~1)
        paths = blame_paths(parsed.operands, parsed.separator)[0]
    for word in before:
        for side in revision_sides(word):
            path = split_rev_path(side)[1]
            if path:  # a root's path too: git's error names it joined (module docstring)
                paths.append(path)
    out = [body for word in paths if (body := pathspec_body(word, from_cwd=True)) is not None]
    return tuple(dict.fromkeys(out))


def blamed_in_tree(argv: Sequence[str]) -> tuple[str, ...]:
    """The operands of the stage ``argv`` that are ``git blame``'s file only when git reads
    it from a revision's tree (``git_revs.blame_paths``); () for any other stage."""
    stage = _parsed(argv)
    if stage is None or stage[0] != "blame":
        return ()
    return tuple(blame_paths(stage[1].operands, stage[1].separator)[1])


def cwd_history_refusal(argv: Sequence[str], cwd: str, policy: SecretPolicy) -> str | None:
    """Why the git stage ``argv`` run in ``cwd`` (canonical) may not run: one of its
    ``relative_history_paths`` or ``blamed_in_tree``, joined to ``cwd``, is a secret by
    ``policy`` (the latter by ``tree_path_refusal``); None when none is. A word naming an
    existing file is judged by its real path besides (``reads``)."""
    judged = [(path, policy.refusal) for path in relative_history_paths(argv)]
    judged += [(path, partial(tree_path_refusal, policy)) for path in blamed_in_tree(argv)]
    for path, judge in judged:
        if reason := judge(posixpath.normpath(posixpath.join(cwd, path))):
            return (
                f"git: {path!r} from {cwd}: {reason}; its content and its name may not be read"
                " (git names a revision's path from there in its errors)"
            )
    return None


def _parsed(argv: Sequence[str]) -> tuple[str, Parsed] | None:
    """The git subcommand of the stage ``argv`` and its parsed words; None for another stage."""
    if not argv or argv[0] != "git":
        return None
    args = list(argv[1:])
    index = git_subcommand(args)
    if index is None or args[index] not in SUBCOMMANDS:
        return None
    sub = args[index]
    return sub, split_options(f"git {sub}", args[index + 1 :], SUBCOMMANDS[sub])
