"""The design documents' view of a message: the Chat Completions dict, read from the typed
value (``State.messages`` is "list[dict] in OpenAI message format" in the documents)."""

from __future__ import annotations

import json

import pytest

from rho_domain.messages import (
    AssistantMessage,
    SystemMessage,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from rho_entry.seed_api.state import State


def test_each_message_reads_as_its_chat_completions_dict() -> None:
    call = ToolCall("c1", "read", '{"path": "a"}')
    assert dict(SystemMessage("be brief")) == {"role": "system", "content": "be brief"}
    assert dict(UserMessage("hi", origin="directive")) == {"role": "user", "content": "hi"}
    assert dict(AssistantMessage(text="", tool_calls=(call,), reasoning="hmm")) == {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "read", "arguments": '{"path": "a"}'},
            }
        ],
    }
    assert dict(AssistantMessage(refusal="no")) == {"role": "assistant", "content": "no"}
    result = ToolResultMessage(call_id="c1", tool_name="read", content="x", is_error=True)
    assert dict(result) == {"role": "tool", "tool_call_id": "c1", "content": "x"}
    assert result["tool_call_id"] == "c1"
    assert result.get("tool_calls") is None
    assert result.get("name", "none") == "none"
    with pytest.raises(KeyError):
        result["tool_calls"]


def test_the_state_messages_read_as_the_documents_show_them() -> None:
    state = State()
    state.add_user_message("What is in orders?")
    state.add_assistant_tool_calls([ToolCall("c1", "sqlite", '{"sql": "SELECT 1"}')])
    state.add_tool_results([{"tool_call_id": "c1", "content": "1"}])
    state.add_assistant_message("One row.")
    roles = [m["role"] for m in state.messages]
    assert roles == ["user", "assistant", "tool", "assistant"]
    assert state.messages[1]["tool_calls"][0]["function"]["name"] == "sqlite"
    assert state.messages[-1]["content"] == "One row."
    assert [dict(m) for m in state.messages] == state.openai_messages
    json.dumps([dict(m) for m in state.messages])  # plain JSON, as a Chat Completions body
    # the typed values are still what the session reads
    assert isinstance(state.messages[0], UserMessage)
    assert state.messages[0].content == "What is in orders?"
