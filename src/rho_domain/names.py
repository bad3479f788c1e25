"""Names as a disk compares them: ``folded`` (casefolded, without the code points HFS+
ignores, an NTFS stream's type and the trailing dots and spaces Windows drops) and
``is_short_name`` (a Windows 8.3 name, another name of a file it does not show). Shared by
the secrets policy (what is never read) and the write rules (what is never written), so a
spelling one knows the other knows too."""

from __future__ import annotations

import re

from rho_domain.first_use import FirstUse

# The code points HFS+ ignores in a name (git's is_hfs_dotgit has the same list): on such a
# disk '.g\u200cit' is the directory '.git'.
_IGNORED_BY_HFS = dict.fromkeys(
    map(ord, "\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u206a\u206b\u206c"
             "\u206d\u206e\u206f\ufeff")
)  # fmt: skip


# An NTFS stream's type after a name (``.env::$DATA`` is the file ``.env`` itself, its unnamed
# data stream; ``.git::$INDEX_ALLOCATION`` and ``.git:$I30:$INDEX_ALLOCATION`` are the
# directory ``.git``), which Windows, ntfs-3g and Samba's streams module open as the name.
_NTFS_STREAM_TYPE = FirstUse(r"(:[^:]*)?:\$[a-z0-9_]+\Z")


# NTFS compares names by its upcase table, each character's simple uppercase: the dotless
# i (U+0131) is ``I`` there, so ``.g\u0131t`` opens ``.git`` (a WSL workspace under
# /mnt/c), where casefold keeps it apart. The dotted capital I (U+0130) is its own
# uppercase, another letter on NTFS (casefold makes it ``i`` and a combining dot, apart
# from ``i`` too).
_FOLDS = {**_IGNORED_BY_HFS, 0x131: "i"}


def folded(name: str) -> str:
    """``name`` as a case-insensitive disk compares it: casefolded (and the dotless i, U+0131,
    as ``i``: NTFS takes it for ``I``), without the code points HFS+ ignores, without an NTFS
    stream's type (``.env::$DATA`` is ``.env``), and without the trailing dots and spaces
    Windows drops (``.git.`` and ``.git `` are ``.git`` on NTFS, a WSL workspace under
    /mnt/c among them)."""
    if name.isascii() and ":" not in name and not name.endswith((".", " ")):
        return name.lower()  # the usual name, ~4x faster (the secrets policy folds each)
    low = name.casefold().translate(_FOLDS)
    low = _NTFS_STREAM_TYPE().sub("", low)
    return low.rstrip(". ") or low


# A Windows short (8.3) name: at most 8 characters with a ``~`` and a number, an extension of
# at most 3. NTFS gives one to every long or dotted name and resolves it on open, from WSL's
# /mnt/c too: ``GIT~1`` is ``.git``, ``DEVCON~1`` is ``.devcontainer``; past four alike, the
# number follows a hash of the long name (git's ``GI7EBA~1`` is ``.gitmodules``), so which
# long name a short one stands for cannot be told from its text.
_SHORT_NAME = re.compile(r"[^.~/]{1,6}~[0-9]{1,6}(\.[^.~/]{1,3})?")


def is_short_name(name: str) -> bool:
    """Whether ``name`` has the shape of a Windows short (8.3) name, another name of a file
    whose long name it does not show (``GIT~1`` for ``.git``), as a disk compares it
    (``ENV~1.`` and ``ENV~1::$DATA`` are ``ENV~1``: ``folded``)."""
    name = folded(name)
    stem = name.partition(".")[0]
    return len(stem) <= 8 and _SHORT_NAME.fullmatch(name) is not None


def components_of(path: str) -> tuple[str, ...]:
    """The non-empty, non-``.`` components of a POSIX path (``paths.components``' twin, which
    imports this module)."""
    return tuple(part for part in path.split("/") if part not in ("", "."))


def folded_text(path: str) -> str:
    """``path``'s text with each component as a disk compares it (``folded``: ``.SSH``,
    ``.s\u200csh`` on HFS+, ``.ssh.`` and ``.ssh::$INDEX_ALLOCATION`` on NTFS are ``.ssh``)."""
    parts = tuple(map(folded, components_of(path)))
    return "/" + "/".join(parts) if path.startswith("/") else "/".join(parts)


def short_name_refusal(path: str) -> str | None:
    """The secrets policy's rule 4: a component shaped as a Windows short (8.3) name, which
    NTFS opens as a longer name its text does not show (``ENV~1`` may be ``.env``)."""
    for part in components_of(path):
        if is_short_name(part):
            return (
                f"{path!r}: {part!r} has the shape of a Windows short (8.3) name, which NTFS "
                "opens as another, longer name that may be a secret; name it by its long name"
            )
    return None
