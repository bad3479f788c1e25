"""``value_repr``, ``value_eq`` and ``value_hash`` behave as attrs' generated ``__repr__``,
``__eq__`` and ``__hash__`` for every kind of field our classes have: the shared methods
replace the per-class ones, so nobody comparing, hashing or printing a value sees a
difference."""

from __future__ import annotations

import copy
import pickle
import weakref
from typing import Any

import attrs
import pytest

from rho_domain.config import AgentConfig, Budget
from rho_domain.messages import ToolCall
from rho_domain.state import State
from rho_domain.value_methods import value_eq, value_hash, value_repr


def _shapes() -> list[tuple[object, object, object]]:
    """For classes whose methods attrs generates, one per kind of field: a value, an equal
    value built apart, and a value that differs in a compared field."""

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
        ignored: str = attrs.field(default="", eq=False)
        folded: str = attrs.field(default="A", eq=str.lower)

    @attrs.define
    class Late:
        first: int
        later: list[int] = attrs.field(init=False, factory=list)
        unset: int = attrs.field(init=False, eq=False)  # never set: shown as NOTHING

    @attrs.frozen
    class Child(Plain):
        extra: Any = None

    @attrs.frozen
    class Empty:
        pass

    @attrs.frozen
    class Single:  # one field holding a tuple: the repr's %-template must not spread it
        items: tuple[str, ...]

    return [
        (Plain("a", 2, ("x", "y")), Plain("a", 2, ("x", "y")), Plain("a", 3, ("x", "y"))),
        (
            Hidden("s", "hush", ignored="1"),
            Hidden("s", "hush", ignored="2", folded="a"),
            Hidden("t", "hush"),
        ),
        (Late(1), Late(1), Late(2)),
        (Child("b", extra=Plain("i")), Child("b", extra=Plain("i")), Child("b", extra=Plain("j"))),
        (Plain('quote\'s "both"', -1), Plain('quote\'s "both"', -1), Plain("", -1)),
        (Empty(), Empty(), Empty()),  # no field compared: equal, as attrs has it
        (Single(("a", "%s")), Single(("a", "%s")), Single(("b",))),
    ]


def test_the_shared_methods_do_what_attrs_generated_ones_do() -> None:
    for value, same, other in _shapes():
        assert value_repr(value) == repr(value)
        assert value_eq(value, same) == (value == same) is True
        assert value_eq(value, other) == (value == other)
        assert value_eq(value, "text") is NotImplemented
        if type(value).__hash__ is not None:
            assert value_hash(value) == value_hash(same)


def test_our_classes_compare_hash_and_show_as_before() -> None:
    call = ToolCall(id="c1", name="read", arguments='{"path": "a.txt"}')
    assert repr(call) == """ToolCall(id='c1', name='read', arguments='{"path": "a.txt"}')"""
    assert vars(ToolCall)["__repr__"] is value_repr
    assert call == ToolCall(id="c1", name="read", arguments='{"path": "a.txt"}')
    assert call != ToolCall(id="c2", name="read", arguments='{"path": "a.txt"}')
    assert call != ("c1", "read")
    assert len({call, ToolCall(id="c1", name="read", arguments='{"path": "a.txt"}')}) == 1
    assert {Budget(max_tool_calls=2): "a"}[Budget(max_tool_calls=2)] == "a"
    assert repr(AgentConfig()).startswith("AgentConfig(system_prompt='', vars={}, model=")
    assert AgentConfig(model="m") == AgentConfig(model="m") != AgentConfig(model="n")
    with pytest.raises(TypeError, match="unhashable"):
        hash(State())  # mutable: compared by its fields, never hashed, as attrs makes it


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


def test_our_frozen_values_pickle_copy_and_take_weak_references() -> None:
    """What a leaner attrs decorator would silently drop: without attrs' ``__setstate__`` a
    frozen slotted value cannot be unpickled or deep-copied (a durable run's checkpoints
    pickle them), without its ``__weakref__`` slot no weak reference can be taken."""
    call = ToolCall(id="c1", name="read", arguments='{"path": "a.txt"}')
    config = AgentConfig(model="m", budget=Budget(max_tool_calls=2))
    for value in (call, config):
        assert pickle.loads(pickle.dumps(value)) == value  # noqa: S301 - our own bytes
        assert copy.deepcopy(value) == value
        assert weakref.ref(value)() is value
