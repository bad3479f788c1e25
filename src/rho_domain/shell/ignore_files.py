"""The ignore files rg reads by itself above where it starts, judged like words that name them.

rg reads ``.ignore``, ``.rgignore``, ``.gitignore`` and ``.git/info/exclude`` in every
directory it walks and in every directory above each place it starts from (its working
directory and each directory operand), and prints each line of them it cannot parse as a glob
("./.ignore: line 1: error parsing glob 'API_KEY=...[x'"). Below where it starts, the harness's
``--no-ignore-messages`` silences those lines (``reads.secret_safe_argv``); above, rg 13 prints
them whatever its flags say but ``--no-messages``. So the executors judge the ignore files
above each starting place, up to the workspace's root, as if words named them
(``implied_ignore_files``): one that is a link to a secret, out of reach, or another name (a
hard link) of a secret refuses the stage. Above the workspace's root are the operator's own
directories, which bubblewrap hides; a start in a read root (``extra_read_roots``) climbs up
to that root. An ``xargs`` target starts wherever its items say, so it runs with
``--no-messages``.

Where ``.git`` is a file (a linked worktree's ``gitdir: ...``), rg reads the ``commondir``
named in that git directory and the ``info/exclude`` there, a path no lexical judge sees: so rg
always runs with ``--no-ignore-exclude`` and reads no exclude file at all; ``.git/info/exclude``
stays on this list as a second wall.

Pure: lexical paths (rg climbs the path it was given, not its real path); the executors keep
those that exist.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence

from rho_domain.errors import CommandRefused
from rho_domain.shell.options import split_options
from rho_domain.shell.programs import SPECS

IGNORE_FILES = (".ignore", ".rgignore", ".gitignore", ".git/info/exclude")


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def implied_ignore_files(
    argv: Sequence[str], cwd: str, root: str, extra: Sequence[str] = ()
) -> tuple[str, ...]:
    """The absolute paths of the ignore files an ``rg`` stage (``argv``, run in ``cwd``) may
    read above where it starts, up to the innermost of ``root`` (the workspace) and ``extra``
    (the read roots) holding that place, each once; () for any other program or an argv its
    table refuses. Every operand counts as a starting place (the pattern too: it names no
    directory, or one whose ignore files are read anyway)."""
    if not argv or argv[0] != "rg":
        return ()
    try:
        operands = split_options("rg", argv[1:], SPECS["rg"]).operands
    except CommandRefused:
        return ()
    roots = [posixpath.normpath(r) for r in (root, *extra)]
    out: list[str] = []
    for start in (cwd, *(posixpath.join(cwd, op) for op in operands)):
        directory = posixpath.normpath(start)
        # A start in a read root climbs to that root (rg 13 prints the lines of a read
        # root's .ignore above a start there too); the workspace's own stop at the workspace.
        holding = [r for r in roots if _within(directory, r)]
        if not holding:
            continue
        top = max(holding, key=len)
        while _within(directory, top):
            out += [posixpath.join(directory, name) for name in IGNORE_FILES]
            if directory == top:
                break
            directory = posixpath.dirname(directory)
    return tuple(dict.fromkeys(out))
