"""Public fakes for every port, for testing agents without a network, disk or human.

- ``ScriptedModel`` / ``FunctionModel`` (ChatModel): replay turns or call your function;
  build turns with ``text(...)``, ``tools(call(...), ...)`` or ``Turn(...)`` (errors, cut or
  hanging streams, malformed arguments).
- ``ReplayModel.from_trace(path)`` (ChatModel): what a recorded session's model said, call by
  call; ``RecordedTools`` (recorded tool results) and ``RecordedApprover`` (recorded human
  answers) complete the replay (``rho_entry.replay`` compares it with the recording).
- ``MemoryExecutor`` (Executor): a dict workspace with scripted commands.
- ``MemorySessionStore`` (SessionStore), ``MemorySessions`` (SessionCatalog and
  SessionControl over a MemorySessionStore and ManualSignals), ``FakeClock`` (Clock),
  ``ManualSignals`` (SignalSource), ``ScriptedApprover`` (Approver), ``MemorySpreadsheetReader``
  (SpreadsheetReader), ``InlineLineSearcher`` (LineSearcher; runs the regex in-process:
  for patterns a test wrote, never a model's), ``ManualToolSource`` (ToolSource: the tools
  a test serves, changed with ``serve``), ``RecordingSteps`` (DurableSteps: step results
  recorded in order, answered from the records by a second instance), ``MemoryRunQueue``
  (RunQueue: the DBOS queue's rules in memory; a test plays the worker with ``take`` and
  ``finish``).

- ``WireTransport`` (an httpx transport) and ``LoopbackServer`` (a real socket on 127.0.0.1)
  speak the OpenAI streaming protocol from a script, with fault injection: ``cut``, ``drop``,
  ``garbage``, ``stall``, ``stream_error``, ``http_error`` (429 with Retry-After, 5xx, ...).
  Build replies with ``text_reply``, ``tool_reply``, ``raw_reply`` and ``wire_call``;
  ``rules=`` answer by the request first (``llama_cpp_python_rules`` in
  ``rho_adapters.fakes.llama_cpp_python``: that server's recorded behaviour).

- ``FakeAnthropic`` (an httpx transport): the Anthropic Messages API from a script of
  ``ClaudeReply`` values, refusing with the real 400 what the real API refuses (thinking
  blocks dropped, altered or out of place in a tool loop; see
  ``rho_adapters.fakes.anthropic_messages``).

- ``FakeDaytona``: the Daytona control-plane and toolbox API as an httpx transport, backed by a
  real directory and real processes, for testing the sandbox executor.

Each records what happened (``requests``, ``runs``, ``events(id)``, ...) so tests assert on
state, not on mock calls. Each name is imported from its module when first asked for: a
process that uses one fake (a benchmark's loopback server, a replay) does not import the
others' httpx, Daytona or Anthropic code.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rho_domain.lazy_names import lazy_names

_EXPORTS = {
    "call": ".scripted_model",
    "ClaudeReply": ".anthropic_messages",
    "cut": ".wire",
    "drop": ".wire",
    "FakeAnthropic": ".anthropic_messages",
    "FakeClock": ".clock",
    "FakeDaytona": ".daytona",
    "Fault": ".wire",
    "FunctionModel": ".scripted_model",
    "garbage": ".wire",
    "http_error": ".wire",
    "InlineLineSearcher": ".line_search",
    "load_recording": ".replay_model",
    "LoopbackServer": ".loopback",
    "ManualSignals": ".signals",
    "ManualToolSource": ".tool_source",
    "MemoryExecutor": ".memory_executor",
    "MemoryRunQueue": ".run_queue",
    "MemorySessions": ".memory_control",
    "MemorySessionStore": ".memory_store",
    "MemorySpreadsheetReader": ".spreadsheet",
    "raw_reply": ".wire",
    "RecordedApprover": ".replay_model",
    "RecordedTools": ".replay_model",
    "RecordingSteps": ".durable",
    "ReplayModel": ".replay_model",
    "Reply": ".wire",
    "ScriptedApprover": ".approver",
    "ScriptedModel": ".scripted_model",
    "ScriptExhausted": ".scripted_model",
    "stall": ".wire",
    "stream_error": ".wire",
    "text": ".scripted_model",
    "text_reply": ".wire",
    "tool_reply": ".wire",
    "tools": ".scripted_model",
    "Turn": ".scripted_model",
    "wire_call": ".wire:call",
    "WireScriptExhausted": ".wire",
    "WireTransport": ".wire_transport",
}


__all__ = [
    "ClaudeReply",
    "FakeAnthropic",
    "FakeClock",
    "FakeDaytona",
    "Fault",
    "FunctionModel",
    "InlineLineSearcher",
    "LoopbackServer",
    "ManualSignals",
    "ManualToolSource",
    "MemoryExecutor",
    "MemoryRunQueue",
    "MemorySessionStore",
    "MemorySessions",
    "MemorySpreadsheetReader",
    "RecordedApprover",
    "RecordedTools",
    "RecordingSteps",
    "ReplayModel",
    "Reply",
    "ScriptExhausted",
    "ScriptedApprover",
    "ScriptedModel",
    "Turn",
    "WireScriptExhausted",
    "WireTransport",
    "call",
    "cut",
    "drop",
    "garbage",
    "http_error",
    "load_recording",
    "raw_reply",
    "stall",
    "stream_error",
    "text",
    "text_reply",
    "tool_reply",
    "tools",
    "wire_call",
]

if TYPE_CHECKING:
    from rho_adapters.fakes.anthropic_messages import ClaudeReply, FakeAnthropic
    from rho_adapters.fakes.approver import ScriptedApprover
    from rho_adapters.fakes.clock import FakeClock
    from rho_adapters.fakes.daytona import FakeDaytona
    from rho_adapters.fakes.durable import RecordingSteps
    from rho_adapters.fakes.line_search import InlineLineSearcher
    from rho_adapters.fakes.loopback import LoopbackServer
    from rho_adapters.fakes.memory_control import MemorySessions
    from rho_adapters.fakes.memory_executor import MemoryExecutor
    from rho_adapters.fakes.memory_store import MemorySessionStore
    from rho_adapters.fakes.replay_model import (
        RecordedApprover,
        RecordedTools,
        ReplayModel,
        load_recording,
    )
    from rho_adapters.fakes.run_queue import MemoryRunQueue
    from rho_adapters.fakes.scripted_model import (
        FunctionModel,
        ScriptedModel,
        ScriptExhausted,
        Turn,
        call,
        text,
        tools,
    )
    from rho_adapters.fakes.signals import ManualSignals
    from rho_adapters.fakes.spreadsheet import MemorySpreadsheetReader
    from rho_adapters.fakes.tool_source import ManualToolSource
    from rho_adapters.fakes.wire import (
        Fault,
        Reply,
        WireScriptExhausted,
        cut,
        drop,
        garbage,
        http_error,
        raw_reply,
        stall,
        stream_error,
        text_reply,
        tool_reply,
    )
    from rho_adapters.fakes.wire import (
        call as wire_call,
    )
    from rho_adapters.fakes.wire_transport import WireTransport


__getattr__ = lazy_names(__name__, _EXPORTS)
