"""Domain values as JSON-ready data, by a plain walk of the values (no cattrs).

``to_plain`` gives what ``converter.make_converter()`` unstructures a value to, without
building a converter: a process that only writes events and its config never imports cattrs.
``field_names`` and ``plain_fields`` are its steps for one attrs value, for a caller that adds
keys of its own (``codec.event_to_dict``: the format version and the kind first).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from typing import Any

import attrs

_SCALARS = frozenset({str, int, float, bool, type(None)})
# class -> its attrs fields' names, or None for a class that is not attrs (asked once each)
_FIELD_NAMES: dict[type[Any], tuple[str, ...] | None] = {}


def field_names(cls: type[Any]) -> tuple[str, ...] | None:
    """The names of ``cls``'s attrs fields in their order, or None for a class that is not
    attrs (asked once per class)."""
    if cls not in _FIELD_NAMES:
        fields = attrs.fields(cls) if attrs.has(cls) else None
        _FIELD_NAMES[cls] = None if fields is None else tuple(field.name for field in fields)
    return _FIELD_NAMES[cls]


def to_plain(value: Any) -> Any:
    """A domain value as JSON-ready data, as ``make_converter()`` unstructures it: an attrs
    value is a dict of its fields in their order, a tuple or list a list, a set a sorted list,
    a mapping a dict, an enum its value; scalars stay.

    The converter follows the declared field types, this walk the values' own classes: the
    same, since a domain field holds a value of its declared class and the converter resolves
    unions by the value's class too (tests/store/test_store_codec.py compares the two). The
    exact classes a trace holds most are tried first: a trace line is written per event."""
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is tuple or kind is list:
        return [item if type(item) in _SCALARS else to_plain(item) for item in value]
    if kind is dict:
        return {to_plain(key): to_plain(item) for key, item in value.items()}
    names = field_names(kind)
    if names is not None:
        return plain_fields(value, names, {})
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, Mapping):
        return {to_plain(key): to_plain(item) for key, item in value.items()}
    if isinstance(value, AbstractSet):
        return [to_plain(item) for item in sorted(value)]
    if isinstance(value, list | tuple):
        return [to_plain(item) for item in value]
    return value


def plain_fields(value: Any, names: tuple[str, ...], into: dict[str, Any]) -> dict[str, Any]:
    """``into`` with the named fields of the attrs ``value``, each made plain."""
    for name in names:
        item = getattr(value, name)
        into[name] = item if type(item) in _SCALARS else to_plain(item)
    return into
