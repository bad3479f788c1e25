"""PreparedCall: a tool call parsed and validated once, before anyone judges or runs it.

The model's ``ToolCall`` keeps its arguments as the raw JSON text it sent (the trace records it
byte for byte, and a malformed call is reported back verbatim). Everything after the model reads
one ``PreparedCall`` instead of that text: the policy (``ToolHandler.policy_for`` on the
validated arguments), the approval decision (the decoded values the profile's patterns are
matched on), the approver (``ApprovalRequest.arguments``), the registry and the handler (the
validated arguments it runs with). ``prepare`` is the one place a call's text is parsed
(``json_text.one_reading`` once: a key given twice, ``NaN`` or ``Infinity`` is refused, so
what is shown and judged is what every reader after, in any language, reads) and checked
against its tool's schema (``coerce_and_validate`` once).
"""

from __future__ import annotations

import json
from asyncio import CancelledError
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from rho_domain.errors import ToolArgumentsError
from rho_domain.json_text import one_reading
from rho_domain.messages import ToolCall
from rho_domain.plugged import described, member_name
from rho_domain.tools.base import ToolHandler, ToolPolicy
from rho_domain.tools.schema import coerce_and_validate
from rho_domain.value_methods import value_repr


@attrs.frozen(kw_only=True, eq=False)
class PreparedCall:
    """One call as every reader after the model sees it.

    ``handler`` is None for an unknown tool. ``decoded`` is the JSON object the arguments
    decode to (None when they are not a JSON object); ``arguments`` is that object coerced and
    checked against the handler's schema (None when the tool is unknown or they do not fit).
    ``problem`` says, in words for the model, why the call cannot run (unknown tool, arguments
    that are not JSON or do not match the schema); None when it can. ``policy`` is the
    handler's ``policy_for(arguments)``, None exactly when ``problem`` is set.
    """

    __repr__ = value_repr

    call: ToolCall
    handler: ToolHandler | None
    decoded: Mapping[str, Any] | None
    arguments: Mapping[str, Any] | None
    problem: str | None
    policy: ToolPolicy | None

    @property
    def name(self) -> str:
        """The tool's name, as the model gave it."""
        return self.call.name


def decode_arguments(call: ToolCall) -> dict[str, Any]:
    """Parse a call's raw JSON arguments into an object, or raise ``ToolArgumentsError``."""
    text = call.arguments.strip() or "{}"
    try:
        value = one_reading(text)
    except json.JSONDecodeError as exc:
        preview = text if len(text) <= 200 else text[:200] + "..."
        raise ToolArgumentsError(
            f"arguments are not valid JSON ({exc.msg} at position {exc.pos}): {preview}"
        ) from None
    except ValueError as exc:  # a key twice or NaN: last-wins here, first-wins elsewhere
        raise ToolArgumentsError(
            f"arguments are ambiguous JSON (two parsers may read them differently): the text {exc}"
        ) from None
    except RecursionError:  # legal JSON nested deeper than the parser goes: malformed too
        raise ToolArgumentsError(
            "arguments nest arrays or objects too deeply to be read; send a flatter JSON object"
        ) from None
    if not isinstance(value, dict):
        raise ToolArgumentsError(f"arguments must be a JSON object, got {type(value).__name__}")
    return value


def prepare(
    call: ToolCall,
    handler: ToolHandler | None,
    available: str,
    *,
    judge: Callable[[ToolHandler, Mapping[str, Any]], ToolPolicy] | None = None,
) -> PreparedCall:
    """``call`` parsed, validated against ``handler``'s schema and judged by its policy
    (``judge(handler, arguments)``, default ``handler.policy_for(arguments)``). ``available``
    lists the tools for the unknown-tool message. Never raises but ``CancelledError`` and
    ``KeyboardInterrupt``: a policy that raises (the handler's bug, not the model's) makes the
    call's ``problem``, naming the tool and its ``policy_for``, so the call is not run (fail
    closed) and the run goes on. Before, its exception ended the run naming no tool, and the
    call was answered "cancelled by the user"."""
    try:
        decoded: dict[str, Any] | None = decode_arguments(call)
    except ToolArgumentsError as exc:
        decoded, problem = None, str(exc)
    if handler is None:
        problem = f"Unknown tool {call.name!r}. Available tools: {available or 'none'}."
        return PreparedCall(
            call=call, handler=None, decoded=decoded, arguments=None, problem=problem, policy=None
        )
    if decoded is None:
        return PreparedCall(
            call=call,
            handler=handler,
            decoded=None,
            arguments=None,
            problem=f"Tool {call.name!r}: {problem}. Fix the arguments and call again.",
            policy=None,
        )
    try:
        arguments = coerce_and_validate(decoded, handler.parameters)
    except ToolArgumentsError as exc:
        return PreparedCall(
            call=call,
            handler=handler,
            decoded=decoded,
            arguments=None,
            problem=f"Tool {call.name!r}: {exc}. Fix the arguments and call again.",
            policy=None,
        )
    try:
        policy = handler.policy_for(arguments) if judge is None else judge(handler, arguments)
    except BaseException as exc:  # SystemExit too: the tool's bug, not the process's end
        if isinstance(exc, CancelledError | KeyboardInterrupt):
            raise
        return PreparedCall(
            call=call,
            handler=handler,
            decoded=decoded,
            arguments=arguments,
            problem=(
                f"Tool {call.name!r} was not run: judging the call, "
                f"{member_name(handler, 'policy_for')} raised {described(exc)} (a bug in "
                "the tool, not in the arguments)."
            ),
            policy=None,
        )
    return PreparedCall(
        call=call,
        handler=handler,
        decoded=decoded,
        arguments=arguments,
        problem=None,
        policy=policy,
    )
