"""Hooks: the user's code around tool calls, model calls and runs, able to change them.

Listeners (``on_event``) observe; hooks decide. See ``values`` for what each point is given
and may answer, ``applied`` for how the loop applies them (in order, under a deadline, fail
closed) and records what they produced. They are part of an ``Agent`` (``Agent.hooks``), so a
delegated child runs under its parent's hooks, and they sit at the tool-call seam, so every
tool (built-in, added, delegated, remote) meets them.
"""

from rho_domain.hooks.values import (
    DEFAULT_HOOK_TIMEOUT,
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
    Hooks,
    ReplaceMessages,
    ReplaceResult,
    RewriteArguments,
)

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
