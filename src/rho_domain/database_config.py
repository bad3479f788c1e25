"""DatabaseConfig: one database alias of an agent's configuration.

Apart from ``rho_domain.config`` (which names it lazily) because most agents configure no
database: the class is built with the first configuration that names one, or the first
importer (the database tools, the drivers' adapters, the config loaders).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from rho_domain.config_checks import path_text, string_for_strings
from rho_domain.errors import ConfigError
from rho_domain.value_methods import value_eq, value_hash, value_repr

LIST_OPTIONS = ("allowed_functions",)
"""The options that hold a list of strings (``rho_domain.sql.classify.allowed_functions``)."""


def _options(_: object, attribute: attrs.Attribute[Any], value: object) -> None:
    """A string where an option wants a list is refused here, for a value built in Python as
    for a file: the adapter would otherwise refuse it only when it opens the database."""
    for key in LIST_OPTIONS:
        option = value.get(key) if isinstance(value, Mapping) else None
        if isinstance(option, str):
            raise ConfigError(string_for_strings(f"options.{key}", option))


@attrs.frozen(kw_only=True)
class DatabaseConfig:
    """One database alias. ``password_env`` names the environment variable with the password."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    engine: str
    dsn: str | None = None
    path: str | None = attrs.field(default=None, converter=path_text)  # a Path: its text
    host: str | None = None
    port: int | None = None
    user: str | None = None
    database: str | None = None
    password_env: str | None = None
    options: Mapping[str, Any] = attrs.field(factory=dict, validator=_options)
