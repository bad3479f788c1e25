"""The demo model's script: list, read the README, answer from the tool results."""

from __future__ import annotations

import json

from rho_adapters.model.demo import LABEL, DemoModel
from rho_domain.messages import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from rho_domain.model import (
    ModelRequest,
    TextChunk,
    ToolCallReady,
    ToolChoice,
    ToolSpec,
    UsageReport,
)

PATH = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
CMD = {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}
TOOLS = (
    ToolSpec(name="list", description="", parameters=PATH),
    ToolSpec(name="read", description="", parameters=PATH),
    ToolSpec(name="bash", description="", parameters=CMD),
)


async def step(
    model: DemoModel, messages: tuple[Message, ...], tool_choice: ToolChoice | None = None
) -> tuple[list[ToolCall], str]:
    request = ModelRequest(
        model="demo", system="s", messages=messages, tools=TOOLS, tool_choice=tool_choice
    )
    calls: list[ToolCall] = []
    text = ""
    usage = None
    async for event in model.stream(request):
        if isinstance(event, ToolCallReady):
            calls.append(event.call)
        elif isinstance(event, TextChunk):
            text += event.text
        elif isinstance(event, UsageReport):
            usage = event.usage
    assert usage is not None
    assert usage.estimated
    return calls, text


def result(call: ToolCall, content: str, is_error: bool = False) -> ToolResultMessage:
    return ToolResultMessage(
        call_id=call.id, tool_name=call.name, content=content, is_error=is_error
    )


async def test_lists_then_reads_readme_then_answers() -> None:
    model = DemoModel()
    history: tuple[Message, ...] = (UserMessage("what is here?"),)
    (first,), _ = await step(model, history)
    assert (first.name, json.loads(first.arguments)) == ("list", {"path": "."})
    history += (AssistantMessage(tool_calls=(first,)), result(first, "README.md\nsrc/\n"))
    (second,), _ = await step(model, history)
    assert (second.name, json.loads(second.arguments)) == ("read", {"path": "README.md"})
    history += (AssistantMessage(tool_calls=(second,)), result(second, "# Hello project\n"))
    calls, text = await step(model, history)
    assert calls == []
    assert text.startswith(LABEL)
    assert "Hello project" in text
    assert "2 lines" in text


async def test_backticked_command_goes_to_bash_and_rejection_is_reported() -> None:
    model = DemoModel()
    history: tuple[Message, ...] = (UserMessage("run `echo hi`"),)
    (call,), _ = await step(model, history)
    assert (call.name, json.loads(call.arguments)) == ("bash", {"command": "echo hi"})
    rejected = result(call, "[rejected by the user; not run.]", is_error=True)
    history += (AssistantMessage(tool_calls=(call,)), rejected)
    calls, text = await step(model, history)
    assert calls == []
    assert "You rejected a call" in text


async def test_compaction_request_gets_a_summary_without_tools() -> None:
    history = (UserMessage("first task"), AssistantMessage(text="done"), UserMessage("sum up"))
    calls, text = await step(DemoModel(), history, tool_choice="none")
    assert calls == []
    assert "first task" in text


async def test_after_a_compaction_of_its_turn_it_answers_instead_of_starting_over() -> None:
    """The summary replaced the current turn's calls (the tail kept only the prompt): the demo
    reads what was done from the summary, so the script ends (issue 16: it looped forever)."""
    model = DemoModel()
    prompt = UserMessage("what is here?")
    history: tuple[Message, ...] = (prompt,)
    (first,), _ = await step(model, history)
    history += (AssistantMessage(tool_calls=(first,)), result(first, "README.md\n"))
    (second,), _ = await step(model, history)
    history += (AssistantMessage(tool_calls=(second,)), result(second, "# Hello\n"))
    instruction = UserMessage("summarise")
    _, summary = await step(model, (*history[1:], instruction), tool_choice="none")
    compacted = (UserMessage(summary, origin="summary"), prompt)
    calls, text = await step(model, compacted)
    assert calls == []
    assert text.startswith(LABEL)
    # a second compaction of the same turn keeps what the first one recorded
    _, again = await step(model, (compacted[0], instruction), tool_choice="none")
    calls, _ = await step(model, (UserMessage(again, origin="summary"), prompt))
    assert calls == []


async def test_a_new_prompt_after_a_summary_of_earlier_turns_starts_its_own_script() -> None:
    model = DemoModel()
    summary = UserMessage("[Summary] the user asked about x.", origin="summary")
    history: tuple[Message, ...] = (summary, UserMessage("old"), AssistantMessage(text="done"))
    (call,), _ = await step(model, (*history, UserMessage("what is here?")))
    assert call.name == "list"
