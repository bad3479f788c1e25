"""HookConfig: the hooks a config names by reference (``module:function``), checked as text.

A YAML config (or a stored session's ``config.yaml``) can name hooks but never hold them:
each entry is a string of the form ``module:function`` (``package.module:Class.method`` too),
and the value is frozen like the rest of ``AgentConfig``. What is checked here is only the
shape of each reference and the hooks' deadline; whether a reference imports, and the
function it names, is the entry layer's (``rho_entry.config.hook_refs``), and a resumed
session never imports them from its directory (``rho_entry.resume_policy``). A bad entry
raises ``ConfigError`` naming ``hooks.<point>[index]``.
"""

from __future__ import annotations

from typing import Any

import attrs

from rho_domain.config_checks import check_seconds, string_for_strings
from rho_domain.errors import ConfigError
from rho_domain.value_methods import value_eq, value_hash, value_repr


def _references(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    """Each entry is ``module:function`` (``package.module:Class.method`` too); whether it
    imports is checked where hooks are resolved (``rho_entry.config.hook_refs``)."""
    if isinstance(value, str):
        raise ConfigError(string_for_strings(f"hooks.{attribute.name}", value))
    for index, ref in enumerate(value if isinstance(value, tuple) else ()):
        module, colon, function = ref.partition(":") if isinstance(ref, str) else ("", "", "")
        names = (*module.split("."), *function.split("."))
        if callable(ref):
            raise ConfigError(
                f"hooks.{attribute.name}[{index}]: a config names hooks by reference "
                "('module:function'); pass the function itself as "
                "Agent(config, hooks=Hooks(...))"
            )
        if not colon or not all(name.isidentifier() for name in names):
            raise ConfigError(
                f"hooks.{attribute.name}[{index}]: {ref!r} is not a reference of the form "
                "module:function (a Python module path, a colon, a function in it)"
            )


def _hook_timeout(_: object, attribute: attrs.Attribute[Any], value: object) -> None:
    try:
        check_seconds(attribute, value, zero=False)
    except ConfigError as exc:
        raise ConfigError(f"hooks.{exc}") from None


@attrs.frozen(kw_only=True)
class HookConfig:
    """Hooks named by reference (``module:function``), as a YAML config names them; the
    entry layer imports them (``rho_entry.config.hook_refs``) and ``rho_domain.hooks`` says what
    each point's function is given and may answer. Python code can also pass the functions
    themselves (``rho_entry.Agent(config, hooks=Hooks(...))``).

    ``timeout`` is the deadline of each hook call in seconds (None: 5 s,
    ``rho_domain.hooks.DEFAULT_HOOK_TIMEOUT``); a late hook fails closed.
    """

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    before_tool: tuple[str, ...] = attrs.field(default=(), validator=_references)
    after_tool: tuple[str, ...] = attrs.field(default=(), validator=_references)
    before_model: tuple[str, ...] = attrs.field(default=(), validator=_references)
    after_run: tuple[str, ...] = attrs.field(default=(), validator=_references)
    timeout: float | None = attrs.field(default=None, validator=_hook_timeout)

    @property
    def references(self) -> tuple[str, ...]:
        """Every reference, point by point."""
        return (*self.before_tool, *self.after_tool, *self.before_model, *self.after_run)
