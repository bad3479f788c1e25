"""The cattrs converter for domain values: how every stored shape is read back and checked.

``make_converter`` builds a cattrs preconf JSON converter that knows the domain's unions:
``Message`` by its ``role`` (``MESSAGES_BY_ROLE``), a profile as a name or a mapping, sets
written sorted; strict by default, so a mistyped scalar in a config is an error, not a
coercion. cattrs is imported when a converter is built, never at import. ``codec`` builds the
two it reads with (events, configs); writing is ``plain.to_plain``, which needs none.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from typing import TYPE_CHECKING, Any, get_origin

from rho_domain.config import resolve_field_types
from rho_domain.errors import ConfigError
from rho_domain.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolResultMessage,
    UserMessage,
)
from rho_domain.permissions import PermissionProfile

if TYPE_CHECKING:
    from cattrs.preconf.json import JsonConverter

MESSAGES_BY_ROLE: Mapping[str, type[Message]] = {
    "system": SystemMessage,
    "user": UserMessage,
    "assistant": AssistantMessage,
    "tool": ToolResultMessage,
}


def make_converter(
    *, forbid_extra_keys: bool = False, detailed_validation: bool = True, strict: bool = True
) -> JsonConverter:
    """A converter for every domain value (frozen attrs, tuples, mappings, enums, unions).

    ``forbid_extra_keys`` makes unknown keys an error (configs); traces tolerate them so that an
    additive field does not need a version bump. ``strict`` refuses mistyped scalars instead of
    coercing them (configs are written by people); traces, written by us, skip the checks to
    replay faster.
    """
    from cattrs.preconf.json import make_converter as _make_json_converter

    # AgentConfig's and PermissionProfile's fields name classes their modules import lazily
    resolve_field_types()
    converter = _make_json_converter(
        forbid_extra_keys=forbid_extra_keys, detailed_validation=detailed_validation
    )

    role_hooks: dict[str, Any] = {}

    def _structure_message(value: Any, _: Any) -> Message:
        if not isinstance(value, Mapping):
            raise TypeError(f"expected a message mapping, got {type(value).__name__}")
        role = value.get("role")
        if not isinstance(role, str) or role not in MESSAGES_BY_ROLE:
            raise ValueError(f"unknown message role {role!r}")
        hook = role_hooks.get(role)
        if hook is None:
            hook = role_hooks[role] = converter.get_structure_hook(MESSAGES_BY_ROLE[role])
        message: Message = hook(value, None)
        return message

    def _structure_profile(value: Any, _: Any) -> str | PermissionProfile:
        if isinstance(value, str):
            return value
        if isinstance(value, Mapping):
            return converter.structure(value, PermissionProfile)
        raise TypeError("expected a profile name or a profile mapping")

    converter.register_structure_hook_func(lambda t: t == Message, _structure_message)
    converter.register_unstructure_hook_func(
        lambda t: t == Message, lambda m: converter.unstructure(m, unstructure_as=type(m))
    )
    converter.register_structure_hook_func(
        lambda t: t == (str | PermissionProfile), _structure_profile
    )
    converter.register_unstructure_hook_func(_is_set, lambda s: sorted(s))
    if not strict:
        return converter
    # Strict scalars: cattrs would turn 3 into "3" and "no" into True; a config must say what
    # it means, so a wrong type is reported instead of being coerced.
    converter.register_structure_hook(str, _strict(str))
    converter.register_structure_hook(bool, _strict(bool))
    converter.register_structure_hook(int, _strict_int)
    converter.register_structure_hook(float, _strict_float)
    _refuse_strings_as_lists(converter)
    return converter


def _refuse_strings_as_lists(converter: JsonConverter) -> None:
    """A string where a list (or a set) is expected is an error: cattrs iterates it, so
    ``extra_read_roots: /var/log`` became the roots ``/``, ``v``, ``a``... (the whole machine
    readable), ``denied_tools: bash`` denied the tools ``b``, ``a``, ``s``, ``h`` (not bash)
    and an MCP ``command: server`` ran ``s``."""
    from cattrs.cols import is_any_set, is_sequence

    lists = converter.copy()  # its hooks, before this one: what a real list is given to

    def hook_for(type_: Any) -> Any:
        structure_list = lists.get_structure_hook(type_)

        def structure(value: Any, cls: Any) -> Any:
            if isinstance(value, str):  # said as it is (codec.what_would_be_right)
                raise ConfigError(
                    f"expected a list, got the string {value!r} (one item is [{value}])"
                )
            return structure_list(value, cls)

        return structure

    converter.register_structure_hook_factory(
        lambda type_: is_sequence(type_) or is_any_set(type_), hook_for
    )


def _is_set(type_: Any) -> bool:
    return type_ in (set, frozenset) or get_origin(type_) in (set, frozenset, AbstractSet)


def _strict(cls: type[Any]) -> Any:
    def structure(value: Any, _: Any) -> Any:
        if type(value) is not cls:
            raise TypeError(f"expected {cls.__name__}, got {_got(value)}")
        return value

    return structure


def _strict_int(value: Any, _: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"expected int, got {_got(value)}")
    return value


def _strict_float(value: Any, _: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"expected float, got {_got(value)}")
    return float(value)


def _got(value: Any) -> str:
    """What a mistyped scalar was, for the refusal: a number or yes/no written in quotes
    (``max_turns: "5"``) was refused as "invalid value for type, expected int | None", which
    hid that the value was there, only quoted."""
    if isinstance(value, str) and len(value) <= 40:
        written = _yaml_float(value)
        if written is not None:
            # PyYAML reads YAML 1.1: ``1e3`` and ``1.0e3`` are text, ``1.0e+3`` a number.
            # The hint blamed quotes that were never written.
            return (
                f"the string {value!r} (YAML reads a number with an exponent as a number "
                f"only with a '.' and a sign, as in {written})"
            )
        return f"the string {value!r} (a number or true/false is written without quotes)"
    return type(value).__name__


def _yaml_float(text: str) -> str | None:
    """``text`` as YAML 1.1 reads it as a float (``1.0e+3`` for ``1e3``), when it is a
    number with an exponent that YAML 1.1 reads as a string; None otherwise."""
    mantissa, e, exponent = text.replace("E", "e").partition("e")
    digits = mantissa.lstrip("+-").replace(".", "", 1)
    if not (e and digits.isdigit() and exponent.lstrip("+-").isdigit()):
        return None
    if "." not in mantissa:
        mantissa += ".0"
    return f"{mantissa}e{exponent if exponent[0] in '+-' else '+' + exponent}"
