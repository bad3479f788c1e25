"""The checks ``AgentConfig`` and ``Budget`` run on their fields as they are built: counts,
limits, seconds and amounts, the backend, the base URL, the retries' bound and the output
schema. Each raises ``ConfigError`` naming the field and what it must be, so a bad value in
a file, a variable or a flag fails before a session starts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from rho_domain.endpoint_url import check_endpoint_url
from rho_domain.errors import ConfigError


def positive(_: object, attribute: attrs.Attribute[Any], value: object) -> None:
    """An integer above 0."""
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ConfigError(f"{attribute.name} must be a positive integer, not {value!r}")


def not_negative(_: object, attribute: attrs.Attribute[Any], value: object) -> None:
    """None, or a whole number of 0 or more (0: no limit)."""
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigError(
            f"{attribute.name} must be a whole number >= 0 (0: no limit), not {value!r}"
        )


def seconds(_: object, attribute: attrs.Attribute[Any], value: object) -> None:
    """None, or a finite number of seconds above 0."""
    check_seconds(attribute, value, zero=False)


def seconds_or_zero(_: object, attribute: attrs.Attribute[Any], value: object) -> None:
    """None, or a finite number of seconds, 0 or more."""
    check_seconds(attribute, value, zero=True)


def check_seconds(attribute: attrs.Attribute[Any], value: object, *, zero: bool) -> None:
    """Raise ``ConfigError`` naming ``attribute`` unless ``value`` is None or a finite number
    of seconds (above 0, or 0 or more with ``zero``)."""
    if value is None:
        return
    number = value if isinstance(value, int | float) and not isinstance(value, bool) else None
    finite = number is not None and number == number and number != float("inf")
    if number is None or not finite or number < 0 or (number == 0 and not zero):
        least = "0 or more" if zero else "more than 0"
        raise ConfigError(f"{attribute.name} must be a number of seconds, {least}; got {value!r}")


def limit(_: object, attribute: attrs.Attribute[Any], value: object) -> None:
    """None, or a whole number of 1 or more."""
    if value is None:
        return
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ConfigError(f"{attribute.name} must be a whole number, 1 or more; got {value!r}")


def amount(_: object, attribute: attrs.Attribute[Any], value: object) -> None:
    """None, or a finite amount in USD, 0 or more."""
    if value is None:
        return
    number = value if isinstance(value, int | float) and not isinstance(value, bool) else None
    if number is None or number != number or number < 0 or number == float("inf"):
        raise ConfigError(f"{attribute.name} must be an amount in USD, 0 or more; got {value!r}")


BACKENDS = ("local", "daytona")
"""Where tools may run (``AgentConfig.backend``)."""


def backend(_: object, attribute: attrs.Attribute[Any], value: object) -> None:
    """One of ``BACKENDS``."""
    if value not in BACKENDS:
        raise ConfigError(f"{attribute.name} must be {' or '.join(BACKENDS)}, not {value!r}")


def endpoint_url(_: object, attribute: attrs.Attribute[Any], value: object) -> None:
    """A base URL the HTTP client can call (``check_endpoint_url``). Checked when the config
    is built, so a typo fails before a session starts, not after retries."""
    if value is None or value == "":  # "" is "not given", as everywhere else
        return
    check_endpoint_url(str(value), attribute.name)


def count(_: object, attribute: attrs.Attribute[Any], value: object) -> None:
    """None, or a whole number of 0 or more."""
    if value is None:
        return
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ConfigError(f"{attribute.name} must be a whole number, 0 or more; got {value!r}")


MAX_MODEL_RETRIES = 100
"""At most this many extra attempts a model call: each may wait ``model_timeout`` and a
back-off, so a million (a typo, a misread unit) held a run on a down endpoint for days."""


def retries(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    """A ``count`` of at most ``MAX_MODEL_RETRIES``."""
    count(instance, attribute, value)
    if isinstance(value, int) and value > MAX_MODEL_RETRIES:
        raise ConfigError(
            f"{attribute.name} must be at most {MAX_MODEL_RETRIES} (each retry may wait the "
            f"model timeout and a back-off; a run ends on its own); got {value!r}"
        )


def output_schema(_: object, attribute: attrs.Attribute[Any], value: object) -> None:
    """None, or a JSON Schema object (checked by ``json_schema.check_schema``)."""
    if value is None:
        return
    if not isinstance(value, Mapping):  # an answer is shaped by an object schema, not true
        raise ConfigError(f"{attribute.name} must be a JSON Schema object; got {value!r}")
    # the validator loads with the first schema given: a config without one never builds it
    from rho_domain.json_schema import check_schema

    check_schema(value, attribute.name)
