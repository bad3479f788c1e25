"""``value_repr`` writes the text attrs' generated ``__repr__`` writes, for every kind of field
our classes have: the shared method replaces the per-class one, so nobody reading a value
printed in a log, an error or a test sees a difference."""

from __future__ import annotations

from typing import Any

import attrs

from rho_domain.config import AgentConfig
from rho_domain.messages import ToolCall
from rho_domain.value_repr import value_repr


def _shapes() -> list[object]:
    """Instances of classes whose repr attrs generates, one per kind of field."""

    @attrs.frozen
    class Plain:
        name: str
        count: int = 0
        tags: tuple[str, ...] = ()

    @attrs.frozen
    class Hidden:
        shown: str
        secret: str = attrs.field(repr=False)
        custom: int = attrs.field(default=3, repr=lambda value: f"<{value}>")

    @attrs.define
    class Late:
        first: int
        later: list[int] = attrs.field(init=False, factory=list)
        unset: int = attrs.field(init=False)

    @attrs.frozen
    class Child(Plain):
        extra: Any = None

    late = Late(1)
    return [
        Plain("a", 2, ("x", "y")),
        Hidden("s", "hush"),
        late,
        Child("b", extra=Plain("inner")),
        Plain('quote\'s "both"', -1),
    ]


def test_the_shared_repr_is_attrs_generated_text() -> None:
    for value in _shapes():
        assert value_repr(value) == repr(value)


def test_our_classes_show_as_before() -> None:
    call = ToolCall(id="c1", name="read", arguments='{"path": "a.txt"}')
    assert repr(call) == """ToolCall(id='c1', name='read', arguments='{"path": "a.txt"}')"""
    assert vars(ToolCall)["__repr__"] is value_repr
    assert repr(AgentConfig()).startswith("AgentConfig(system_prompt='', vars={}, model=")


def test_a_value_that_holds_itself_shows_dots() -> None:
    @attrs.define
    class Node:
        __repr__ = value_repr

        label: str
        next: Any = None

    node = Node("a")
    node.next = [node, Node("b")]
    assert repr(node) == "Node(label='a', next=[..., Node(label='b', next=None)])"
    assert repr(node) == repr(node)  # the guard is left clean after each repr
