"""What a compressor or decompressor writes, for the destination rule (``shell.destructive``).

A compressor replaces each file it is given by the file with its suffix (``gzip x`` writes
``x.gz`` and removes ``x``; zstd, lz4 and brotli keep ``x``); a decompressor writes the name
it derives from its operand (``gunzip .envrc.gz`` writes ``.envrc``). Either may be told
where to write instead: ``zstd -o FILE``, ``brotli -o FILE``/``--output=``, ``lzop -o FILE``
or ``-p DIR``, ``lzip -o FILE``, ``zstd --output-dir-flat DIR``, lz4's second operand
(``lz4 a /etc/profile.d/x.sh``), a suffix of one's own (``gzip -S .sh x`` writes ``x.sh``).
So every operand is a destination, and so is every name it derives and every output it is
given; an operand no word shows (what ``xargs``, ``parallel`` or ``find -exec`` fill in:
``find . -name '*.gz' | xargs gunzip``) is a destination the check cannot see (None). With
``-c``/``--stdout``, ``-t``, ``-l`` they write nothing of their own; ``-N`` (the name the
archive stores) is ``shell.destructive_archives``'s.

Contract: ``COMPRESSORS``; ``compressor_outputs(first, words) -> list[str | None]``;
``decompresses(first, known)``; ``restores_name(known)``.
"""

from __future__ import annotations

import itertools
import posixpath
from collections.abc import Sequence

from rho_domain.shell.destructive_words import Arg

# each program: the cluster letter that makes it decompress ("" when it always does, None
# when it never compresses: the un* names)
_DECOMPRESS_LETTER: dict[str, str] = {
    **dict.fromkeys(["gunzip", "unxz", "bunzip2", "unzstd", "unlzma", "uncompress"], ""),
    **dict.fromkeys(["unpigz", "lz4cat", "unlz4", "unbrotli", "lunzip"], ""),
    **dict.fromkeys(["gzip", "xz", "bzip2", "zstd", "lz4", "lzma", "pigz", "pbzip2"], "d"),
    **dict.fromkeys(["pixz", "pzstd", "brotli", "lzop", "lzip", "plzip", "compress"], "d"),
}
COMPRESSORS = frozenset(_DECOMPRESS_LETTER)
_SUFFIX = {
    "gzip": ".gz", "pigz": ".gz", "xz": ".xz", "pixz": ".xz", "bzip2": ".bz2",
    "pbzip2": ".bz2", "zstd": ".zst", "pzstd": ".zst", "lz4": ".lz4", "lzma": ".lzma",
    "brotli": ".br", "lzop": ".lzo", "lzip": ".lz", "plzip": ".lz", "compress": ".Z",
}  # fmt: skip
_SUFFIXES = (".gz", ".z", ".xz", ".bz2", ".zst", ".lz4", ".lzma", ".Z", ".tgz", ".txz", ".br")
_SUFFIXES_MORE = (".lzo", ".lz")
# options whose value is the file or directory written: (given apart or glued, --long=)
_OUTPUTS = ("-o", "--output", "--output-dir-flat", "--output-dir-mirror", "-p", "--path")
# options whose value is no file (given apart): kept out of the operands
_VALUED = frozenset(["-S", "--suffix", "-T", "-b", "-B", "-q", "-w", "-M", "-D", "--patch-from"])
_TO_STDOUT = frozenset(["--stdout", "--to-stdout", "--test", "--list"])


def compressor_outputs(first: str, words: Sequence[Arg]) -> list[str | None]:
    """The paths ``first words`` writes or replaces (None: one no word shows), [] for one
    that writes only to standard output or only tests or lists."""
    known = [w for w in words if w is not None]
    # flag clusters only: -o/etc/x and -S.sh glue a value, not the flags c, t, l
    clusters = [w[1:] for w in known if w[:1] == "-" and w[1:].isalnum() and w[1:2] not in "opS"]
    quiet = "ct" if first == "lz4" else "ctl"  # lz4 -l: the legacy format, not a listing
    if any(set(c) & set(quiet) for c in clusters) or _TO_STDOUT & set(known):
        return []
    outputs, operands = _read(words)
    unpacking = decompresses(first, known)
    suffix = next(iter(_values(known, "-S", "--suffix")), _SUFFIX.get(first, ""))
    found: list[str | None] = [*outputs]
    if first in ("lz4", "unlz4", "lz4cat") and len(operands) == 2 and "-m" not in known:
        return [*found, operands[1]]  # lz4 IN OUT
    for operand in operands:
        if operand is None:
            found.append(None)  # what xargs, parallel or find -exec fill in
        elif unpacking:
            found.extend(
                operand[: -len(s)]
                for s in (suffix, *_SUFFIXES, *_SUFFIXES_MORE)
                if _cut(operand, s)
            )
        else:
            found.extend((operand, operand + suffix))  # replaced by its compressed twin
    return found[:64]


def _cut(operand: str, suffix: str) -> bool:
    return bool(suffix) and operand.endswith(suffix) and operand != suffix


def _read(words: Sequence[Arg]) -> tuple[list[str | None], list[Arg]]:
    """The outputs given by option (a directory joined with nothing: it is judged itself,
    and an unknown value is None) and the operands."""
    outputs: list[str | None] = []
    operands: list[Arg] = []
    skip = False
    for word, following in itertools.pairwise([*words, ""]):
        if skip:
            skip = False
            continue
        if word is None:
            operands.append(None)
        elif word in _OUTPUTS:
            outputs.append(following)
            skip = True
        elif word.startswith(tuple(f"{o}=" for o in _OUTPUTS if o.startswith("--"))):
            outputs.append(word.split("=", 1)[1])
        elif word.startswith(("-o", "-p")) and not word.startswith("--") and len(word) > 2:
            outputs.append(word[2:])
        elif word in _VALUED:
            skip = True
        elif word == "-" or not word.startswith("-"):
            operands.append(word)
    return [posixpath.normpath(o) if o else o for o in outputs if o != ""], operands


def decompresses(first: str, known: Sequence[str]) -> bool:
    """True when ``first known`` decompresses (gunzip, gzip -d, --decompress, --uncompress)."""
    letter = _DECOMPRESS_LETTER[first]
    clusters = [w[1:] for w in known if w.startswith("-") and not w.startswith("--")]
    longs = {"--decompress", "--uncompress"}
    return not letter or any(letter in c for c in clusters) or bool(longs & set(known))


def restores_name(known: Sequence[str]) -> bool:
    """True when ``known`` holds gzip's ``-N``/``--name`` (the stored name is the output)."""
    clusters = [w[1:] for w in known if w.startswith("-") and not w.startswith("--")]
    return "--name" in known or any("N" in c for c in clusters)


def _values(known: Sequence[str], short: str, long: str) -> list[str]:
    found = [w.split("=", 1)[1] for w in known if w.startswith(long + "=")]
    found += [v for o, v in itertools.pairwise(known) if o in (short, long)]
    found += [w[len(short) :] for w in known if w.startswith(short) and w != short]
    return [f for f in found if f]
