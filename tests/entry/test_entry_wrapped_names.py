"""What a wrapper of ours calls of the caller's code is named by the caller's code.

Before: a documents' tool (``rho_entry.seed_api.tools.ToolHandler``, wrapped once in our
``DocumentHandler``) whose ``requires_approval`` raised was refused as "DocumentHandler.
policy_for raised ...", and one whose ``description`` or ``parameters`` raised when read again
for a later model call ended the run naming "DocumentHandler.description": our class, which
the caller never wrote. A listener or hook given as a ``functools.partial`` was named
"functools.partial".
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from rho_adapters.fakes import FakeClock, MemoryExecutor, ScriptedModel, call, text, tools
from rho_domain import events as ev
from rho_domain.errors import ConfigError, RhoError
from rho_domain.messages import ToolResultMessage
from rho_domain.run import RunStatus
from rho_entry import Agent, AgentConfig, Session
from rho_entry.seed_api.tools import ToolHandler, ToolInvocation, ToolOutput


class Deploy(ToolHandler):
    """A documents' tool whose ``broken`` member raises once the tool has run."""

    name = "deploy"

    def __init__(self, broken: str) -> None:
        self.broken = broken
        self.ran = False

    def _read(self, member: str, value: Any) -> Any:
        if member == self.broken and (self.ran or member == "requires_approval"):
            raise KeyError("stage")
        return value

    @property
    def description(self) -> str:
        return self._read("description", "deploys")  # type: ignore[no-any-return]

    @property
    def parameters(self) -> Mapping[str, Any]:
        return self._read("parameters", {"type": "object", "properties": {}})  # type: ignore[no-any-return]

    @property
    def requires_approval(self) -> bool:
        return self._read("requires_approval", False)  # type: ignore[no-any-return]

    async def handle(self, invocation: ToolInvocation) -> ToolOutput:
        self.ran = True
        return ToolOutput("deployed")


def _loud(prefix: str, event: ev.Event) -> None:
    raise RuntimeError(f"{prefix} listener down")


async def test_a_wrapped_callers_member_that_raises_is_named_by_the_callers_class() -> None:
    said = {
        "requires_approval": "Tool 'deploy' was not run: judging the call, "
        "Deploy.requires_approval raised KeyError: 'stage' (a bug in the tool, not in the "
        "arguments).",
        "description": "ConfigError: tool 'deploy': reading Deploy.description raised KeyError:",
        "parameters": "ConfigError: tool 'deploy': reading Deploy.parameters raised KeyError:",
    }
    for member, expected in said.items():
        seen: list[ev.Event] = []
        session = Session(
            Agent(AgentConfig(profile="eval"), tools=[Deploy(member)]),
            model=ScriptedModel([tools(call("deploy", {})), text("done")]),
            executor=MemoryExecutor(),
            clock=FakeClock(),
            on_event=functools.partial(_loud, "a"),
        )
        result = await session.run("go", on_event=seen.append)
        results = [m.content for m in session.state.messages if isinstance(m, ToolResultMessage)]
        told = results[0] if member == "requires_approval" else result.error
        assert told is not None
        assert told.startswith(expected), (member, told)
        failed = [e for e in seen if isinstance(e, ev.ListenerFailed)]
        assert [e.listener for e in failed] == ["test_entry_wrapped_names._loud"]
        await session.close()
    assert result.status is RunStatus.ERROR


class Unreadable(RhoError):
    """An exception whose message cannot be read (its ``__str__`` raises)."""

    def __str__(self) -> str:
        raise ValueError("no message")


def test_a_failure_whose_message_cannot_be_read_is_still_told(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: telling what the caller's code raised formatted ``{exc}``, so an exception whose
    ``__str__`` raised made the telling raise "ValueError: no message" instead, from
    ``Agent(tools=...)``, a hook reference whose module fails at import, and the server's
    internal error (the CLI's last-resort 'internal error' and a run's end did the same)."""
    from rho_domain.config import HookConfig
    from rho_domain.tools.base import READ_ONLY, ToolPolicy
    from rho_domain.tools.base import ToolHandler as DomainTool
    from rho_domain.tools.base import ToolOutput as DomainOutput
    from rho_entry.config.hook_refs import resolve_hooks
    from rho_entry.server.errors import as_api_error

    class Mine(DomainTool):
        name = "mine"
        description = "mine"

        @property
        def parameters(self) -> Mapping[str, Any]:
            raise Unreadable

        def policy_for(self, arguments: Mapping[str, Any]) -> ToolPolicy:
            return READ_ONLY

        async def handle(self, arguments: Mapping[str, Any], ctx: Any) -> DomainOutput:
            return DomainOutput(content="")

    unread = "Unreadable: (its message could not be read: ValueError in __str__)"
    with pytest.raises(ConfigError, match=re.escape(f"reading Mine.parameters raised {unread}")):
        Agent(AgentConfig(model="m"), tools=[Mine()])
    (tmp_path / "broken_hooks_4a1.py").write_text(
        "from test_entry_wrapped_names import Unreadable\nraise Unreadable\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ConfigError, match=re.escape(f"does not import: {unread} (is the")):
        resolve_hooks(HookConfig(before_tool=("broken_hooks_4a1:hook",)))
    assert str(as_api_error(Unreadable())) == unread
