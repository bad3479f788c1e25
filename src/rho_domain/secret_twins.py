"""The names a secret's copy has: the suffixes a compressor, an archiver, a backup or an
editor adds to a file's name (data and two pure functions, no imports).

``secrets.twin_stems`` judges a path as the copy of every path ``name_stems`` leads to
(``id_rsa.gz`` is ``id_rsa``, ``.ssh.bak/config`` is ``.ssh/config``), and
``secret_guard.guard_script`` strips the same suffixes from the last name in ``sh``.
"""

from __future__ import annotations

from collections.abc import Iterator

# A secret's copy under the name a compressor, an archiver, a backup or an editor gives it
# holds the same secret (``id_rsa.gz``, ``.netrc.bak``, ``server.pem~``, ``credentials.zip``).
# Lowercase, matched on the folded name; "~" and "-z" are glued to the name, the rest dotted.
TWIN_SUFFIXES: tuple[str, ...] = (
    ".gz", ".z", "-z", ".bz2", ".xz", ".zst", ".lz", ".lz4", ".lzma", ".br", ".tgz", ".tar",
    ".zip", ".7z", ".bak", ".backup", ".old", ".orig", ".save", ".swp", ".swo", ".swn", "~",
)  # fmt: skip
# vim's swap files: a dot before the name unless it has one (.id_rsa.swp, .netrc.swp)
VIM_SWAPS = (".swp", ".swo", ".swn")


def name_stems(name: str) -> Iterator[str]:
    """``name`` (folded: ``names.folded``), then without one more of ``TWIN_SUFFIXES`` each
    time, while any is left: ``id_rsa.bak.gz``, ``id_rsa.bak``, ``id_rsa``; a vim swap's
    name without its suffix, then without its leading dot: ``.id_rsa.swp``, ``.id_rsa``,
    ``id_rsa``."""
    while name:
        yield name
        suffix = next((s for s in TWIN_SUFFIXES if name.endswith(s)), "")
        if not suffix:
            return
        name = name.removesuffix(suffix)
        if suffix in VIM_SWAPS and name.startswith(".") and len(name) > 1:
            yield name  # .netrc's swap
            name = name[1:]  # id_rsa's


def may_be_copy(text: str) -> bool:
    """Whether a twin suffix may be in ``text`` (False for most paths, which then have no
    stem to work out)."""
    return not text.isascii() or any(s in text.lower() for s in TWIN_SUFFIXES)
