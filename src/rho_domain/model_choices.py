"""The checks of an ``AgentConfig``'s choices that reach every model request, and of its
switches, made when the config is built.

Before them the library's ``AgentConfig(...)`` took any value (a config file's types were
checked by its converter, its values by nothing): ``temperature="hot"``, ``nan`` or ``-3``
and ``reasoning_effort="extreme"`` were sent with the first model call (a 400 after the
session had started; on Anthropic an unknown effort silently meant no thinking at all), and
``auto_approve="false"``, a string, was true, so every call ran without asking. A
``service_tier`` of ``"Flex"`` or ``1`` went out in every request too (and ``"Flex"`` waited
with the standard tier's timeout, not flex's).
"""

from __future__ import annotations

import math
from typing import Any

import attrs

from rho_domain.errors import ConfigError
from rho_domain.first_use import FirstUse

REASONING_EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh", "max")
"""The efforts the providers' APIs name (OpenAI's ``reasoning_effort`` and ``reasoning``
object, Anthropic's thinking budgets: ``low`` to ``max``); one that a model does not take is
answered by its endpoint."""

TEMPERATURE_RANGE = (0.0, 2.0)
"""OpenAI's range (Anthropic's is 0 to 1, and its endpoint says so)."""


SERVICE_TIERS = ("auto", "default", "flex", "priority", "scale", "standard_only")
"""Tiers OpenAI and Anthropic name; an OpenAI-compatible provider may name its own (Groq's
``on_demand``, ``performance``), so any lower-case word is taken and its endpoint decides."""

_TIER = FirstUse(r"[a-z][a-z0-9_]{0,31}")


def service_tier(_: object, attribute: attrs.Attribute[Any], value: object) -> None:
    """None or a lower-case word (``SERVICE_TIERS``, or a compatible provider's own): the
    tier chooses each call's price and, for ``flex``, how long a call may wait."""
    if value is None or (isinstance(value, str) and _TIER().fullmatch(value)):
        return
    raise ConfigError(
        f"{attribute.name} must be a tier's name in lower case, such as "
        f"{', '.join(SERVICE_TIERS)} (or not set); got {value!r}"
    )


def reasoning_effort(_: object, attribute: attrs.Attribute[Any], value: object) -> None:
    """None or one of ``REASONING_EFFORTS``."""
    if value is not None and value not in REASONING_EFFORTS:
        raise ConfigError(
            f"{attribute.name} must be one of {', '.join(REASONING_EFFORTS)} (or not set); "
            f"got {value!r}"
        )


def temperature(_: object, attribute: attrs.Attribute[Any], value: object) -> None:
    """None or a finite number in ``TEMPERATURE_RANGE``."""
    if value is None:
        return
    low, high = TEMPERATURE_RANGE
    number = value if isinstance(value, int | float) and not isinstance(value, bool) else None
    if number is None or not math.isfinite(number) or not low <= number <= high:
        raise ConfigError(
            f"{attribute.name} must be a number from {low:g} to {high:g} (or not set); "
            f"got {value!r}"
        )


def fraction(_: object, attribute: attrs.Attribute[Any], value: object) -> None:
    """A number above 0 and at most 1 (a share of the context window)."""
    number = value if isinstance(value, int | float) and not isinstance(value, bool) else None
    if number is None or not 0 < number <= 1:  # NaN fails both comparisons
        raise ConfigError(
            f"{attribute.name} must be a share of the context window, above 0 and at most 1; "
            f"got {value!r}"
        )


def switch(_: object, attribute: attrs.Attribute[Any], value: object) -> None:
    """``True`` or ``False``: a string such as ``"false"`` is true to Python."""
    if not isinstance(value, bool):
        raise ConfigError(f"{attribute.name} must be true or false; got {value!r}")


def optional_switch(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    """None, ``True`` or ``False``."""
    if value is not None:
        switch(instance, attribute, value)
