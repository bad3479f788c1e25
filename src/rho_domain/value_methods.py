"""The ``__repr__``, ``__eq__`` and ``__hash__`` every attrs class of ours shares: attrs' own
behaviour, written once instead of compiled per class.

attrs writes each class's methods as Python source and compiles the script when the class is
built; for the ~75 classes a one-shot builds that was about 126 KB of source, most of the
compiling a one-shot does (docs/benchmarks.md, the eighteenth round). A class body that says
``__repr__ = value_repr`` (and, for a value compared by its fields, ``__eq__ = value_eq`` and
``__hash__ = value_hash``) keeps the behaviour and gives those compiles up: attrs leaves a
method the class defines itself alone (``auto_detect``), and only ``__init__`` is compiled.

- ``value_repr``: ``Name(field=value, ...)`` with the class's qualified name after any
  ``<locals>.``, the fields ``repr`` does not exclude in their order, a field's own ``repr=``
  callable where it has one, and ``...`` for a value already being shown higher up (a cycle).
- ``value_eq``: ``NotImplemented`` for another class; else the fields ``eq`` does not exclude
  compared in order (through a field's ``eq=`` key), the first false result or the last.
- ``value_hash``: the hash of the class's own constant and those fields' values (keys).

Each works its class's plan out once (the first call) and keeps it: ``repr`` a ``%``-template
filled from an ``operator.attrgetter`` of the shown fields, ``hash`` the hash of such a getter's
tuple mixed with the class's constant, so the fields are read in C rather than by a loop here
(a class with a ``repr=`` callable, an unset field or an ``eq=`` key takes the field-by-field
path). ``==`` stays a loop: attrs 24.2+ compares field by field without tuples' identity
shortcut (a NaN field is unequal to itself), and a tuple compare would give that up.

``tests/domain/test_domain_value_methods.py`` holds the three to attrs' generated ones;
``tests/test_architecture.py`` fails on a class of ours that leaves attrs to compile one.
"""

from __future__ import annotations

import threading
from operator import attrgetter
from typing import TYPE_CHECKING, Any, cast

import attrs

if TYPE_CHECKING:  # aliases for the checker only: ``Callable[...] | None`` costs at import
    from collections.abc import Callable

    _Fields = tuple[tuple[str, Callable[[Any], Any] | None], ...]
    _Compared = tuple[_Fields, _Fields, int]
    _Getter = Callable[[Any], Any]

_showing = threading.local()  # ids of the values whose repr this thread is writing

# class -> its compared fields and its hashed fields as (name, key or None), and its hash
# constant: read per call, worked out once per class (a dict's get and set are atomic, so
# threads may race to fill it with the same value)
_COMPARED: dict[type, _Compared] = {}
# class -> its repr as a %-template over a getter of its shown fields (None: a field shows
# through a ``repr=`` callable or may be unset, so it is shown field by field)
_SHOWN: dict[type, tuple[str, _Getter | None]] = {}
# class -> a getter of its hashed fields (None: one has an ``eq=`` key) and its hash constant
_HASHED: dict[type, tuple[_Getter | None, int]] = {}


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
        shown = _SHOWN.get(self.__class__)
        if shown is None:
            shown = _SHOWN[self.__class__] = _shown(self.__class__)
        template, get = shown
        if get is None:
            return _repr_field_by_field(self)
        text: str = template % get(self)
        return text
    finally:
        showing.discard(id(self))


def _repr_field_by_field(self: object) -> str:
    """The repr of a class with a ``repr=`` callable or an ``init=False`` field."""
    parts = []
    for field in _fields(self.__class__):
        if field.repr is False:
            continue
        value = (
            getattr(self, field.name) if field.init else getattr(self, field.name, attrs.NOTHING)
        )
        shown = repr(value) if field.repr is True else f"{field.repr(value)}"
        parts.append(f"{field.name}={shown}")
    return f"{_name(self.__class__)}({', '.join(parts)})"


def value_eq(self: object, other: object) -> bool:
    """Attrs' ``__eq__``: ``NotImplemented`` unless ``other`` is of the same class, else the
    compared fields' ``==`` chained by ``and`` (its value, as attrs returns it)."""
    if other.__class__ is not self.__class__:
        # mypy types NotImplemented as a bool only in methods named __eq__
        return NotImplemented  # type: ignore[no-any-return]
    result: bool = True  # attrs' chained ``and``: the value a field's ``==`` gave
    for name, key in _compared(self.__class__)[0]:
        mine, theirs = getattr(self, name), getattr(other, name)
        result = key(mine) == key(theirs) if key is not None else mine == theirs
        if not result:
            return result
    return result


def value_hash(self: object) -> int:
    """Attrs' ``__hash__`` of a frozen value: its class's constant and its compared fields."""
    hashed = _HASHED.get(self.__class__)
    if hashed is None:
        hashed = _HASHED[self.__class__] = _hashed(self.__class__)
    get, constant = hashed
    if get is None:
        _, fields, _ = _compared(self.__class__)
        return hash(
            (
                constant,
                *(
                    key(getattr(self, name)) if key is not None else getattr(self, name)
                    for name, key in fields
                ),
            )
        )
    return hash(get(self)) ^ constant


def _fields(cls: type) -> tuple[attrs.Attribute[Any], ...]:
    fields: tuple[attrs.Attribute[Any], ...] = attrs.fields(cast("type[attrs.AttrsInstance]", cls))
    return fields


def _key(field: attrs.Attribute[Any]) -> Callable[[Any], Any] | None:
    key: Callable[[Any], Any] | None = getattr(field, "eq_key", None)  # not in attrs' stubs
    return key


def _compared(cls: type) -> _Compared:
    known = _COMPARED.get(cls)
    if known is None:
        every = _fields(cls)
        compared = tuple((f.name, _key(f)) for f in every if f.eq)
        hashed = tuple(
            (f.name, _key(f)) for f in every if f.hash is True or (f.hash is None and f.eq)
        )
        constant = hash(f"{cls.__module__}.{cls.__qualname__}")
        known = _COMPARED[cls] = (compared, hashed, constant)
    return known


def _name(cls: type) -> str:
    return cls.__qualname__.rsplit(">.", 1)[-1]


def _values(names: list[str]) -> _Getter:
    """A getter of ``names``' values as a tuple, built in C (``attrgetter``) for two or more."""
    if len(names) > 1:
        return attrgetter(*names)
    if names:
        single = attrgetter(names[0])
        return lambda value: (single(value),)
    return lambda value: ()


def _shown(cls: type) -> tuple[str, _Getter | None]:
    shown = [f for f in _fields(cls) if f.repr is not False]
    if any(f.repr is not True or not f.init for f in shown):
        return "", None
    fields = ", ".join(f"{f.name}=%r" for f in shown)
    return f"{_name(cls).replace('%', '%%')}({fields})", _values([f.name for f in shown])


def _hashed(cls: type) -> tuple[_Getter | None, int]:
    _, fields, constant = _compared(cls)
    if any(key is not None for _, key in fields):
        return None, constant
    return _values([name for name, _ in fields]), constant
