"""What a walker skips: the base names a recursive reader (grep -r, rg, diff -r, git's
pathspecs, an xargs target) is told to exclude so that it never reads a secret it finds by
itself, wherever it walks (``walk_exclusions``), and the concrete secrets a scan found that
those names do not already cover (``unlisted``). Pure; ``reads.secret_safe_argv`` applies them.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence

from rho_domain.glob_set import GlobSet
from rho_domain.secrets import EXCLUDED_NAMES, SecretPolicy
from rho_domain.service_secrets import SERVICE_SECRET_GLOBS

# Walked by ``grep -r /`` and friends, never worth reading: skipped when below a walked root.
_WALK_SKIPPED = ("/proc", "/dev", "/sys")
# A hidden name, as a glob no command-line name like "./src/a.py" or "." matches (grep and diff
# match --exclude against whole names too): a dot, then neither a dot nor a slash.
HIDDEN = ".[!./]*"
# A concrete location whose name a rule already excludes adds no word to the argv.
_EXCLUDED = GlobSet(tuple(f"/{name}" for name in EXCLUDED_NAMES))
EXCLUDED_GLOBS = _EXCLUDED  # "/name" matched: whether a walker already skips a base name


def _below(location: str, walked: Sequence[str]) -> bool:
    loc = posixpath.normpath(location)
    return any(
        loc == w or loc.startswith(w.rstrip("/") + "/") for w in map(posixpath.normpath, walked)
    )


def unlisted(paths: Sequence[str]) -> tuple[str, ...]:
    """The ``paths`` whose names ``EXCLUDED_NAMES`` does not already exclude: the secrets a
    scan found that a walker's exclusions must name (``.config/gh``, ``deploy/id_github``;
    not the thousand ``*.pem`` of a test suite, which ``*.pem`` covers)."""
    return tuple(p for p in paths if not _excluded(posixpath.basename(p)))


def _excluded(name: str) -> bool:
    """Whether the walkers' exclusions of ``EXCLUDED_NAMES`` skip an entry named ``name``.
    They match letters in either ASCII case (``.SSH``), nothing more: ``.<U+017F>sh`` casefolds
    to ``.ssh`` but no walker's ``.[sS][sS][hH]`` skips it, so a name that is not ASCII is
    never taken as covered (its own exclusion is added)."""
    return name.isascii() and _EXCLUDED.matches("/" + name.lower())


def _exposed(location: str, walked: Sequence[str]) -> bool:
    """Whether a walk from one of ``walked`` meets ``location`` through no directory that
    ``EXCLUDED_NAMES`` skips (``.git/config`` from the workspace: ``.git`` is skipped, so
    files named ``config`` elsewhere are not; from ``.git``, ``config`` must be). A walk from
    ``/`` stands for any directory (an xargs target's): every location below it is exposed."""
    loc = posixpath.normpath(location)
    for root in map(posixpath.normpath, walked):
        if root == "/" and loc != "/":
            return True
        if loc == root or loc.startswith(root.rstrip("/") + "/"):
            between = loc[len(root) :].strip("/").split("/")[:-1]
            if not any(map(_excluded, between)):
                return True
    return False


def walk_exclusions(policy: SecretPolicy, walked: Sequence[str]) -> tuple[str, ...]:
    """Basenames a recursive reader walking ``walked`` (canonical directories) must skip: the
    name rules' (``EXCLUDED_NAMES``) and ``concrete_exclusions``, each once."""
    return tuple(dict.fromkeys((*EXCLUDED_NAMES, *concrete_exclusions(policy, walked))))


def concrete_exclusions(policy: SecretPolicy, walked: Sequence[str]) -> tuple[str, ...]:
    """The names, beside ``EXCLUDED_NAMES``, a walk of ``walked`` must skip: those of the
    concrete locations below ``walked`` (the executors add the secrets they found there to
    ``policy.locations``: ``deploy/id_github``, ``.config/gh``, which no list of names can
    say), the base names of the glob secrets it may meet (``_glob_exposed``), and ``HIDDEN``
    when it walks over a home (every hidden entry: the policy's rule 2b)."""
    concrete = (*policy.absolute_locations(), *_WALK_SKIPPED)
    extra = [
        name
        for loc in concrete
        if _exposed(loc, walked) and not _excluded(name := posixpath.basename(loc))
    ]
    extra += [base for glob in SERVICE_SECRET_GLOBS if (base := _glob_exposed(glob, walked))]
    extra += [posixpath.basename(name) for name in policy.anywhere]  # below any directory
    if any(_below(home, walked) for home in policy.homes):
        extra.append(HIDDEN)
    return tuple(dict.fromkeys(extra))


def _glob_exposed(glob: str, walked: Sequence[str]) -> str | None:
    """The base name of the secrets ``glob`` matches (``1260*`` of PostgreSQL's
    ``/var/lib/postgresql/*/main/global/1260*``) when a walk from ``walked`` may meet them: a
    root and the glob's fixed directory are one inside the other (``/`` stands for any). No
    walk finds these by a concrete path, and only the local executor scans the trees it
    walks: on Daytona, and for the directories an xargs target is handed at run time, the
    walker itself must skip them (grep -r on Daytona and xargs rg read pg_authid)."""
    fixed = re.split(r"[*?[]", glob, maxsplit=1)[0]
    top = posixpath.dirname(fixed) if "/" in fixed else ""
    name = glob.rsplit("/", 1)[-1]
    if not top or top == "/":
        return name
    for root in map(posixpath.normpath, walked):
        if root == "/" or _below(root, [top]) or _below(top, [root]):
            return name
    return None
