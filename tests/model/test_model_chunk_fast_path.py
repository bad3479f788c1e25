"""ChunkAssembler.feed's plain-text path (a chunk that is only a text delta of choice 0) must
assemble exactly what the key-by-key reading does, for that chunk and every chunk next to it:
one more key (usage, a finish reason, a service tier, an error, another choice or index, a
role, reasoning, a tool call, Groq's usage) must take the full reading."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

import pytest

from rho_adapters.model.chunks import ChunkAssembler
from rho_domain.errors import ModelError


def _choice(delta: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"index": 0, "delta": delta, "finish_reason": None, **extra}


def _chunk(*choices: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"id": "c1", "object": "chat.completion.chunk", "choices": list(choices), **extra}


USAGE = {"prompt_tokens": 7, "completion_tokens": 3}
CHUNKS = [
    _chunk(_choice({"content": "word "})),
    _chunk(_choice({"content": ""})),
    _chunk(_choice({"content": None})),
    _chunk(_choice({"content": "a", "role": "assistant"})),
    _chunk(_choice({"content": "a"}, finish_reason="stop")),
    _chunk(_choice({"content": "a"}), usage=USAGE),
    _chunk(_choice({"content": "a"}), usage=None),
    _chunk(_choice({"content": "a"}), x_groq={"usage": USAGE}),
    _chunk(_choice({"content": "a"}), service_tier="flex"),
    _chunk({"index": 1, "delta": {"content": "other choice"}}),
    _chunk({"delta": {"content": "no index"}}),
    _chunk(_choice({"content": "a"}), _choice({"content": "b"}, index=1)),
    _chunk(_choice({"content": "a"}), _choice({"content": "b"})),
    _chunk(_choice({"reasoning_content": "hm"})),
    _chunk(_choice({"content": "a", "reasoning_content": "hm"})),
    _chunk(_choice({"refusal": "no"})),
    _chunk(_choice({"tool_calls": [{"index": 0, "id": "t1", "function": {"name": "ls"}}]})),
    _chunk(_choice({"content": [{"type": "text", "text": "part"}]})),
    _chunk({"index": 0, "message": {"content": "whole"}}),
    {"id": "c1", "choices": ["not a choice"]},
    {"id": "c1", "choices": [{"index": 0, "delta": ["not a delta"]}]},
]


def _state(assembler: ChunkAssembler) -> tuple[object, ...]:
    return (
        assembler.text,
        assembler.reasoning,
        assembler.refusal,
        assembler.finish_reason,
        assembler.usage,
        assembler.service_tier,
        assembler.events,
        assembler.finish(),
    )


@pytest.mark.parametrize("chunk", CHUNKS)
def test_a_chunk_assembles_the_same_as_read_key_by_key(chunk: dict[str, Any]) -> None:
    fast, full = ChunkAssembler(), ChunkAssembler()
    # A mapping that is not a dict is always read key by key: the reference.
    assert fast.feed(chunk) == full.feed(MappingProxyType(chunk))
    assert _state(fast) == _state(full)


def test_an_error_chunk_is_raised_whatever_else_it_carries() -> None:
    chunk = _chunk(_choice({"content": "a"}), error={"message": "overloaded"})
    with pytest.raises(ModelError, match="overloaded"):
        ChunkAssembler().feed(chunk)
