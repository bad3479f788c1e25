"""The rules of llama-cpp-python 0.3.36's server (``python -m llama_cpp.server``), as recorded.

They come from tests/fixtures/llama_cpp_python (captures 01-19) and serve
``WireTransport(rules=...)`` and ``LoopbackServer(rules=...)``::

    server = LoopbackServer(script, rules=llama_cpp_python_rules(n_ctx=4096))

What the rules answer, before any scripted reply:

- an assistant message whose ``content`` is null or missing: HTTP 500 with pydantic's
  "validation errors" (17, 19);
- a prompt over ``n_ctx`` (counted as ``prompt_tokens``; ``max_tokens`` counts too): with
  streaming an HTTP 200 with an empty body (07), without it a 400 ``context_length_exceeded``
  in the server's words (08);
- tools with ``tool_choice: "auto"`` and streaming: an HTTP 200 with an empty body (13);
- ``GET /v1/models``: ``owned_by: "me"``; ``POST /extras/tokenize/count``: ``{"count": n}``;
  every answer carries ``server: uvicorn``.

``prompt_tokens`` is a deterministic stand-in for the model's tokenizer: two characters per
token of the message and tool text, plus four per message.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from rho_adapters.fakes.wire import Exchange, Reply, Rule, raw_reply

SERVER_HEADERS = {"server": "uvicorn"}


def prompt_tokens(body: Mapping[str, Any]) -> int:
    """The stand-in tokenizer: ~2 characters per token, 4 tokens of framing per message."""
    messages = body.get("messages") or []
    chars = sum(len(json.dumps(m.get("content") or "")) for m in messages)
    chars += sum(len(json.dumps(m.get("tool_calls") or "")) for m in messages)
    if body.get("tools") and body.get("tool_choice"):  # tools reach the prompt only then
        chars += len(json.dumps(body["tools"]))
    return chars // 2 + 4 * len(messages)


def validation_error(index: int) -> Reply:
    """The 500 llama-cpp-python sends for an assistant message without string content."""
    message = (
        "7 validation errors:\n  {'type': 'string_type', 'loc': ('body', 'messages', "
        f"{index}, 'ChatCompletionRequestAssistantMessage', 'content'), "
        "'msg': 'Input should be a valid string', 'input': None}"
    )
    return Reply(
        status=500,
        error_body={"error": {"message": message, "type": "internal_server_error"}},
        headers=SERVER_HEADERS,
    )


def overflow_error(n_ctx: int, prompt: int, completion: int) -> Reply:
    """The 400 for a prompt over the window, in the server's words (capture 08)."""
    message = (
        f"This model's maximum context length is {n_ctx} tokens. However, you requested "
        f"{prompt + completion} tokens ({prompt} in the messages, {completion} in the "
        "completion). Please reduce the length of the messages or completion."
    )
    return Reply(
        status=400,
        error_body={
            "error": {
                "message": message,
                "type": "invalid_request_error",
                "param": "messages",
                "code": "context_length_exceeded",
            }
        },
        headers=SERVER_HEADERS,
    )


def empty_stream() -> Reply:
    """HTTP 200, text/event-stream, no bytes (the traceback is only in the server's log)."""
    return raw_reply(headers=SERVER_HEADERS)


def llama_cpp_python_rules(*, n_ctx: int = 4096, model: str = "x") -> list[Rule]:
    """The server's request rules, for a server run with ``--n_ctx n_ctx``."""

    def models(exchange: Exchange) -> Reply | None:
        if exchange.method == "GET" and exchange.path.endswith("/models"):
            listing = {
                "object": "list",
                "data": [{"id": model, "object": "model", "owned_by": "me", "permissions": []}],
            }
            return raw_reply(json.dumps(listing).encode(), headers=SERVER_HEADERS)
        return None

    def tokenize(exchange: Exchange) -> Reply | None:
        if exchange.path == "/extras/tokenize/count":
            text = str(exchange.body.get("input") or "")
            return raw_reply(json.dumps({"count": len(text) // 2}).encode())
        return None

    def content(exchange: Exchange) -> Reply | None:
        for index, message in enumerate(exchange.body.get("messages") or ()):
            if message.get("role") == "assistant" and not isinstance(message.get("content"), str):
                return validation_error(index)
        return None

    def overflow(exchange: Exchange) -> Reply | None:
        prompt = prompt_tokens(exchange.body)
        completion = int(exchange.body.get("max_tokens") or 0)
        if prompt + completion <= n_ctx:
            return None
        if exchange.body.get("stream"):
            return empty_stream()
        return overflow_error(n_ctx, prompt, completion)

    def auto_stream(exchange: Exchange) -> Reply | None:
        body = exchange.body
        if body.get("tools") and body.get("tool_choice") == "auto" and body.get("stream"):
            return empty_stream()
        return None

    def chat_only(rule: Rule) -> Rule:
        return lambda exchange: rule(exchange) if exchange.is_chat else None

    return [models, tokenize, *(chat_only(r) for r in (content, overflow, auto_stream))]
