"""What the bubblewrap sandbox hides: ``Masks``, the absolute real paths of secret files and
directories (``secret_scan.SecretScan`` finds them; ``sandbox.py`` mounts over them)."""

from __future__ import annotations

import attrs

from rho_domain.value_methods import value_eq, value_hash, value_repr


@attrs.frozen(kw_only=True)
class Masks:
    """Absolute real paths to hide: ``files`` (regular files and sockets) and ``dirs``."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    files: tuple[str, ...] = ()
    dirs: tuple[str, ...] = ()

    def paths(self) -> tuple[str, ...]:
        """Every path to hide, files then directories."""
        return (*self.files, *self.dirs)
