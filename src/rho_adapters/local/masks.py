"""What the bubblewrap sandbox hides: ``Masks``, the absolute real paths of secret files and
directories (``secret_scan.SecretScan`` finds them; ``sandbox.py`` mounts over them)."""

from __future__ import annotations

import attrs

from rho_domain.value_methods import value_eq, value_hash, value_repr


@attrs.frozen(kw_only=True)
class Masks:
    """Absolute real paths to hide: ``files`` (regular files and sockets) and ``dirs``; and
    ``shown_to_git``: secrets the sandbox shows, since git reads them itself (a git
    directory's config and index whatever its name), which the argv checks refuse."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    files: tuple[str, ...] = ()
    dirs: tuple[str, ...] = ()
    shown_to_git: tuple[str, ...] = ()
    # (path, device, inode) of each directory whose listing found a mask: the directory the
    # check inside the sandbox must stand in (``mask_check.py``)
    parents: tuple[tuple[str, int, int], ...] = ()

    def paths(self) -> tuple[str, ...]:
        """Every secret found: files, directories, then those shown to git."""
        return (*self.files, *self.dirs, *self.shown_to_git)
