"""DatabaseConfig: one database alias of an agent's configuration.

Apart from ``rho_domain.config`` (which names it lazily) because most agents configure no
database: the class is built with the first configuration that names one, or the first
importer (the database tools, the drivers' adapters, the config loaders).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs


@attrs.frozen(kw_only=True)
class DatabaseConfig:
    """One database alias. ``password_env`` names the environment variable with the password."""

    engine: str
    dsn: str | None = None
    path: str | None = None
    host: str | None = None
    port: int | None = None
    user: str | None = None
    database: str | None = None
    password_env: str | None = None
    options: Mapping[str, Any] = attrs.field(factory=dict)
