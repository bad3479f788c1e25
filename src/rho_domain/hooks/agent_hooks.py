"""The hooks an agent holds: per point, in the order they run, and their deadline.

Every ``Agent`` holds a ``Hooks`` (empty by default); what each point is given and may answer
(``BeforeToolCall``, ``Deny``...) is in ``values``, which loads with the first hook that runs,
so a run without hooks never builds those classes.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import attrs

from rho_domain.errors import ConfigError
from rho_domain.plugged import plugged_name
from rho_domain.value_methods import value_eq, value_hash, value_repr

if TYPE_CHECKING:
    from rho_domain.hooks.values import (
        AfterRunHook,
        AfterToolHook,
        BeforeModelHook,
        BeforeToolHook,
    )

DEFAULT_HOOK_TIMEOUT = 5.0
"""Seconds a hook may take before it counts as failed (and its call is refused)."""


def _timeout(_: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if value is None:
        return
    number = value if isinstance(value, int | float) and not isinstance(value, bool) else None
    if number is None or not number > 0 or number == float("inf"):
        raise ConfigError(
            f"hooks {attribute.name} must be a number of seconds above 0, not {value!r}"
        )


# Typed converters (``converter=tuple`` leaves mypy a generic it cannot solve).
def _before_tool(hooks: Iterable[BeforeToolHook]) -> tuple[BeforeToolHook, ...]:
    return tuple(hooks)


def _after_tool(hooks: Iterable[AfterToolHook]) -> tuple[AfterToolHook, ...]:
    return tuple(hooks)


def _before_model(hooks: Iterable[BeforeModelHook]) -> tuple[BeforeModelHook, ...]:
    return tuple(hooks)


def _after_run(hooks: Iterable[AfterRunHook]) -> tuple[AfterRunHook, ...]:
    return tuple(hooks)


@attrs.frozen(kw_only=True)
class Hooks:
    """The hooks of an agent, per point, in the order they run, and their deadline.

    ``timeout`` None means ``DEFAULT_HOOK_TIMEOUT``. An agent's delegated children run under
    the same hooks (``Agent.without_tools`` keeps them).
    """

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    before_tool: tuple[BeforeToolHook, ...] = attrs.field(default=(), converter=_before_tool)
    after_tool: tuple[AfterToolHook, ...] = attrs.field(default=(), converter=_after_tool)
    before_model: tuple[BeforeModelHook, ...] = attrs.field(default=(), converter=_before_model)
    after_run: tuple[AfterRunHook, ...] = attrs.field(default=(), converter=_after_run)
    timeout: float | None = attrs.field(default=None, validator=_timeout)

    @property
    def deadline(self) -> float:
        """Seconds each hook may take."""
        return DEFAULT_HOOK_TIMEOUT if self.timeout is None else self.timeout

    @property
    def names(self) -> frozenset[str]:
        """``module.qualname`` of every hook (as the trace names them)."""
        every = (*self.before_tool, *self.after_tool, *self.before_model, *self.after_run)
        return frozenset(plugged_name(hook) for hook in every)

    def then(self, later: Hooks) -> Hooks:
        """These hooks, then ``later``'s, at every point; ``later``'s timeout when it sets
        one."""
        return Hooks(
            before_tool=(*self.before_tool, *later.before_tool),
            after_tool=(*self.after_tool, *later.after_tool),
            before_model=(*self.before_model, *later.before_model),
            after_run=(*self.after_run, *later.after_run),
            timeout=self.timeout if later.timeout is None else later.timeout,
        )
