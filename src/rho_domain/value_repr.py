"""One ``__repr__`` for every attrs class of ours, the text attrs would write, compiled once.

attrs writes each class's ``__repr__`` as Python source and compiles it when the class is
built: about a third of the code a one-shot compiles for our ~75 classes, for a method that
runs only when someone prints a value. A class body that says ``__repr__ = value_repr``
keeps its repr (attrs leaves a method the class defines itself alone) and gives that compile
up. The text is attrs' own: ``Name(field=value, ...)`` with the class's qualified name after
any ``<locals>.``, the fields that ``repr`` does not exclude in their order, a field's own
``repr=`` callable where it has one, and ``...`` for a value already being shown higher up
(a cycle). ``tests/test_value_repr.py`` holds it to attrs' generated text.
"""

from __future__ import annotations

import threading
from typing import cast

import attrs

_showing = threading.local()  # ids of the values whose repr this thread is writing


def value_repr(self: object) -> str:
    """The attrs repr of ``self``, an instance of an attrs class."""
    try:
        showing: set[int] = _showing.ids
    except AttributeError:
        showing = _showing.ids = set()
    if id(self) in showing:
        return "..."
    showing.add(id(self))
    try:
        parts = []
        for field in attrs.fields(cast("type[attrs.AttrsInstance]", self.__class__)):
            if field.repr is False:
                continue
            value = (
                getattr(self, field.name)
                if field.init
                else getattr(self, field.name, attrs.NOTHING)
            )
            shown = repr(value) if field.repr is True else f"{field.repr(value)}"
            parts.append(f"{field.name}={shown}")
        name = self.__class__.__qualname__.rsplit(">.", 1)[-1]
        return f"{name}({', '.join(parts)})"
    finally:
        showing.discard(id(self))
