"""``git ls-tree -r --name-only``: a revision's files, listed with the secret directories left out.

``git ls-tree -r`` walks every tree of a revision, ``.ssh``'s and ``.config/gh``'s too, and takes
no exclusion pathspec (its paths are literal prefixes, and it refuses pathspec magic), so the
harness cannot keep it out of them. Its names-only form prints what the diff of the revision
from the empty tree names: the same files in the same order, relative to the stage's directory
and limited to it (``--relative``), or named from the root with ``--full-name``; the revision
follows ``--end-of-options``, as the model may write it after ``--`` where no option is read.
That diff takes the exclusion pathspecs every history reader gets (``reads.secret_safe_argv``),
so ``tree_list_words`` runs it in its place; the model's paths stay literal (``:(literal)``), as
ls-tree reads them. The forms that print modes, ids or sizes, or trees (``-t``, ``-d``,
``-l``, ``--format``, ``--object-only``) have no such twin and are refused
(``recursive_listing_refusal``); so is a tree named ``REV:DIR``, whose files the diff would
name from inside it, past the exclusions. The empty tree is SHA-1's: in a SHA-256 repository
git answers that it is a bad object. Used by ``git.check_git`` and ``git.harden_git``.
"""

from __future__ import annotations

from collections.abc import Sequence

from rho_domain.shell.git_revs import split_rev_path
from rho_domain.shell.options import Parsed

# The empty tree's ids (SHA-1, SHA-256): a revision's whole file list is its diff from it.
EMPTY_TREES = frozenset(
    {
        "4b825dc642cb6eb9a060e54bf8d69288fbee4904",
        "6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321",
    }
)
EMPTY_TREE = min(EMPTY_TREES, key=len)
_NAMES_ONLY = frozenset({"name-only", "name-status"})  # ls-tree's --name-status is the same
_KEPT = frozenset({"r", "z", "full-name", "abbrev", *_NAMES_ONLY})  # --abbrev: no id is printed


def recursive_listing_refusal(parsed: Parsed) -> str | None:
    """Why ``git ls-tree`` with the options and operands ``parsed`` may not run; None when
    it may (it does not recurse, or it is a names-only listing ``tree_list_words`` builds)."""
    if not parsed.has("r"):
        return None
    if not parsed.has(*_NAMES_ONLY) or any(name not in _KEPT for name, _ in parsed.options):
        return (
            "git ls-tree: -r lists the files inside committed secret directories (.ssh, "
            ".config/gh) with their modes and ids, and ls-tree takes no exclusion pathspec; "
            "git ls-tree -r --name-only REV [DIR] lists a revision's files without them, "
            "git ls-tree REV DIR/ one directory"
        )
    if not parsed.operands:
        return "git ls-tree: a revision is needed (git ls-tree -r --name-only HEAD)"
    revision, paths = parsed.operands[0], parsed.operands[1:]
    if split_rev_path(revision)[1] is not None or ".." in revision or revision.startswith("^"):
        return (
            f"git ls-tree -r: {revision!r} is no single revision (a range, or a tree named "
            "as REV:DIR, whose files git would name from inside it, past the exclusions of "
            "secret directories); name the revision and the directory as a path: "
            "git ls-tree -r --name-only REV DIR"
        )
    if any(".." in path.split("/") for path in paths):
        return (
            "git ls-tree -r --name-only: a path above the current directory; run it from "
            "the repository's root, or add --full-name"
        )
    return None


def tree_list_words(parsed: Parsed, hardening: Sequence[str]) -> tuple[str, ...]:
    """The subcommand words (``diff``, its forced ``hardening``, then the rest) that list what
    ``git ls-tree -r --name-only`` (``parsed``, which ``recursive_listing_refusal`` let through)
    would, so that the harness's exclusion pathspecs can follow them."""
    revision, paths = parsed.operands[0], parsed.operands[1:]
    words = ["diff", *hardening, "--name-only", "--no-renames"]
    words += ["-z"] if parsed.has("z") else []
    if not parsed.has("full-name"):
        words.append("--relative")
    elif not paths:
        paths = (".",)  # limited to the stage's directory, as ls-tree is
    # The model may write REV after its "--" (git ls-tree -r --name-only -- REV), where no
    # option is read; in the diff it comes before "--", so --end-of-options keeps it a
    # revision (a REV of --output=FILE had the diff write FILE).
    ends = ("--end-of-options", EMPTY_TREE, revision, "--")
    return (*words, *ends, *(f":(literal){p}" for p in paths))
