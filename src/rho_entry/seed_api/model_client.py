"""``ModelClient``: the design documents' streaming client, over the one model adapter.

::

    client = ModelClient(model="gpt-5-mini", base_url="https://api.openai.com/v1",
                         service_tier="flex")
    async for event in client.stream([{"role": "user", "content": "Hi"}]):
        if event.type == "text":
            print(event.content, end="")

It is the ``ChatModel`` a Session would use for the same settings (``rho_entry.wiring``
``build_model``: the same providers, retries, tool-call assembly and non-streaming fallback),
with the documents' events: ``text`` (``content``: a text delta), ``tool_call``
(``tool_call``: one complete ``ToolCall``), ``done`` (``usage``) and ``error`` (``content``:
what failed; the stream ends there). The API key comes from ``api_key`` or, as for a
Session, from the provider's variable (``OPENAI_API_KEY``...).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterable, Mapping
from typing import Any, Literal

import attrs

from rho_domain.config import AgentConfig
from rho_domain.errors import ConfigError, ModelError
from rho_domain.messages import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from rho_domain.model import (
    ModelRequest,
    RefusalChunk,
    StreamFinished,
    TextChunk,
    ToolCallReady,
    ToolSpec,
    UsageReport,
)
from rho_domain.ports.model import ChatModel
from rho_domain.value_methods import value_eq, value_hash, value_repr


@attrs.frozen(kw_only=True)
class StreamEvent:
    """One event of ``ModelClient.stream`` (see the module docstring)."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    type: Literal["text", "tool_call", "done", "error"]
    content: str = ""
    tool_call: ToolCall | None = None
    usage: Usage | None = None


class ModelClient:
    """A streaming client for one model endpoint (see the module docstring)."""

    def __init__(
        self,
        model: str | None = None,
        base_url: str | None = None,
        *,
        api_key: str | None = None,
        service_tier: str | None = None,
        reasoning_effort: str | None = None,
        temperature: float | None = None,
        response_format: Mapping[str, Any] | None = None,
    ) -> None:
        from rho_adapters.clock import SystemClock
        from rho_entry import wiring
        from rho_entry.config.settings import api_key_variable

        config = AgentConfig(
            model=model if model is not None else AgentConfig().model,
            base_url=base_url,
            service_tier=service_tier,
            reasoning_effort=reasoning_effort,
            temperature=temperature,
            response_format=response_format,
        )
        environ: Mapping[str, str] = os.environ
        if api_key is not None:
            environ = {**environ, api_key_variable(config, environ): api_key}
        self.model = config.model
        self.config = config
        self.chat_model: ChatModel = wiring.build_model(config, environ, SystemClock())

    async def stream(
        self,
        messages: Iterable[Message | Mapping[str, Any]],
        tools: Iterable[ToolSpec | Mapping[str, Any]] | None = None,
        *,
        system: str = "",
    ) -> AsyncIterator[StreamEvent]:
        """Call the model with ``messages`` (domain messages or OpenAI chat dicts; a
        ``system`` dict joins ``system``) and ``tools`` (OpenAI function specs or
        ``ToolSpec``), yielding the documents' events; never raises a ``ModelError`` (it
        becomes an ``error`` event)."""
        prompt, history = _split_system(messages, system)
        request = ModelRequest(
            model=self.model,
            system=prompt,
            messages=history,
            tools=tuple(_spec(t) for t in tools or ()),
            response_format=self.config.response_format,
            reasoning_effort=self.config.reasoning_effort,
            service_tier=self.config.service_tier,
            temperature=self.config.temperature,
        )
        usage: Usage | None = None
        try:
            async for item in self.chat_model.stream(request):
                if isinstance(item, TextChunk | RefusalChunk):
                    yield StreamEvent(type="text", content=item.text)
                elif isinstance(item, ToolCallReady):
                    yield StreamEvent(type="tool_call", tool_call=item.call)
                elif isinstance(item, UsageReport):
                    usage = item.usage
                elif isinstance(item, StreamFinished):
                    yield StreamEvent(type="done", usage=usage or Usage())
        except ModelError as exc:
            yield StreamEvent(type="error", content=f"{type(exc).__name__}: {exc}")

    async def aclose(self) -> None:
        """Release the connections."""
        await self.chat_model.aclose()

    async def __aenter__(self) -> ModelClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


def _split_system(
    messages: Iterable[Message | Mapping[str, Any]], system: str
) -> tuple[str, tuple[Message, ...]]:
    prompts = [system] if system else []
    history: list[Message] = []
    for message in messages:
        if not isinstance(message, Mapping):
            history.append(message)
        elif message.get("role") == "system":
            prompts.append(str(message.get("content") or ""))
        else:
            history.append(_message(message))
    return "\n\n".join(prompts), tuple(history)


def _message(message: Mapping[str, Any]) -> Message:
    role, content = message.get("role"), str(message.get("content") or "")
    if role == "user":
        return UserMessage(content)
    if role == "assistant":
        calls = tuple(
            ToolCall(str(c["id"]), str(c["function"]["name"]), str(c["function"]["arguments"]))
            for c in message.get("tool_calls") or ()
        )
        return AssistantMessage(text=content, tool_calls=calls)
    if role == "tool":
        return ToolResultMessage(
            call_id=str(message["tool_call_id"]),
            tool_name=str(message.get("name") or ""),
            content=content,
        )
    raise ConfigError(f"message role {role!r}: expected system, user, assistant or tool")


def _spec(tool: ToolSpec | Mapping[str, Any]) -> ToolSpec:
    if isinstance(tool, ToolSpec):
        return tool
    function = tool.get("function", tool)
    return ToolSpec(
        name=str(function["name"]),
        description=str(function.get("description") or ""),
        parameters=function.get("parameters") or {"type": "object", "properties": {}},
    )
