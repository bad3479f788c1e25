"""A string where a value holds several strings is refused where the value is built.

Python iterates a string: ``extra_read_roots="/var/log"`` would be the read roots ``/``,
``v``, ``a``, ... (the whole machine readable), ``denied_tools="bash"`` would deny ``b``,
``a``, ``s``, ``h``. The YAML edge refuses it (the strict converter); these are the same
values built in Python by a library user, and the databases file's own list.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from rho_domain.config import DatabaseConfig, HookConfig
from rho_domain.errors import ConfigError
from rho_domain.mcp_config import McpServerConfig, McpToolFilter
from rho_domain.permissions import PermissionProfile
from rho_entry.config.databases_config import load_databases_file

CASES: list[tuple[Any, str]] = [
    (PermissionProfile, "extra_read_roots"),
    (PermissionProfile, "denied_tools"),
    (PermissionProfile, "approval_required_tools"),
    (PermissionProfile, "dangerous_patterns"),
    (HookConfig, "before_tool"),
    (HookConfig, "after_run"),
    (McpServerConfig, "command"),
    (McpServerConfig, "read_only_tools"),
    (McpToolFilter, "allow"),
    (McpToolFilter, "deny"),
]


def _build(cls: Any, **fields: Any) -> Any:
    return cls(name="p", **fields) if cls is PermissionProfile else cls(**fields)


@pytest.mark.parametrize(("cls", "field"), CASES, ids=[f"{c.__name__}.{f}" for c, f in CASES])
def test_a_string_for_several_strings_is_refused_naming_the_field(cls: Any, field: str) -> None:
    value = "mod:fn" if cls is HookConfig else "/var/log"
    with pytest.raises(ConfigError, match=rf"{field}: expected a list of strings, got the string"):
        _build(cls, **{field: value})
    built = _build(cls, **{field: (value,)})
    assert getattr(built, field) == (value,)


def test_a_set_and_a_list_are_still_taken() -> None:
    profile = PermissionProfile(name="p", denied_tools=frozenset({"bash"}))
    assert profile.denied_tools == frozenset({"bash"})


def test_a_database_option_list_given_a_string_is_refused() -> None:
    options = {"allowed_functions": "my_fn"}
    with pytest.raises(ConfigError, match=r"options.allowed_functions: expected a list"):
        DatabaseConfig(engine="sqlite", path="a.db", options=options)


def test_the_databases_file_refuses_a_string_for_allowed_functions(tmp_path: Path) -> None:
    path = tmp_path / "databases.yaml"
    path.write_text(
        "databases:\n  app:\n    engine: sqlite\n    path: app.db\n"
        "    options:\n      allowed_functions: my_fn\n",
        encoding="utf-8",
    )
    with pytest.raises(ConfigError) as caught:
        load_databases_file(path)
    assert str(path) in str(caught.value)
    assert "databases.app.options.allowed_functions" in str(caught.value)
    assert "'my_fn'" in str(caught.value)
