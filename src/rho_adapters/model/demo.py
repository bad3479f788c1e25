"""``--model demo``: a scripted, offline ChatModel that drives the real tools.

It lets a fresh install show a complete agent loop with no account and no network. It is not
a language model and says so in every answer. Its script, per user prompt:

1. If the prompt contains a command in backticks (``run `ls -la` ``) and a ``bash`` tool
   exists, call ``bash`` with it (so approvals can be tried), then report the output.
2. Otherwise call ``list`` on ``.``; if the listing shows a README and ``read`` exists, read it.
3. Answer with a summary built from the tool results found in the request's messages.

Asked for a compaction summary (``tool_choice="none"``), it summarises the history it sees,
and names the tools the unfinished turn already called. Its decisions read only the
conversation: after a compaction that summarised the current turn's calls, the summary (which
sits just before the prompt) tells it what was done, so it answers instead of starting over.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from rho_domain.messages import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
    estimate_tokens,
    message_chars,
)
from rho_domain.model import (
    ModelRequest,
    StreamEvent,
    StreamFinished,
    TextChunk,
    ToolCallChunk,
    ToolCallReady,
    ToolSpec,
    UsageReport,
)
from rho_domain.ports.model import ChatModel

LABEL = "[demo model: scripted and offline; no language model was called]"
_LINE_NUMBER = re.compile(r"^\s*\d+\t")
_COMMAND = re.compile(r"`([^`]+)`")
_README = re.compile(r"\b(README(?:\.md|\.rst|\.txt)?)\b", re.IGNORECASE)
_DONE = "Tools already called for the current request: "
_DONE_LINE = re.compile(re.escape(_DONE) + r"([\w, ]*)\.")
_PARAMS = {
    "list": ("path", "directory", "dir"),
    "read": ("path", "file_path", "file"),
    "bash": ("command", "cmd"),
}


class DemoModel(ChatModel):
    """A deterministic ChatModel for demos and smoke tests; see the module docstring."""

    def __init__(self) -> None:
        self._ids = itertools.count(1)
        self.calls = 0

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """See ``ChatModel.stream``."""
        self.calls += 1
        return self._stream(request)

    async def aclose(self) -> None:
        """See ``ChatModel.aclose``."""

    async def _stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        call = None if request.tool_choice == "none" else self._next_call(request)
        if call is not None:
            yield ToolCallChunk(index=0, call_id=call.id, name=call.name, arguments_delta="")
            yield ToolCallReady(call)
            output = len(call.arguments) // 4 + 10
        else:
            answer = _summary(request) if request.tool_choice == "none" else _answer(request)
            for word in re.findall(r"\S+\s*|\s+", answer):
                yield TextChunk(word)
                await asyncio.sleep(0)  # let the terminal render as it streams
            output = estimate_tokens(len(answer))
        prompt = len(request.system) + sum(message_chars(m) for m in request.messages)
        yield UsageReport(
            Usage(input_tokens=estimate_tokens(prompt), output_tokens=output, estimated=True)
        )
        yield StreamFinished("tool_calls" if call is not None else "stop")

    def _next_call(self, request: ModelRequest) -> ToolCall | None:
        prompt, results = _current_turn(request.messages)
        tools = {spec.name: spec for spec in request.tools}
        done = {r.tool_name for r in results} | _summarised_calls(request.messages)
        command = _COMMAND.search(prompt)
        if command and "bash" in tools:
            if "bash" in done:
                return None
            return self._call(tools["bash"], command.group(1))
        if "list" in tools and "list" not in done:
            return self._call(tools["list"], ".")
        listing = next((r.content for r in results if r.tool_name == "list"), "")
        readme = _README.search(listing)
        if readme and "read" in tools and "read" not in done and not _rejected(results):
            return self._call(tools["read"], readme.group(1))
        return None

    def _call(self, spec: ToolSpec, value: str) -> ToolCall:
        arguments = {_param(spec): value}
        return ToolCall(
            id=f"demo_{next(self._ids)}", name=spec.name, arguments=json.dumps(arguments)
        )


def _param(spec: ToolSpec) -> str:
    properties: Mapping[str, Any] = spec.parameters.get("properties", {})
    for name in _PARAMS.get(spec.name, ()):
        if name in properties:
            return name
    required: Sequence[str] = spec.parameters.get("required", ())
    return required[0] if required else next(iter(properties), "path")


def _current_turn(messages: Sequence[Message]) -> tuple[str, list[ToolResultMessage]]:
    """The latest user prompt and the tool results that followed it."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if isinstance(message, UserMessage) and message.origin in ("user", "directive"):
            later = messages[index + 1 :]
            return message.content, [m for m in later if isinstance(m, ToolResultMessage)]
    return "", []


def _summarised_calls(messages: Sequence[Message]) -> set[str]:
    """Tools of the current turn that a compaction summary (just before the prompt) names."""
    before = list(messages)
    while before and not (isinstance(before[-1], UserMessage) and before[-1].origin == "user"):
        before.pop()
    before = before[:-1]  # the prompt itself
    while before and isinstance(before[-1], UserMessage) and before[-1].origin == "recent":
        before.pop()
    last = before[-1] if before else None
    if not (isinstance(last, UserMessage) and last.origin == "summary"):
        return set()
    found = _DONE_LINE.search(last.content)
    return {name.strip() for name in found.group(1).split(",")} - {""} if found else set()


def _unfinished_calls(messages: Sequence[Message]) -> list[str]:
    """Tools called after the last prompt of a history whose last turn has no answer yet."""
    turn: list[Message] = []
    for message in reversed(messages):
        if isinstance(message, UserMessage) and message.origin in ("user", "directive"):
            break
        turn.insert(0, message)
    answered = isinstance(turn[-1], AssistantMessage) and not turn[-1].tool_calls if turn else True
    if answered:
        return []
    names = {r.tool_name for r in turn if isinstance(r, ToolResultMessage)}
    for message in turn:
        if isinstance(message, UserMessage) and message.origin == "summary":
            found = _DONE_LINE.search(message.content)
            names |= {n.strip() for n in found.group(1).split(",")} - {""} if found else set()
    return sorted(names)


def _rejected(results: Sequence[ToolResultMessage]) -> bool:
    return any(r.is_error and "rejected" in r.content for r in results)


def _answer(request: ModelRequest) -> str:
    prompt, results = _current_turn(request.messages)
    if not results:
        return (
            f"{LABEL}\n\nI would need tools to look around, but none produced a result for "
            f"{prompt[:80]!r}. Configure a real model (see `rho-agent --help`) for real answers."
        )
    lines = [LABEL, "", "Here is what my tool calls showed:"]
    for result in results:
        lines.append(f"- `{result.tool_name}`: {_describe(result)}")
    if _rejected(results):
        lines.append("")
        lines.append("You rejected a call, so I stopped there. Tell me what to do instead.")
    lines += [
        "",
        "A real model would now reason over these results. Set OPENAI_API_KEY (or "
        "--base-url for a local server) and drop `--model demo` to get one.",
    ]
    return "\n".join(lines)


def _describe(result: ToolResultMessage) -> str:
    text = result.content.strip()
    # drop the read tool's line numbers and the listing's column padding
    body = [
        " ".join(_LINE_NUMBER.sub("", line).split()) for line in text.splitlines() if line.strip()
    ]
    if result.is_error:
        return f"failed or was refused: {body[0][:160] if body else 'no details'}"
    if not body:
        return "no output"
    if result.tool_name == "list":
        names = ", ".join(line.strip() for line in body[:8])
        more = f" and {len(body) - 8} more" if len(body) > 8 else ""
        return f"{_count(len(body))}, starting with {names}{more}"
    first = next((line.strip("# ").strip() for line in body if line.strip("# ").strip()), "")
    return f"{_count(len(body))}; it begins with {first[:120]!r}"


def _summary(request: ModelRequest) -> str:
    users = [m for m in request.messages if isinstance(m, UserMessage) and m.origin == "user"]
    calls = sum(len(m.tool_calls) for m in request.messages if isinstance(m, AssistantMessage))
    asked = "; ".join(m.content[:80] for m in users[:-1][-5:]) or "nothing yet"
    history = request.messages[:-1]  # the last message is the summary instruction
    unfinished = _unfinished_calls(history)
    done = f"\n{_DONE}{', '.join(unfinished)}." if unfinished else ""
    return (
        f"{LABEL}\nSummary of {len(history)} messages: the user asked: {asked}. "
        f"{calls} tool calls were made. Continue from the latest request.{done}"
    )


def _count(lines: int) -> str:
    return f"{lines} line" if lines == 1 else f"{lines} lines"
