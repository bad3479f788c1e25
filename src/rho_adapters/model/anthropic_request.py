"""The Anthropic Messages API request: the body of ``POST /v1/messages`` for a ModelRequest.

``messages_body`` maps the system prompt to ``system``, assistant tool calls to ``tool_use``
blocks and tool results to ``tool_result`` blocks in user turns (``wire_messages``), sends each
kept thinking block back unchanged when the request has thinking on and leaves thinking off
inside a tool loop whose calls were made without it (``thinking_can_start``), and, for a
request with an ``output_schema``, offers the ``final_answer`` tool and forces tool use
(``_with_final_tool``). Pure: no I/O. See ``rho_adapters.model.anthropic`` for the whole
protocol.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from rho_domain.messages import (
    AssistantMessage,
    Message,
    ThinkingBlock,
    ToolCall,
    ToolResultMessage,
)
from rho_domain.model import ModelRequest

DEFAULT_MAX_TOKENS = 8192
_THINKING_BUDGET = {"low": 2048, "medium": 8192, "high": 16384, "xhigh": 32000, "max": 32000}


def messages_body(request: ModelRequest) -> dict[str, Any]:
    """The JSON body for ``POST /v1/messages`` (streaming)."""
    max_tokens = request.max_output_tokens or DEFAULT_MAX_TOKENS
    body: dict[str, Any] = {"model": request.model, "stream": True}
    if request.system:
        body["system"] = request.system
    budget = _THINKING_BUDGET.get(request.reasoning_effort or "")
    if budget and not thinking_can_start(request.messages):
        budget = None
    body["messages"] = wire_messages(request.messages, thinking=bool(budget))
    if request.output_schema is not None:
        _with_final_tool(body, request, thinking=bool(budget))
    elif request.tools:
        body["tools"] = [
            {"name": t.name, "description": t.description, "input_schema": dict(t.parameters)}
            for t in request.tools
        ]
        if request.tool_choice is not None or request.parallel_tool_calls is False:
            kind = {"required": "any", None: "auto"}.get(request.tool_choice, request.tool_choice)
            choice: dict[str, Any] = (
                {"type": kind}
                if kind in ("auto", "any", "none")
                else {"type": "tool", "name": kind}
            )
            if request.parallel_tool_calls is False and kind != "none":
                choice["disable_parallel_tool_use"] = True
            body["tool_choice"] = choice
    if budget:
        body["thinking"] = {"type": "enabled", "budget_tokens": budget}
        max_tokens = max(max_tokens, budget + 4096)  # the budget must fit under max_tokens
    elif request.temperature is not None:
        body["temperature"] = request.temperature  # not allowed together with thinking
    body["max_tokens"] = max_tokens
    if request.service_tier in ("auto", "standard_only"):
        body["service_tier"] = request.service_tier
    return body


def thinking_can_start(messages: tuple[Message, ...]) -> bool:
    """False inside a tool loop whose calls were made without thinking (a session that turns
    ``--reasoning-effort`` on when resumed mid-loop, or a turn another model wrote): the API
    refuses thinking there ("a final assistant message must start with a thinking block")
    and says to disable it; it starts again with the next user message."""
    for message in reversed(messages):
        if isinstance(message, AssistantMessage):
            return not message.tool_calls or bool(message.thinking)
        if not isinstance(message, ToolResultMessage):
            return True  # the user spoke after the last calls: a new turn
    return True


FINAL_TOOL = "final_answer"


def _with_final_tool(body: dict[str, Any], request: ModelRequest, *, thinking: bool) -> None:
    """Tools and choice for a request whose answer has a schema (see the module docstring)."""
    schema = request.output_schema or {}
    tools = [
        {"name": t.name, "description": t.description, "input_schema": dict(t.parameters)}
        for t in request.tools
        if t.name != FINAL_TOOL
    ]
    tools.append(
        {
            "name": FINAL_TOOL,
            "description": "Give your final answer: call this once, when you have finished, "
            "with the answer as its input, instead of answering in text.",
            "input_schema": final_input_schema(schema),
        }
    )
    body["tools"] = tools
    choice: dict[str, Any]
    if thinking:
        choice = {"type": "auto"}  # the API refuses a forced tool with thinking on
    elif request.tool_choice == "none" or len(tools) == 1:
        choice = {"type": "tool", "name": FINAL_TOOL}
    elif request.tool_choice in (None, "auto", "required"):
        choice = {"type": "any"}
    else:
        choice = {"type": "tool", "name": request.tool_choice}
    if request.parallel_tool_calls is False:
        choice["disable_parallel_tool_use"] = True
    body["tool_choice"] = choice


def final_input_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The final tool's input schema: the answer's own when it is an object (tool inputs must
    be), else ``{"answer": schema}``."""
    if schema.get("type") == "object":
        return dict(schema)
    wrapped: dict[str, Any] = {
        "type": "object",
        "properties": {"answer": {k: v for k, v in schema.items() if k not in _ROOT_ONLY}},
        "required": ["answer"],
    }
    for key in _ROOT_ONLY & schema.keys():
        wrapped[key] = schema[key]  # $ref targets stay at the root
    return wrapped


_ROOT_ONLY = frozenset({"$defs", "definitions", "$schema", "$id"})


def wire_messages(messages: tuple[Message, ...], *, thinking: bool = False) -> list[dict[str, Any]]:
    """Domain messages → alternating user/assistant turns with content blocks; with
    ``thinking``, each assistant turn's thinking blocks go back as they came."""
    out: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, AssistantMessage):
            blocks = _assistant_blocks(message, thinking=thinking)
            if blocks:
                out.append({"role": "assistant", "content": blocks})
            continue
        if isinstance(message, ToolResultMessage):
            block: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": message.call_id,
                "content": message.content,
            }
            if message.is_error:
                block["is_error"] = True
        else:
            block = {"type": "text", "text": message.content}
        # Tool results and the user's next words share one user turn (roles must alternate).
        if out and out[-1]["role"] == "user":
            out[-1]["content"].append(block)
        else:
            out.append({"role": "user", "content": [block]})
    return out


def _assistant_blocks(message: AssistantMessage, *, thinking: bool) -> list[dict[str, Any]]:
    """The turn's blocks: the thinking that came first, the text, then each tool call followed
    by the thinking that came after it (interleaved thinking), the order the model wrote."""
    kept = message.thinking if thinking else ()
    blocks = [_thinking_block(b) for b in kept if b.after_calls == 0]
    if message.text:
        blocks.append({"type": "text", "text": message.text})
    for done, c in enumerate(message.tool_calls, start=1):
        blocks.append({"type": "tool_use", "id": c.id, "name": c.name, "input": _input(c)})
        blocks.extend(_thinking_block(b) for b in kept if b.after_calls == done)
    return blocks


def _thinking_block(block: ThinkingBlock) -> dict[str, Any]:
    if block.kind == "redacted_thinking":
        return {"type": "redacted_thinking", "data": block.data}
    return {"type": "thinking", "thinking": block.thinking, "signature": block.signature}


def _input(call: ToolCall) -> dict[str, Any]:
    try:
        value = json.loads(call.arguments or "{}")
    except (ValueError, RecursionError):  # not JSON, or nested past the parser
        value = None
    # tool_use.input must be an object; keep malformed arguments visible to the model.
    return value if isinstance(value, dict) else {"_unparsed_arguments": call.arguments}
