"""Public fakes for every port, for testing agents without a network, disk or human.

- ``ScriptedModel`` / ``FunctionModel`` (ChatModel): replay turns or call your function;
  build turns with ``text(...)``, ``tools(call(...), ...)`` or ``Turn(...)`` (errors, cut or
  hanging streams, malformed arguments).
- ``MemoryExecutor`` (Executor): a dict workspace with scripted commands.
- ``MemorySessionStore`` (SessionStore), ``FakeClock`` (Clock), ``ManualSignals``
  (SignalSource), ``ScriptedApprover`` (Approver).

Each records what happened (``requests``, ``runs``, ``events(id)``, ...) so tests assert on
state, not on mock calls.
"""

from rho_adapters.fakes.approver import ScriptedApprover
from rho_adapters.fakes.clock import FakeClock
from rho_adapters.fakes.memory_executor import MemoryExecutor
from rho_adapters.fakes.memory_store import MemorySessionStore
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

__all__ = [
    "FakeClock",
    "FunctionModel",
    "ManualSignals",
    "MemoryExecutor",
    "MemorySessionStore",
    "ScriptExhausted",
    "ScriptedApprover",
    "ScriptedModel",
    "Turn",
    "call",
    "text",
    "tools",
]
