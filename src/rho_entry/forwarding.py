"""Forward: a read-only attribute of the domain object an entry class wraps.

The library's ``Agent``, ``Session`` and ``State`` hold a domain object (composition, not
subclassing: the domain classes stay the domain's, and nothing of the entry layer can reach into
their private members). Each attribute they show unchanged is one line::

    class Session:
        model: Forward[ChatModel] = Forward("domain")  # session.model is session.domain.model

The type is the annotation's, never a subscript (``Forward[ChatModel](...)``): the annotation is
not evaluated at import, where a subscript built a generic alias for each attribute and, for a
quoted type, compiled a ``ForwardRef`` (~50 of them in a one-shot's imports; oneshot26).

The value is read at each access (never copied), so it is always the domain object's own.
Assigning it raises ``AttributeError``: the wrappers have ``__slots__`` and no ``__dict__``.
"""

from __future__ import annotations

from typing import Generic, TypeVar, overload

T = TypeVar("T")


class Forward(Generic[T]):
    """The attribute of the same name of the object in the owner's attribute ``via``."""

    def __init__(self, via: str, *, doc: str | None = None) -> None:
        self.via = via
        self.name = ""
        self.__doc__ = doc

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name
        if self.__doc__ is None:
            self.__doc__ = f"``{via_text(self.via)}.{name}``"

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> Forward[T]: ...

    @overload
    def __get__(self, obj: object, owner: type | None = None) -> T: ...

    def __get__(self, obj: object, owner: type | None = None) -> Forward[T] | T:
        if obj is None:
            return self
        value: T = getattr(getattr(obj, self.via), self.name)  # the declared T is the contract
        return value


def via_text(via: str) -> str:
    """How the docstring names the wrapped object."""
    return via.lstrip("_")
