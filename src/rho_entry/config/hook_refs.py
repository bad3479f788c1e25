"""Hooks named by reference: ``module:function`` strings of a config, imported at the edge.

``resolve_hooks(config.hooks)`` imports each reference (``package.module:function``, or
``module:Class.method``: the part after the colon is walked attribute by attribute) and
returns the domain's ``Hooks``. A reference that does not import, names nothing, or names
something that cannot be called is a ``ConfigError`` naming its key
(``hooks.before_tool[0]``), the reference and why, before any session starts.

Only the user's own configuration is resolved here: a stored session's references are data
and are never imported from its directory (``rho_entry.resume_policy``).
"""

from __future__ import annotations

import importlib
from typing import Any

from rho_domain.config import HookConfig
from rho_domain.errors import ConfigError
from rho_domain.hooks import Hooks
from rho_domain.plugged import described

POINTS = ("before_tool", "after_tool", "before_model", "after_run")


def resolve_hooks(config: HookConfig) -> Hooks:
    """The hooks ``config`` names, imported, with its deadline. Raises ``ConfigError``."""
    found: dict[str, tuple[Any, ...]] = {}
    for point in POINTS:
        refs: tuple[str, ...] = getattr(config, point)
        found[point] = tuple(_resolve(ref, f"hooks.{point}[{i}]") for i, ref in enumerate(refs))
    return Hooks(
        before_tool=found["before_tool"],
        after_tool=found["after_tool"],
        before_model=found["before_model"],
        after_run=found["after_run"],
        timeout=config.timeout,
    )


def _resolve(ref: str, key: str) -> Any:
    module_name, _, path = ref.partition(":")
    try:
        target: Any = importlib.import_module(module_name)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # SystemExit too: a module running its CLI at import
        # sys.exit(3) at import ended rho-agent silently with the exit code of a limit
        raise ConfigError(
            f"{key}: {ref!r} does not import: {described(exc)} (is the module on "
            "PYTHONPATH, or installed in this environment?)"
        ) from exc
    for name in path.split("."):
        try:
            target = getattr(target, name)
        except AttributeError:
            raise ConfigError(
                f"{key}: {ref!r}: {module_name} has no {path}{_did_you_mean(name, target)}"
            ) from None
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # a module __getattr__ or a property raising
            raise ConfigError(f"{key}: {ref!r}: reading {name} raised {described(exc)}") from exc
    if not callable(target):
        raise ConfigError(
            f"{key}: {ref!r} is a {type(target).__name__}, not a function a hook can be"
        )
    return target


def _did_you_mean(name: str, holder: object) -> str:
    """`` (did you mean 'guard'?)`` when ``holder`` has a public name close to ``name``: a
    slip (``myhooks:gaurd``) was refused naming only what was not there."""
    import difflib

    try:
        names = [n for n in dir(holder) if not n.startswith("_")]
    except Exception:  # noqa: BLE001 - a module's own __dir__ failing: no suggestion
        return ""
    close = difflib.get_close_matches(name, names, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""
