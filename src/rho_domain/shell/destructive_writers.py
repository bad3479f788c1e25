"""More destinations a writer's words name, for ``shell.destructive_targets``'s destination
rule: the files ``sed -i`` edits in place, ``sponge``'s output, ``patch``'s file and ``-d``
directory, the directory ``curl --output-dir`` and ``wget -P`` save into (joined with each
URL's last component, the name they save it as), and the directory ``git clone`` (named, or
the URL's last component) or ``git init`` makes, in the one ``git -C`` enters, and the
directories ``pip install`` fills (``--target``, ``-t``, ``--prefix``, ``--root``), and the
files the in-place editors rewrite (``yq -i``, ``sd``, ``crudini --set``, ``json -I``,
``dasel put``, ``ex``: every operand), parallel's ``--joblog`` and ``--results``, and the
files and directories ``touch``, ``mkdir``, ``dos2unix`` and ``unix2dos`` create or rewrite
(every operand: ``touch /etc/cron.d/x``); an operand no word shows (``xargs touch``, ``find
-exec mkdir {}``) is one the check cannot see.

Contract: ``more_destinations(words, first) -> list[str | None]``, the paths ``first`` run
with ``words`` (its arguments; ``None`` unknown) may write (None: one no word shows), or []
for any other program.
"""

from __future__ import annotations

import itertools
import posixpath
from collections.abc import Sequence

from rho_domain.shell.destructive_git import subcommand_index
from rho_domain.shell.destructive_words import Arg, long_hits
from rho_domain.shell.destructive_written import IN_PLACE


def names_more(first: str | None) -> bool:
    """True when ``more_destinations`` may find a path in ``first``'s words."""
    return first in _MORE_WRITERS


def more_destinations(words: Sequence[Arg], first: str | None) -> list[str | None]:
    """The paths ``first`` writes besides those ``destructive_targets`` reads; None where an
    editor rewrites in place a file no word shows (``xargs sed -i s/a/b/``: its input names
    it)."""
    if first not in _MORE_WRITERS:
        return []
    known = [w for w in words if w is not None]
    found: list[str | None] = [*_named(known, words, first)]
    if None in words and (
        first in ("sponge", "patch", *_OPERAND_WRITERS, *_MODE_CHANGERS)
        or _edits_in_place(first, known)
    ):
        found.append(None)
    return found


def _edits_in_place(first: str | None, known: list[str]) -> bool:
    """True when ``first known`` rewrites the files it names (sed -i, yq -i, sd...)."""
    if first == "sed":
        return any(_in_place(w) for w in known)
    marks = IN_PLACE.get(first or "", ())
    return first in _EDITORS and any(w.startswith(marks) for w in known)


def _named(known: list[str], words: Sequence[Arg], first: str | None) -> list[str]:
    """The paths ``first``'s known words name as what it writes."""
    operands = [w for w in known if not w.startswith("-")]
    if first in _EDITORS:  # every operand may be the file (yq's, sd's expressions too)
        return operands if _edits_in_place(first, known) else []
    if first == "sed" and any(_in_place(w) for w in known):
        scripted = any(w in ("-e", "-f") or long_hits(w, _SED_SCRIPTS) for w in known)
        return operands if scripted else operands[1:]  # the first operand is the script
    if first == "sponge":
        return operands
    if first in _OPERAND_WRITERS:  # touch -r REF, -d DATE, mkdir -m MODE: values, not files
        valued = _OPERAND_WRITERS[first]
        pairs = itertools.pairwise(["", *known])
        return [w for before, w in pairs if w in operands and before not in valued]
    if first in _MODE_CHANGERS:  # chmod MODE FILE..., chown OWNER FILE...
        referenced = any(w.startswith("--reference=") for w in known)
        return operands if referenced else operands[1:]
    if first == "patch":
        return operands[:1] + _values(known, "-d", "--directory")
    if first in ("curl", "wget"):
        return _fetched(known, operands, first)
    if first == "git":
        return _git_made(words)
    if first == "parallel":  # the files it logs to, the directory it fills with outputs
        return [p for o in ("--joblog", "--results", "--res") for p in _values(known, "", o)]
    if first in ("pip", "pip3", "uv") and "install" in operands:  # the directories it fills
        # --root R prefixes the install scheme's directories (/usr/local/lib/python3...)
        roots = [posixpath.join(r, "usr/local") for r in _values(known, "", "--root")]
        return roots + _values(known, "", "--prefix") + _values(known, "-t", "--target")
    return []


def _git_made(words: Sequence[Arg]) -> list[str]:
    """The directory ``git clone`` or ``git init`` makes, in the directory its ``-C``
    options enter: ``git -C /root clone URL .oh-my-zsh``."""
    index = subcommand_index(words)
    if index is None or words[index] not in ("clone", "init"):
        return []
    base = ""
    for option, value in itertools.pairwise(words[:index]):
        if option == "-C" and value is not None:
            base = posixpath.join(base, value)
    operands = [w for w in words[index + 1 :] if w is not None and not w.startswith("-")]
    if words[index] == "clone":
        named = operands[1:2] or [_repository_name(u) for u in operands[:1]]
    else:
        named = operands[:1] or (["."] if base else [])
    return [posixpath.normpath(posixpath.join(base, n)) for n in named if n]


def _repository_name(url: str) -> str:
    """The directory ``git clone URL`` makes: the URL's last component without ``.git``."""
    name = url.rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1]
    return name.removesuffix(".git")


def _fetched(known: list[str], operands: list[str], first: str) -> list[str]:
    """What curl -O (--remote-name) and wget without -O save: each URL's last component in
    the directory --output-dir or -P (--directory-prefix) names, or the current one."""
    if first == "curl":
        saves = any(w.startswith("--remote-name") or _letter(w, "O") for w in known)
        dirs = _values(known, "", "--output-dir")
    else:
        saves = not any(w.startswith("--output-document") or _letter(w, "O") for w in known)
        dirs = _values(known, "-P", "--directory-prefix")
    names = [u.split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1] for u in operands if "://" in u]
    joined = [posixpath.join(d, n) for d in dirs or ["."] for n in names] if saves else []
    return dirs + joined


def _letter(word: str, letter: str) -> bool:
    """True when the short cluster ``word`` holds ``letter`` (-LO, -sSO)."""
    return word.startswith("-") and not word.startswith("--") and letter in word[1:]


def _in_place(word: str) -> bool:
    if word.startswith("--"):
        return long_hits(word, _IN_PLACE)
    return word.startswith("-") and "i" in word[1:].split("e", 1)[0].split("f", 1)[0]


def _values(known: list[str], short: str, long: str) -> list[str]:
    """The values of ``short``/``long`` (``-P DIR``, ``-PDIR``, ``--long=DIR``, ``--long DIR``)."""
    found = [w.split("=", 1)[1] for w in known if w.startswith(long + "=")]
    for word, following in itertools.pairwise([*known, ""]):
        if word == long or (short and word == short):
            found.append(following)
        elif short and word.startswith(short) and not word.startswith("--"):
            found.append(word[len(short) :])
    return [f for f in found if f]


_IN_PLACE = frozenset(["in-place"])
_SED_SCRIPTS = frozenset(["expression", "file"])


# the editors that rewrite the files they name with the command's own words (sed's and
# perl's are read apart: sed's script is its first operand, perl -pi runs code and asks)
_EDITORS = frozenset(["yq", "crudini", "json", "dasel", "sd", "ex"])
# the programs that create or rewrite every operand, with their options given a value apart
_OPERAND_WRITERS = {
    "touch": frozenset(["-r", "-d", "-t", "--reference", "--date"]),
    "mkdir": frozenset(["-m", "--mode", "-Z", "--context"]),
    "dos2unix": frozenset(["-c", "--convmode", "-n", "--newfile"]),
    "unix2dos": frozenset(["-c", "--convmode", "-n", "--newfile"]),
}
# the programs that change the mode or owner of every operand but the first (the mode, the
# owner), or of every operand with --reference=FILE: a file's mode or owner changed is the
# file changed (chmod 777 /etc/passwd, chown u /etc/sudoers, chmod u+s /usr/local/bin/x)
_MODE_CHANGERS = frozenset(["chmod", "chown", "chgrp"])
KEEPS_CONTENT = frozenset([*_OPERAND_WRITERS, *_MODE_CHANGERS])
"""The writers whose files hold no content from elsewhere (an empty file, a directory, a
mode or an owner changed)."""
_MORE_WRITERS = frozenset(
    ["sed", "sponge", "patch", "curl", "wget", "git", "pip", "pip3", "uv", "parallel", *_EDITORS,
     *_OPERAND_WRITERS, *_MODE_CHANGERS]
)  # fmt: skip
