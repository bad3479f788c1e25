"""Commands other than git's that write files they never name, for the destructive-command
check (``shell.destructive_written``): another revision's or a remote's files put in the work
tree, and a project's manifest rewritten from the command's own words.

Their words name a pull request, a revision or a setting, never the files they change, so
nothing counted as written and a later ``make``, ``npm run x`` or ``pytest`` ran what they
brought unasked after "always" (``gh pr checkout 12`` then ``make``; ``npm pkg set
scripts.x='...'`` then ``npm run x``, the model's words as the script). Each counts as writing
"the files <program> <verb> writes", so a later program that may read code asks, once:

* gh: ``pr checkout``, ``repo clone``/``fork``/``sync``, ``release download``, ``run
  download``, ``gist clone``; glab: ``mr checkout``, ``repo clone``, ``release download``;
* hg and Sapling's sl: ``update``/``up``/``checkout``/``co``/``goto``, ``pull`` (its ``-u``
  and ``--rebase`` update), ``merge``, ``rebase``, ``graft``, ``backout``, ``unshelve``,
  ``shelve`` (back to a parent another command may have moved), ``import``, ``clone``...;
* svn: ``update``/``up``, ``checkout``/``co``, ``switch``/``sw``, ``merge``, ``patch``,
  ``export``; jj: ``new``, ``edit``, ``checkout``, ``prev``, ``next``, ``restore``,
  ``rebase``, ``abandon``, ``undo``, ``op``, ``squash``, ``workspace``, ``git clone``;
* npm, pnpm, bun (``bun pm pkg``): ``pkg set`` (``package.json``'s scripts are commands
  ``npm run`` and ``npm install`` run), and npm's older ``set-script``;
* rename (perl's, and its other names): the new names are what its expression computes.

Contract: ``unnamed_writes(name, words) -> str``: what stands for the files ``name words``
writes without naming them (``"the files gh pr checkout writes"``), or "".
"""

from __future__ import annotations

from collections.abc import Sequence

from rho_domain.shell.destructive_words import Arg, split_options

# the verbs that put another revision's or a remote's files in the work tree, by program and
# by the group a verb belongs to (gh pr checkout: the group "pr")
_GROUPED = {
    "gh": {
        "pr": frozenset(["checkout", "co"]),
        "repo": frozenset(["clone", "fork", "sync"]),
        "release": frozenset(["download"]),
        "run": frozenset(["download"]),
        "gist": frozenset(["clone"]),
    },
    "glab": {
        "mr": frozenset(["checkout"]),
        "repo": frozenset(["clone"]),
        "release": frozenset(["download"]),
    },
    "jj": {"git": frozenset(["clone"]), "workspace": frozenset(["add"])},
}
_MERCURIAL = frozenset(
    [
        "update", "up", "checkout", "co", "goto", "go", "pull", "merge", "rebase", "graft",
        "backout", "unshelve", "shelve", "import", "clone", "histedit", "fetch", "revert",
        "unbundle", "strip",
    ]
)  # fmt: skip
_SUBVERSION = frozenset(
    ["update", "up", "checkout", "co", "switch", "sw", "merge", "patch", "export"]
)
_JUJUTSU = frozenset(
    [
        "new", "edit", "checkout", "co", "prev", "next", "restore", "rebase", "abandon", "undo",
        "op", "squash", "unsquash", "resolve", "backout",
    ]
)  # fmt: skip
_VERBS = {
    "hg": _MERCURIAL,
    "sl": _MERCURIAL,
    "svn": _SUBVERSION,
    "jj": _JUJUTSU,
    "npm": frozenset(["set-script"]),
}
# programs that write files named by what they compute: perl's rename names each new file
# with the expression it is given (rename 's/x/Makefile/' x)
_RENAMERS = frozenset(["rename", "prename", "file-rename", "perl-rename"])
# package managers whose ``pkg set`` writes package.json (bun's is ``bun pm pkg set``)
_MANIFEST = frozenset(["npm", "pnpm", "bun"])
_FIRST_WORDS = 3  # where the verb may stand, after a global option's value


def unnamed_writes(name: str | None, words: Sequence[Arg]) -> str:
    """What stands for the files ``name words`` writes without naming them, or ""."""
    if name is None:
        return ""
    if name in _RENAMERS:
        return f"the files {name} writes"
    _, operands = split_options(words)
    verbs = [w for w in operands if w is not None]
    # a global option's value (hg -R repo up, gh -R a/b pr checkout) may come first
    for at in range(min(len(verbs), _FIRST_WORDS)):
        verb, following = verbs[at], verbs[at + 1 : at + 2]
        if name in _MANIFEST and verb == "pkg" and following == ["set"]:
            return f"the files {name} pkg set writes"
        if verb in _VERBS.get(name, ()):
            return f"the files {name} {verb} writes"
        if following and following[0] in _GROUPED.get(name, {}).get(verb, ()):
            return f"the files {name} {verb} {following[0]} writes"
    return ""


def writes_unnamed(name: str | None) -> bool:
    """True when ``unnamed_writes`` may find something for ``name``."""
    return name in _VERBS or name in _GROUPED or name in _MANIFEST or name in _RENAMERS
