"""Where an archive's members land, for the destination rule (``shell.destructive_targets``).

An extractor writes members the check cannot see: a member may be ``.git/hooks/pre-commit``
or ``.envrc``, which run later (git commit, direnv). So extracting into the command's own
directory asks, and into a directory it names (``tar -C DIR``, ``unzip -d DIR``, ``cpio -D
DIR``, ``7z x -oDIR``, ``unrar x a.rar DIR/``, ``unar -o DIR``, ``ar x --output=DIR``) that
directory is judged, joined with each member named and with ``.*`` (a home's hidden
entries). What lands outside whatever directory is given asks outright: ``cpio -i`` writes
absolute and ``../`` member names as they are unless ``--no-absolute-filenames``, 7-Zip's
``-spf`` keeps absolute paths, and ``gunzip -N`` (``gzip -dN``, ``--name``) names its output
by the name stored in the archive. What a compressor or decompressor writes (``gunzip
.envrc.gz`` writes ``.envrc``, ``zstd -o FILE``, ``gzip x`` replaces ``x``) is
``shell.destructive_compressors``', judged as any destination.

Contract: ``ARCHIVERS``, the programs read here; ``archive_destinations(first, words)``, the
paths ``first words`` writes (None: one no word shows); ``unread_members(words, first,
cwd) -> str``, the reason to ask for members out of sight, or "".
"""

from __future__ import annotations

import itertools
import posixpath
from collections.abc import Sequence

from rho_domain.shell.destructive_compressors import (
    COMPRESSORS,
    compressor_outputs,
    decompresses,
    restores_name,
)
from rho_domain.shell.destructive_cwd import Directories
from rho_domain.shell.destructive_table import judge_program
from rho_domain.shell.destructive_words import Arg, long_hits

_EXTRACT = frozenset(["extract", "get"])
# the extractors that take their directory as an option: (short, long)
_EXTRACTORS = {
    "tar": ("-C", "--directory"),
    "bsdtar": ("-C", "--directory"),
    "unzip": ("-d", "--directory"),
    "cpio": ("-D", "--directory"),
    "unar": ("-o", "-output-directory"),
    "ar": ("", "--output"),
    "jar": ("-C", "--dir"),
    "cabextract": ("-d", "--directory"),
}
# the extractors whose directory is the operand after the archive (dpkg-deb -x a.deb DIR)
_DEBS = frozenset(["dpkg-deb", "dpkg"])
_DEB_EXTRACT = frozenset(["-x", "--extract", "-X", "--vextract", "-R", "--raw-extract"])
SEVEN_ZIPS = frozenset(["7z", "7za", "7zr", "7zz"])
_UNRARS = frozenset(["unrar", "rar"])
ARCHIVERS = frozenset([*_EXTRACTORS, *SEVEN_ZIPS, *_UNRARS, *_DEBS, "uudecode", *COMPRESSORS])
# python -m zipfile -e / -m tarfile -e, read as an extractor of that name
_PYTHON_MODULES = {"zipfile": "python -m zipfile", "tarfile": "python -m tarfile"}


def archive_destinations(first: str, words: Sequence[Arg]) -> list[str | None]:
    """The paths ``first words`` writes: the directory an extraction fills with each member
    named and ``.*``, or a decompressor's derived outputs; [] when it writes none."""
    known = [w for w in words if w is not None]
    if first in COMPRESSORS:
        return compressor_outputs(first, words)
    if not extracts(first, known, words):
        return []
    if first in SEVEN_ZIPS or first in _UNRARS or first in _DEBS:
        return _extracted(known, [_into(first, known)])
    if first in _PYTHON_MODULES.values():  # -e ARCHIVE DIR (tarfile: DIR or its own)
        operands = [w for w in known if not w.startswith("-")]
        return _extracted(known, operands[1:2] or ["."])
    short, long = _EXTRACTORS[first]
    if any(o in (short, long) and v is None for o, v in itertools.pairwise(words)):
        return [None]
    return _extracted(known, _values(known, short, long))


def extracts(first: str, known: list[str], words: Sequence[Arg] = ()) -> bool:
    """True when ``first known`` writes an archive's members (unzip but for its listings,
    tar's, cpio's and ar's extraction, 7-Zip's and unrar's ``x`` and ``e``, unar, jar's
    ``x``, cabextract but for its listings, ``dpkg-deb -x``, python's ``-m zipfile -e``);
    with a word of ``words`` the check cannot see (what xargs appends, a glob) and no
    known word fixing the mode, as extracting (``xargs bsdtar`` ran unasked)."""
    if first == "uudecode":
        return False  # one file, named by what it decodes: _outside_any's
    if None in words and not _mode_fixed(first, known, words):
        return True
    clusters = [w[1:] for w in known if w.startswith("-") and not w.startswith("--")]
    operands = [w for w in known if not w.startswith("-")]
    if first in _PYTHON_MODULES.values():
        return any(w in ("-e", "--extract") for w in known)
    if first in _DEBS:
        return any(w in _DEB_EXTRACT for w in known)
    if first == "cabextract":
        return not any(set(c) & set("ltp") for c in clusters) and not any(
            w in ("--list", "--test", "--pipe") for w in known
        )
    if first == "unzip":
        return not any(set(c) & set("lvtzZpc") for c in clusters)
    if first == "cpio":
        return any("i" in c for c in clusters) or any(long_hits(w, _EXTRACT) for w in known)
    if first in SEVEN_ZIPS or first in _UNRARS:
        return operands[:1] in (["x"], ["e"])
    if first == "ar":
        return bool(known) and "x" in known[0].lstrip("-")
    if first == "unar":
        return True
    head = known[0] if known and not known[0].startswith("-") else ""
    return (
        "x" in head
        or any("x" in c for c in clusters)
        or any(long_hits(w, _EXTRACT) for w in known if w.startswith("--"))
    )


def _mode_fixed(first: str, known: list[str], words: Sequence[Arg]) -> bool:
    """True when a known word chooses ``first``'s mode, so an unseen one cannot (tar's
    ``-c``: a second mode is an error; 7-Zip's and ar's first word), or ``first`` always
    extracts (unzip, unar)."""
    if first in ("unzip", "unar") or first in _PYTHON_MODULES.values():
        return True
    if first in SEVEN_ZIPS or first in _UNRARS or first == "ar":
        mode = next((w for w in words if w is None or not w.startswith("-")), None)
        return mode is not None or (first == "ar" and words[:1] != (None,) and bool(known))
    head = known[0].lstrip("-") if known and first in ("tar", "bsdtar", "jar") else ""
    clusters = [w[1:] for w in known if w.startswith("-") and not w.startswith("--")]
    letters = {"cpio": "iop", "tar": "cxtruA", "bsdtar": "cxtru", "jar": "cxtu"}.get(first, "")
    return bool(letters) and any(set(c) & set(letters) for c in [head, *clusters])


def python_extractor(words: Sequence[Arg]) -> str | None:
    """``python -m zipfile ...`` or ``-m tarfile``: the extractor's name, or None."""
    module = words[1] if len(words) > 1 and words[0] == "-m" else None
    return _PYTHON_MODULES.get(module or "")


def unread_members(words: Sequence[Arg], first: str | None, cwd: Directories) -> str:
    """Why extracting members the check cannot see asks: names that leave any directory
    (cpio's absolute names, 7-Zip's ``-spf``, gunzip ``-N``), or the command's own
    directory as the one filled. Into a new directory, or one the line moved to, they land
    below it."""
    if (module := python_extractor(words)) is not None and (first or "").startswith("python"):
        first, words = module, words[2:]
    known = [w for w in words if w is not None]
    if first is None or (first not in ARCHIVERS and first not in _PYTHON_MODULES.values()):
        return ""
    if judge_program(first, known):
        return ""  # the table's own reason (tar -I runs a command) is the one to say
    if why := _outside_any(first, known):
        return why
    if first in COMPRESSORS or not extracts(first, known, words):
        return ""
    into = archive_destinations(first, words)[0]
    lister = _LISTERS.get(
        first, f"{first} l" if first in SEVEN_ZIPS or first in _UNRARS else f"{first} -tf"
    )
    here = into is not None and not into.startswith("/") and posixpath.normpath(into) == "."
    if here and any(place.path == "" and not place.unknown for place in cwd.places):
        return (
            f"{first} writes an archive's members, which the approval check cannot see, into "
            "the command's directory (an archive may carry .git/hooks/, .envrc, .vscode/, "
            f"which run later): list them first ({lister}), or extract into a new directory"
        )
    if first in _FOLLOWS_LINKS or (first == "bsdtar" and (_insecure(known) or None in words)):
        return (
            f"{first} extracts members the approval check cannot see into {into}, and a member "
            "may be a symbolic link (to /etc, ~/.ssh) that a later member, or a later "
            "extraction into the same directory, writes through: use bsdtar (it writes "
            "through no link), or list the members first and extract by name"
        )
    return ""


_LISTERS = {
    "unzip": "unzip -l", "cpio": "cpio -t", "ar": "ar t", "unar": "lsar", "jar": "jar tf",
    "cabextract": "cabextract -l", "dpkg-deb": "dpkg-deb -c", "dpkg": "dpkg -c",
    "python -m zipfile": "python -m zipfile -l", "python -m tarfile": "python -m tarfile -l",
}  # fmt: skip
# the extractors that restore a member that is a symbolic link and write through links in
# the directory they fill (unzip and GNU tar, shown real; 7-Zip, unrar, unar and cpio restore
# links too): bsdtar refuses unless -P, and ar's members are plain names
_FOLLOWS_LINKS = frozenset(
    ["tar", "unzip", "cpio", "unar", "jar", "python -m tarfile", *SEVEN_ZIPS, *_UNRARS, *_DEBS]
)  # dpkg-deb runs tar; python's tarfile (before 3.14) restores links and absolute names


def _insecure(known: list[str]) -> bool:
    """True when bsdtar is told to write through links and keep ``..`` (-P)."""
    clusters = [w[1:] for w in known if w.startswith("-") and not w.startswith("--")]
    head = known[0] if known and not known[0].startswith("-") else ""
    longs = ("--insecure", "--absolute-paths")
    return "P" in head or any("P" in c for c in clusters) or any(w in longs for w in known)


def _outside_any(first: str, known: list[str]) -> str:
    """Why ``first known`` writes members by names that leave any directory given."""
    if first == "cpio" and extracts(first, known) and "--no-absolute-filenames" not in known:
        return (
            "cpio -i writes absolute and ../ member names where they say, outside any "
            "directory: add --no-absolute-filenames"
        )
    if first == "python -m tarfile" and extracts(first, known):
        return (
            "python -m tarfile -e extracts with no filter before Python 3.14: absolute and ../ "
            "member names and links land where they say, outside any directory"
        )
    if first == "uudecode" and not any(w.startswith(("-o", "--output-file")) for w in known):
        return "uudecode names its output by the name the encoded file holds: give -o FILE"
    if first in SEVEN_ZIPS and any(w.startswith("-spf") for w in known):
        return f"{first} -spf writes members by their absolute paths, outside any directory"
    if first in COMPRESSORS and decompresses(first, known) and restores_name(known):
        return (
            f"{first} -N names its output by the name stored in the archive, which the "
            "approval check cannot see: drop -N (the output is then the operand's name)"
        )
    return ""


def _into(first: str, known: list[str]) -> str:
    """The directory 7-Zip (``-oDIR``) or unrar (a last operand ending in ``/``) fills."""
    if first in SEVEN_ZIPS:
        return next((w[2:] for w in known if w.startswith("-o") and len(w) > 2), ".")
    operands = [w for w in known if not w.startswith("-")]
    if first in _DEBS:  # dpkg-deb -x a.deb DIR
        return operands[1] if len(operands) > 1 else "."
    return operands[-1] if len(operands) > 2 and operands[-1].endswith("/") else "."


def _values(known: list[str], short: str, long: str) -> list[str]:
    """The directories given (-C DIR, --directory=DIR, -CDIR), or the command's own."""
    found = [w.split("=", 1)[1] for w in known if w.startswith(long + "=")]
    for word, following in itertools.pairwise([*known, ""]):
        if word in (short, long) and word:
            found.append(following)
        elif short and word.startswith(short) and not word.startswith("--"):
            found.append(word[len(short) :])
    return found or ["."]


def _extracted(known: list[str], found: list[str]) -> list[str | None]:
    """Each directory in ``found`` and it joined with each member named and with ``.*``: the
    archive's contents are not read here, so a directory the write tool never writes, or a
    home whose hidden entries it may hold, asks whatever they are."""
    members = [w for w in known if not w.startswith("-") and w not in found]
    members.append(".*")  # any hidden entry: a home's .bashrc
    return [p for d in found if d for p in (d, *(posixpath.join(d, m) for m in members))]
