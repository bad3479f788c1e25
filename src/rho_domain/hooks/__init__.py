"""Hooks: the user's code around tool calls, model calls and runs, able to change them.

Listeners (``on_event``) observe; hooks decide. See ``values`` for what each point is given
and may answer, ``applied`` for how the loop applies them (in order, under a deadline, fail
closed) and records what they produced. They are part of an ``Agent`` (``Agent.hooks``), so a
delegated child runs under its parent's hooks, and they sit at the tool-call seam, so every
tool (built-in, added, delegated, remote) meets them.

Names are imported lazily: ``Hooks`` (``agent_hooks``) with every Agent, what the points are
given and answer (``values``) with the first hook that runs or the first caller that asks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rho_domain.lazy_names import lazy_names

_EXPORTS = {
    "DEFAULT_HOOK_TIMEOUT": ".agent_hooks",
    "AfterRun": ".values",
    "AfterRunHook": ".values",
    "AfterToolAnswer": ".values",
    "AfterToolCall": ".values",
    "AfterToolHook": ".values",
    "Allow": ".values",
    "BeforeModelAnswer": ".values",
    "BeforeModelCall": ".values",
    "BeforeModelHook": ".values",
    "BeforeToolAnswer": ".values",
    "BeforeToolCall": ".values",
    "BeforeToolHook": ".values",
    "Deny": ".values",
    "Hooks": ".agent_hooks",
    "ReplaceMessages": ".values",
    "ReplaceResult": ".values",
    "RewriteArguments": ".values",
}

__all__ = [
    "DEFAULT_HOOK_TIMEOUT",
    "AfterRun",
    "AfterRunHook",
    "AfterToolAnswer",
    "AfterToolCall",
    "AfterToolHook",
    "Allow",
    "BeforeModelAnswer",
    "BeforeModelCall",
    "BeforeModelHook",
    "BeforeToolAnswer",
    "BeforeToolCall",
    "BeforeToolHook",
    "Deny",
    "Hooks",
    "ReplaceMessages",
    "ReplaceResult",
    "RewriteArguments",
]

if TYPE_CHECKING:
    from rho_domain.hooks.agent_hooks import DEFAULT_HOOK_TIMEOUT, Hooks
    from rho_domain.hooks.values import (
        AfterRun,
        AfterRunHook,
        AfterToolAnswer,
        AfterToolCall,
        AfterToolHook,
        Allow,
        BeforeModelAnswer,
        BeforeModelCall,
        BeforeModelHook,
        BeforeToolAnswer,
        BeforeToolCall,
        BeforeToolHook,
        Deny,
        ReplaceMessages,
        ReplaceResult,
        RewriteArguments,
    )


__getattr__ = lazy_names(__name__, _EXPORTS)
