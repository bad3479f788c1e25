"""A package's public names, each imported from its module when first asked for (PEP 562).

A package ``__init__`` keeps a table of the names it exports and the modules that define them,
and answers ``package.Name`` (and ``from package import Name``) by importing that module then,
not when the package itself is imported: a path pays only for the classes it uses (a
one-shot never builds the database ports, the hook values or the seeds' tool API).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_names(
    package: str, names: Mapping[str, str], *, then: Callable[[Any], object] | None = None
) -> Callable[[str], Any]:
    """The module ``__getattr__`` of ``package``. ``names`` maps each exported name to the
    module that defines it: absolute, or relative to ``package`` with a leading dot, and
    ``module:attribute`` where the attribute's name differs. A value found is kept in the
    package's namespace, so each name is looked up once; ``then`` sees each value first (the
    library package has its classes report it as their module). A name not in the table is
    an ``AttributeError``, as for any module."""

    def __getattr__(name: str) -> Any:
        where = names.get(name)
        if where is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, _, attribute = where.partition(":")
        value = getattr(importlib.import_module(module, package), attribute or name)
        if then is not None:
            then(value)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
