"""The archive file an archiver writes when it creates, appends to or updates one, for
``shell.destructive_targets``'s destination rule.

An uncompressed archive holds its members' bytes as they are (a tar member after its 512-byte
header, a zip member stored with ``-0``), so an archive written where something later reads it
as code is a write of chosen content: ``tar -cf /etc/profile.d/x.sh payload`` puts the
payload's lines where every login shell runs them, and ran unasked, as did ``zip
/etc/cron.d/x a``, ``7z a``, ``rar a``, ``ar rc`` and ``python3 -m zipfile -c`` into any
directory. The archive such a command names is now a destination like ``cp``'s: judged in
each directory the command may run in, asking outside the workspace and for what the write
tool refuses. Reading one (``tar -tf /etc/x.tar``, ``7z l``, ``ar t``) names no destination;
extracting one is ``shell.destructive_archives``'.

Contract: ``made_archives(first, words) -> list[str | None]``: the archive files ``first``
run with ``words`` (its arguments; None unknown) writes, None where a word no one knows is
one (what xargs appends), [] when it writes none or writes standard output (``tar -c``
without ``-f``); a mode no known word sets (``xargs tar``) is judged as an extraction
(``shell.destructive_archives``), which asks.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from rho_domain.shell.destructive_archives import SEVEN_ZIPS
from rho_domain.shell.destructive_words import Arg

# tar-like: the letters of a mode that writes the archive, and the long options that do
_TAR_MODES = {"tar": "cruA", "bsdtar": "cru", "jar": "cu"}
_TAR_LONG = ("--create", "--append", "--update", "--concatenate", "--catenate")
_OLD_VALUED = frozenset("bfgCFKLNTVX")  # tar's old-style letters that take a value
_SEVEN_WRITES = frozenset(["a", "u", "d", "rn"])
_RAR_READS = frozenset(["e", "x", "l", "lt", "lb", "v", "vt", "vb", "p", "t", "i"])
_AR_WRITES = frozenset("dmqrs")
# zip's options that take the next word as their value (zip 3.0's manual)
_ZIP_VALUED = frozenset(["-b", "-n", "-t", "-tt", "-P", "-Z", "-s", "-sp", "-O", "--out"])
_PYTHON = {"python -m zipfile": ("-c", "--create"), "python -m tarfile": ("-c", "--create")}
MAKERS = frozenset([*_TAR_MODES, *SEVEN_ZIPS, "rar", "ar", "zip", *_PYTHON])


def made_archives(first: str | None, words: Sequence[Arg]) -> list[str | None]:
    """The archive files ``first words`` creates or changes; see the module's contract."""
    if first in _TAR_MODES:
        return _tar_like(_TAR_MODES[first], words)
    if first in SEVEN_ZIPS or first == "rar":
        operands = [w for w in words if w is None or not w.startswith("-")]
        if not operands:
            return []
        mode, archive = operands[0], operands[1:2]
        writes = mode in _SEVEN_WRITES if first in SEVEN_ZIPS else mode not in _RAR_READS
        return list(archive) if mode is None or writes else []
    if first == "ar":
        return _ar(words)
    if first == "zip":
        return _zip(words)
    if first in _PYTHON:
        flags = _PYTHON[first]
        return [v for o, v in itertools.pairwise(words) if o in flags]
    return []


def _tar_like(letters: str, words: Sequence[Arg]) -> list[str | None]:
    """tar's, bsdtar's or jar's ``-f`` archive when a mode writes it (``-c``, ``czf``,
    ``--create``, ``-rf``, ``--append``...); None when an unknown word may be the mode."""
    head = words[0] if words and words[0] is not None and not words[0].startswith("-") else ""
    clusters = [w[1:] for w in words if w is not None and w[:1] == "-" and w[1:2] != "-"]
    writes = any(set(c) & set(letters) for c in [head, *clusters]) or any(
        w is not None and w.startswith(_TAR_LONG) for w in words
    )
    if not writes:  # an unseen mode (xargs tar) is extraction's to judge: it asks there
        return []
    found: list[str | None] = []
    rest = list(words[1:]) if head else list(words)
    values = iter(rest)  # old style (czf FILE, cbf 20 FILE): each letter that takes a value
    for letter in head:  # takes the next word, in the letters' order
        if letter in _OLD_VALUED:
            value = next(values, "")
            found += [value] if letter == "f" else []
    for word, following in itertools.pairwise([*rest, ""]):
        if word is None or not word.startswith("-"):
            continue
        if word.startswith("--file="):
            found.append(word.split("=", 1)[1])
        elif word == "--file":
            found.append(following)
        elif word[1:2] != "-" and "f" in word:  # -cvf FILE, -cfFILE
            found.append(word[word.index("f") + 1 :] or following)
    return [f for f in found if f not in ("", "-")]


def _ar(words: Sequence[Arg]) -> list[str | None]:
    """``ar``'s archive when its mode writes it (``r``, ``q``, ``d``, ``m``, ``s``): the
    operand after the mode, and the one after it too with a position modifier (``a``, ``b``,
    ``i`` take a member's name first)."""
    if not words:
        return []
    mode, operands = words[0], [w for w in words[1:] if w is None or not w.startswith("-")]
    if mode is None:
        return operands[:2] or [None]
    letters = mode.lstrip("-")
    if not set(letters) & _AR_WRITES:
        return []
    return operands[:2] if set(letters) & set("abi") else operands[:1]


def _zip(words: Sequence[Arg]) -> list[str | None]:
    """The archive zip writes (its first operand) and ``-O``/``--out``'s file."""
    found: list[str | None] = []
    archive: list[str | None] = []
    skip = False
    for word, following in itertools.pairwise([*words, ""]):
        if skip:
            skip = False
            continue
        if word is not None and word.startswith("--out="):
            found.append(word.split("=", 1)[1])
        elif word in _ZIP_VALUED:
            skip = True
            if word in ("-O", "--out"):
                found.append(following)
        elif word is None or not word.startswith("-"):
            archive = archive or [word]
    return [f for f in [*archive, *found] if f not in ("", "-")]
