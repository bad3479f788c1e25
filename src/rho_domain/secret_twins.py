"""The names a secret's copy has: the suffixes a compressor, an archiver, a backup, a log
rotation or an editor adds to a file's name, and the marks a file manager's copy carries
(data and pure functions, stdlib only).

``secrets.twin_stems`` judges a path as the copy of every path ``name_stems`` leads to
(``id_rsa.gz`` is ``id_rsa``, ``.ssh.bak/config`` is ``.ssh/config``), and
``secret_guard.guard_script`` strips the same suffixes from the last name in ``sh``.
"""

from __future__ import annotations

from collections.abc import Iterator

# A secret's copy under the name a compressor, an archiver, a backup or an editor gives it
# holds the same secret (``id_rsa.gz``, ``.netrc.bak``, ``server.pem~``, ``credentials.zip``).
# Lowercase, matched on the folded name; "~" and "-z" are glued to the name, the rest dotted.
# Not ".dist" nor ".sample": they name templates (``.env.dist``), which stay readable.
TWIN_SUFFIXES: tuple[str, ...] = (
    ".gz", ".z", "-z", ".bz2", ".xz", ".zst", ".lz", ".lz4", ".lzma", ".br", ".tgz", ".tar",
    ".zip", ".7z", ".bak", ".backup", ".old", ".orig", ".save", ".swp", ".swo", ".swn", "~",
    # varshell18b: the other spellings of the same copies
    ".gzip", ".bz", ".zstd", ".lzo", ".tbz", ".tbz2", ".txz", ".tzst", ".tlz", ".rar",
    ".cpio", ".bk", ".bkp", ".sav", ".copy", ".tmp", ".prev", ".rpmsave", ".rpmnew",
    ".dpkg-old", ".dpkg-bak",
    # glued by a dash or an underscore (.kube-old/config, .netrc_bak, .env_old)
    "-old", "_old", "-bak", "_bak", "-backup", "_backup", "-orig", "_orig", "-copy", "_copy",
    "-save", "_save", "-prev", "_prev",
    # redshell19: a package manager's copy of a configuration file (dpkg, ucf, pacman, rpm)
    # and a replacement's (``.new``), a download's part, an encoder's copy, a patch's
    # rejected hunks, Kate's swap file and an RCS file (``,v``: every revision, whole)
    ".new", ".dpkg-new", ".dpkg-dist", ".ucf-old", ".ucf-dist", ".ucf-new", ".pacnew",
    ".pacsave", ".pacorig", ".rpmorig", ".part", ".partial", ".crdownload", ".b64",
    ".base64", ".rej", ".kate-swp", ",v",
)  # fmt: skip
# The words glued above, for the sh guard (secret_guard)
GLUED = ("old", "bak", "backup", "orig", "copy", "save", "prev")
# vim's and Kate's swap files: a dot before the name unless it has one (.id_rsa.swp,
# .netrc.swp, .id_rsa.kate-swp)
SWAPS = (".swp", ".swo", ".swn", ".kate-swp")
# A file manager's or a browser's copy, at the end or before the last extension: GNOME's
# "id_rsa (copy)", "credentials (another copy).json", "(3rd copy)"; macOS's "id_rsa copy 2";
# Windows' "id_rsa - Copy (2)"; a download's "id_rsa (1)".
_COPY_MARK = (
    r" (?:\((?:copy|another copy|\d+(?:st|nd|rd|th) copy|\d+)\)|copy(?: \d+)?"
    r"|- copy(?: \(\d+\))?)(?=(?:\.[^.]*)?$)"
)


COPY_OF = "copy of "
# older Windows' second copy and on: "Copy (2) of id_rsa"
_NTH_COPY_OF = r"copy \(\d+\) of (?=.)"


def _unmarked(name: str) -> str:
    """``name`` without a copy mark (``_COPY_MARK``)."""
    import re  # at the first name with a space, not at import (re caches the expression)

    return re.sub(_COPY_MARK, "", name, count=1)


def _rotated(name: str) -> str:
    """``name`` without a rotation's number (``id_rsa.1``, ``.netrc-20240101``), or ""."""
    cut = max(name.rfind("."), name.rfind("-"))
    number = name[cut + 1 :]
    return name[:cut] if cut > 0 and number.isascii() and number.isdigit() else ""


def _numbered(name: str) -> str:
    """``name`` without a numbered backup's mark, or "": GNU ``cp``/``mv``/``install
    --backup=numbered``'s and emacs' ``.~1~`` (``id_rsa.~1~``), and a backup suffix given a
    number (``id_rsa.bak2``, ``.netrc_old1``; its suffix is taken off next)."""
    if name.endswith("~"):
        cut = name.rfind(".~")
        return name[:cut] if cut > 0 and name[cut + 2 : cut + 3].isdigit() else ""
    bare = name.rstrip("0123456789")
    return bare if bare != name and bare.endswith(TWIN_SUFFIXES) else ""


def _shorter(name: str) -> tuple[str, str]:
    """``name`` without one twin suffix or mark, and the suffix taken ("" when none was)."""
    if (name[-1:].isdigit() or name.endswith("~")) and (numbered := _numbered(name)):
        return numbered, "."
    if name.endswith(TWIN_SUFFIXES):  # one C call for the common answer (no)
        suffix = max((s for s in TWIN_SUFFIXES if name.endswith(s)), key=len)  # .ucf-old
        return name.removesuffix(suffix), suffix
    if len(name) > 2 and name[0] == name[-1] == "#":
        return name[1:-1], "#"  # emacs' autosave (#id_rsa#)
    if rotated := _rotated(name):
        return rotated, "."
    if " " in name and (unmarked := _unmarked(name)) != name:
        return unmarked, " "
    if name.startswith(COPY_OF) and len(name) > len(COPY_OF):
        return name.removeprefix(COPY_OF), COPY_OF  # older Windows' "Copy of id_rsa"
    if name.startswith("copy (") and (nth := _nth_copy_of(name)):
        return nth, COPY_OF
    return "", ""


def _nth_copy_of(name: str) -> str:
    """``name`` without older Windows' "Copy (2) of ", or ""."""
    import re  # at the first such name, not at import (re caches the expression)

    found = re.match(_NTH_COPY_OF, name)
    return name[found.end() :] if found else ""


def name_stems(name: str) -> Iterator[str]:
    """``name`` (folded: ``names.folded``), then without one more twin suffix or mark each
    time, while any is left: ``id_rsa.bak.gz``, ``id_rsa.bak``, ``id_rsa``; a vim swap's
    name without its suffix, then without its leading dot: ``.id_rsa.swp``, ``.id_rsa``,
    ``id_rsa``; ``#.netrc#`` (emacs), ``.netrc.1`` (rotated), ``.netrc.~1~`` and
    ``.netrc.bak2`` (numbered), ``.netrc (copy)``, ``Copy (2) of .netrc``: ``.netrc``."""
    while name:
        yield name
        name, suffix = _shorter(name)
        if suffix in SWAPS and name.startswith(".") and len(name) > 1:
            yield name  # .netrc's swap
            name = name[1:]  # id_rsa's


def may_be_copy(text: str) -> bool:
    """Whether a twin suffix or mark may be in ``text`` (False for most paths, which then
    have no stem to work out)."""
    low = text.lower()
    return (
        not text.isascii()
        or any(s in low for s in TWIN_SUFFIXES)
        or "#" in text
        or " " in text
        or any(part[-1:].isdigit() for part in text.split("/") if "." in part or "-" in part)
    )
