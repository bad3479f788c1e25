"""A destination given as a glob, in the destructive-command check (``shell.destructive``).

``cp pre-commit .git/hook?/``, ``tee /etc/cron.d/*``, ``cp x /root/.bashr?`` name their
destination by a pattern, which the shell expands to files the check never sees: the word
was unknown, so the destination rule (``shell.destructive_targets``) read no destination and
the line ran unasked after "always". A pattern is judged as the path it is (its literal
directories: ``/etc/cron.d/*`` is under ``/etc``, ``.git/hook?/`` inside ``.git``) and as
each name the write rules refuse that it may match: a hidden component (``.bashr?``,
``.gi?``; the shell matches a leading dot only when the pattern starts with one) as each
hidden name the write tool never writes, a directory on the way (``/home/u/*/x``) as each
installed or ``bin`` directory. A last component that is not hidden is judged as given:
``sed -i ... src/*.py`` may match any file of the project, as the project's own edits do.

Contract: ``is_pattern(word)``; ``matched_paths(path) -> list[str]``: ``path`` itself, and
``path`` with its pattern components replaced by the refused names they may match.
"""

from __future__ import annotations

import fnmatch
import functools
import itertools

from rho_domain.never_written import INSTALLED_DIRS, NEVER_WRITTEN_DIRS, NEVER_WRITTEN_FILES

_META = frozenset("*?[")
# the names a pattern's component is matched against: hidden ones the write tool never
# writes (.git, .ssh, .vscode, .bashrc, .envrc, .mcp.json...), and the directories on the way
# to code that runs later (an environment's installed code, a home's bin)
_SECRETS = frozenset([".env", ".netrc", ".envrc.local", ".envrc.private"])
_REFUSED = NEVER_WRITTEN_DIRS | NEVER_WRITTEN_FILES | _SECRETS
_HIDDEN = tuple(sorted(n for n in _REFUSED if n[0] == "."))
_ON_THE_WAY = tuple(sorted(n for n in {*INSTALLED_DIRS, "bin"} if n[0] != "."))
_MOST = 64  # paths judged for one pattern (a pattern of many glob components)


def is_pattern(word: str) -> bool:
    """True when ``word`` holds a glob character (a pattern, or a name that reads as one)."""
    return not _META.isdisjoint(word)


@functools.lru_cache(maxsize=1024)
def matched_paths(path: str) -> list[str]:
    """``path``, and when it is a pattern, the paths it may name among the refused names
    (at most ``_MOST``)."""
    if not is_pattern(path):
        return [path]
    parts = path.split("/")
    last = max((i for i, part in enumerate(parts) if part), default=0)
    choices = [_names(part, last=index == last) for index, part in enumerate(parts)]
    found = ("/".join(names) for names in itertools.product(*choices))
    return [path, *itertools.islice((p for p in found if p != path), _MOST)]


def _names(part: str, *, last: bool) -> list[str]:
    """What the component ``part`` may name: itself, and the refused names it matches."""
    if not is_pattern(part):
        return [part]
    probes = _HIDDEN if part.startswith(".") else () if last else _ON_THE_WAY
    return [part, *(name for name in probes if fnmatch.fnmatchcase(name, part))]
