"""The files a program opens by a name it builds itself, which no word of the command names.

``reads.path_words`` adds these to a stage's words, so the executors judge them like any
other (secrets policy on the real path, hard-link aliases, where reads may go); a name that
names nothing is ignored there, so listing every candidate costs nothing.

* ``diff FILE DIR`` (or ``DIR FILE``) compares FILE with ``DIR/FILE``'s basename.
* ``zcat NAME``, when NAME does not exist, opens the first of ``NAME.gz``, ``NAME.z``,
  ``NAME-z``, ``NAME.Z`` that does (gzip's ``get_istat``; ``-S`` is not allowed, so its
  default suffix is ``.gz``): ``zcat ../outside/data`` read ``../outside/data.gz``, and
  ``zcat -f a`` printed ``.env`` through a link ``a.gz -> .env``.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence

from rho_domain.errors import CommandRefused
from rho_domain.shell.options import split_options
from rho_domain.shell.programs import SPECS

# gzip 1.x, get_istat: the suffixes tried, in order, after the name as given.
GZIP_SUFFIXES = (".gz", ".z", "-z", ".Z")


def implied_paths(argv: Sequence[str]) -> tuple[str, ...]:
    """The paths ``argv``'s program may open that none of its words names (see above)."""
    if not argv or argv[0] not in ("diff", "zcat"):
        return ()
    try:
        operands = split_options(argv[0], argv[1:], SPECS[argv[0]]).operands
    except CommandRefused:
        return ()  # refused anyway, by the plan
    if argv[0] == "zcat":
        return tuple(
            f"{name}{suffix}" for name in operands if name != "-" for suffix in GZIP_SUFFIXES
        )
    if len(operands) != 2:
        return ()
    first, second = operands
    return (
        posixpath.join(second, posixpath.basename(first.rstrip("/"))),
        posixpath.join(first, posixpath.basename(second.rstrip("/"))),
    )
