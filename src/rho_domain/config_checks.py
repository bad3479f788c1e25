"""The checks of ``AgentConfig``'s and ``Budget``'s values (attrs validators): each refuses a
value no run could use with a ``ConfigError`` naming the field, what it must be and what it
got, when the config is built (a YAML file, a flag, ``AgentConfig(...)`` in Python), not
after a session has started.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable
from typing import Any

import attrs

from rho_domain.errors import ConfigError
from rho_domain.first_use import FirstUse


def positive(_: object, attribute: attrs.Attribute[Any], value: object) -> None:
    """A whole number, 1 or more (a size or a window: 0 would cut or hold nothing)."""
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ConfigError(f"{attribute.name} must be a positive integer, not {value!r}")


def not_negative(_: object, attribute: attrs.Attribute[Any], value: object) -> None:
    """None, or a whole number, 0 or more (0: no limit)."""
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigError(
            f"{attribute.name} must be a whole number >= 0 (0: no limit), not {value!r}"
        )


def seconds(_: object, attribute: attrs.Attribute[Any], value: object) -> None:
    """None, or a finite number of seconds, more than 0."""
    check_seconds(attribute, value, zero=False)


def seconds_or_zero(_: object, attribute: attrs.Attribute[Any], value: object) -> None:
    """None, or a finite number of seconds, 0 or more."""
    check_seconds(attribute, value, zero=True)


def check_seconds(attribute: attrs.Attribute[Any], value: object, *, zero: bool) -> None:
    """``seconds`` (``zero``: ``seconds_or_zero``), for a validator that words its own error."""
    if value is None:
        return
    number = _finite(value)
    if number is None or number < 0 or (number == 0 and not zero):
        least = "0 or more" if zero else "more than 0"
        raise ConfigError(f"{attribute.name} must be a number of seconds, {least}; got {value!r}")


def limit(_: object, attribute: attrs.Attribute[Any], value: object) -> None:
    """None, or a whole number, 1 or more (a limit of 0 would end every run at once)."""
    if value is None:
        return
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ConfigError(f"{attribute.name} must be a whole number, 1 or more; got {value!r}")


def amount(_: object, attribute: attrs.Attribute[Any], value: object) -> None:
    """None, or a finite amount in USD, 0 or more."""
    if value is None:
        return
    number = _finite(value)
    if number is None or number < 0:
        raise ConfigError(f"{attribute.name} must be an amount in USD, 0 or more; got {value!r}")


def count(_: object, attribute: attrs.Attribute[Any], value: object) -> None:
    """None, or a whole number, 0 or more."""
    if value is None:
        return
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ConfigError(f"{attribute.name} must be a whole number, 0 or more; got {value!r}")


MAX_MODEL_RETRIES = 100
"""At most this many extra attempts a model call: each may wait ``model_timeout`` and a
back-off, so a million (a typo, a misread unit) held a run on a down endpoint for days."""


def retries(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    """``count``, at most ``MAX_MODEL_RETRIES``."""
    count(instance, attribute, value)
    if isinstance(value, int) and value > MAX_MODEL_RETRIES:
        raise ConfigError(
            f"{attribute.name} must be at most {MAX_MODEL_RETRIES} (each retry may wait the "
            f"model timeout and a back-off; a run ends on its own); got {value!r}"
        )


def text(_: object, attribute: attrs.Attribute[Any], value: object) -> None:
    """A field holding a text. Anything else failed later naming no setting: a bytes
    ``system_prompt`` ended ``Agent(...)`` on "endswith first arg must be bytes"."""
    if not isinstance(value, str):
        raise ConfigError(f"{attribute.name} must be a text (str), not {_shown(value)}")


def optional_text(_: object, attribute: attrs.Attribute[Any], value: object) -> None:
    """A field holding a text, or None."""
    if value is not None and not isinstance(value, str):
        raise ConfigError(f"{attribute.name} must be a text (str) or None, not {_shown(value)}")


def variable_name(_: object, attribute: attrs.Attribute[Any], value: object) -> None:
    """A field naming an environment variable, or None: letters, digits and ``_``, not
    starting with a digit. ``api_key_env: A B`` was taken, and the CLI then said to
    ``export A B=<your key>``, which no shell does."""
    optional_text(_, attribute, value)
    if isinstance(value, str) and not _VARIABLE().fullmatch(value):
        raise ConfigError(
            f"{attribute.name} {value[:60]!r} is not an environment variable's name (letters, "
            "digits and _, not starting with a digit): name the variable that holds the key, "
            "as OPENAI_API_KEY"
        )


_VARIABLE = FirstUse(r"[A-Za-z_][A-Za-z0-9_]*")


def path_text(value: str | os.PathLike[str] | None) -> str | None:
    """A path field's value as the text it is kept as: a ``pathlib.Path`` (any
    ``os.PathLike``) converted once, where the config is built. Kept as it was, a Path made
    every run of a stored session fail ("config.yaml cannot hold a PosixPath value") and the
    config unequal to the same one given as a text. What is no path is left to
    ``optional_path`` to refuse."""
    return os.fspath(value) if isinstance(value, os.PathLike) else value


def paths_text(value: Iterable[str | os.PathLike[str]]) -> tuple[str, ...]:
    """Several paths (an argv, roots) as the texts they are kept as: each ``os.PathLike``
    converted once, in a tuple. A text or what is no collection is left as it is, for the
    field's validator to refuse by name (``several_strings``)."""
    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        return value  # type: ignore[return-value]  # refused by the validator, named
    return tuple(os.fspath(item) if isinstance(item, os.PathLike) else item for item in value)


def optional_path(_: object, attribute: attrs.Attribute[Any], value: object) -> None:
    """A field holding a path's text (after ``path_text``), or None: ``working_dir=5``
    ended ``Agent(...)`` on "expected str, bytes or os.PathLike object, not int". A text
    with a NUL is no path either (the OS refuses it): one in a stored config.yaml raised
    ``ValueError`` from every ``resolve`` of it, where a server placed the session."""
    if value is not None and not isinstance(value, str):
        raise ConfigError(
            f"{attribute.name} must be a directory's path (str or pathlib.Path) or None, "
            f"not {_shown(value)}"
        )
    if value is not None and "\0" in value:
        raise ConfigError(
            f"{attribute.name} {value!r:.80} has a NUL character, which no path has: "
            "give the directory's path without it"
        )


def _shown(value: object) -> str:
    """``type value`` of a wrong value, its text cut."""
    return f"{type(value).__name__} {value!r:.60}"


def check_model_name(value: str, key: str) -> None:
    r"""Raise ``ConfigError`` naming ``key`` when ``value`` has a space or a line break around
    it, or a control or invisible character in it (a zero-width space, a no-break space, a
    bidirectional mark: any that is not printable), which no model's name has. A space
    inside is a name's own (``Qwen 2.5 Coder``, a path a server serves a model by): the
    error said "around or in it" and let ``gpt 4o`` and ``gpt-4o\u200b`` through.
    ``RHO_AGENT_MODEL`` read from a file (``gpt-4o\n``) was sent as it was, and the server
    answered that no such model exists, the line break unseen. Checked where a setting is
    given (the settings), not by ``AgentConfig``: a stored session's config must still load,
    whatever it holds. An empty one (``-m "$MODEL"`` with MODEL unset) is refused too: it
    was sent as it was."""
    if not value:
        raise ConfigError(
            f"{key} is empty (an unset shell variable?): give a model's name, or leave the "
            "setting out for the default"
        )
    hidden = next((c for c in value if not c.isprintable()), None)
    if value != value.strip() or hidden is not None:
        what = f" (U+{ord(hidden):04X} at character {value.index(hidden) + 1})" if hidden else ""
        raise ConfigError(
            f"{key} {value!r} has a space or a line break around it, or a control or "
            f"invisible character in it{what}, which no model's name has: set it again "
            "without it"
        )


def _finite(value: object) -> float | None:
    """``value`` when it is a finite number (not a bool), else None."""
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return value
    return None


def several_strings(_: object, attribute: Any, value: object) -> None:
    """The attrs validator of a field holding several strings (a tuple or a set of them):
    refuses a bare string, which Python would iterate (``extra_read_roots="/var/log"``
    read as the roots ``/``, ``v``, ``a``, ...). One ``isinstance``: values built per call
    carry it too."""
    if isinstance(value, str):
        raise ConfigError(string_for_strings(attribute.name, value))


def string_for_strings(where: str, value: str) -> str:
    """The message of a string given where a list of strings is wanted, naming ``where``."""
    return f"{where}: expected a list of strings, got the string {value!r} (one item is [{value}])"
