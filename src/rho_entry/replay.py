"""Replay a recorded session as a test: ``replay(path).check()``.

The session stored at ``path`` (its directory, or its ``trace.jsonl``) is run again with the
same config: its prompts in order, the recorded model's answers (``ReplayModel``), the humans'
approvals as they were given (live ones through ``RecordedApprover``, ones given between runs
with ``resolve_approval`` at the same point), and either the recorded tool results
(``tools="recorded"``, the default: nothing runs) or the real tools (``tools="live"``, but a
``delegate`` call's recorded result: its sub-agent is a session of its own, replayed from its
own directory, never from the parent's recorded answers; only
under a profile within readonly unless ``overrides`` give one, without recorded databases or
auto-approval, and without its approvals: a live call that needs a human is answered "not
approved" unless the caller vouches for the recording's answers, ``recorded_approvals=True``;
a recording is data, not authority, and whoever wrote it wrote its answers). The replayed
behaviour steps (tool calls, arguments, policy decisions, results, answers; see
``rho_domain.replay_steps``) are compared
with the recorded ones, and the first difference is reported. ``overrides`` changes config
fields (a new profile, say) to see what would differ.

MCP servers the recording names are never started: with recorded tools, the MCP calls get
their recorded results through stand-ins with the recording's policies
(``rho_adapters.fakes.recorded_mcp``); with live tools, only servers ``overrides`` give run.

Not reproduced: a cancellation's timing and a model error (the replay runs on where the
recording stopped; the recorded model has no further answer, so the run ends in error without
a new step), operator directives (the recorded model's answers already include their effect),
and hooks: a recording's hook references are never imported (a recording is data), so a replay
runs without hooks unless ``overrides`` give ``hooks``; what the recorded hooks produced (a
rewritten call, a replaced result) is in the recording, and a call a hook denied is the
first divergence.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import attrs

from rho_adapters.fakes import FakeClock, ManualToolSource, MemoryExecutor
from rho_adapters.fakes.recorded_mcp import recorded_mcp_tools
from rho_adapters.fakes.replay_model import (
    RecordedApprover,
    RecordedTools,
    ReplayModel,
    load_recording,
)
from rho_domain import events as ev
from rho_domain.config import AgentConfig, HookConfig
from rho_domain.errors import ConfigError
from rho_domain.mcp_config import McpServerConfig
from rho_domain.permissions import PermissionProfile, readonly_profile
from rho_domain.ports.executor import Executor
from rho_domain.ports.store import SessionRecord
from rho_domain.replay_steps import Divergence, Step, first_divergence, steps
from rho_domain.value_methods import value_eq, value_hash, value_repr
from rho_entry.config.home import config_dir
from rho_entry.facade import Agent, Session
from rho_entry.run_modes import refuse_inside_a_loop

ToolSource = Literal["recorded", "live"]


@attrs.frozen(kw_only=True)
class ReplayReport:
    """What a replay found. ``divergence`` None means the replay behaved as recorded."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    session_id: str
    recorded: tuple[Step, ...]
    replayed: tuple[Step, ...]
    divergence: Divergence | None
    events: tuple[ev.Event, ...]

    @property
    def ok(self) -> bool:
        """True when every step matched."""
        return self.divergence is None

    def describe(self) -> str:
        """A short report: the step count, or where and how the replay diverged."""
        if self.divergence is None:
            return f"replay of {self.session_id}: {len(self.recorded)} steps, as recorded"
        return f"replay of {self.session_id}: {self.divergence.describe()}"

    def check(self) -> None:
        """Raise AssertionError with ``describe()`` when the replay diverged (for tests)."""
        if self.divergence is not None:
            raise AssertionError(self.describe())


@attrs.frozen(kw_only=True)
class _Run:
    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    prompt: str | None
    status: str
    answers_before: tuple[ev.ApprovalResolved, ...]


def replay(
    path: str | Path,
    *,
    tools: ToolSource = "recorded",
    overrides: Mapping[str, Any] | None = None,
    executor: Executor | None = None,
    recorded_approvals: bool = False,
) -> ReplayReport:
    """Blocking ``replay_async`` for tests and scripts. Raises ``SessionStateError`` inside a
    running event loop (async code, a notebook cell), naming ``await replay_async``."""
    refuse_inside_a_loop("replay", "await replay_async(...)")
    return asyncio.run(
        replay_async(
            path,
            tools=tools,
            overrides=overrides,
            executor=executor,
            recorded_approvals=recorded_approvals,
        )
    )


async def replay_async(
    path: str | Path,
    *,
    tools: ToolSource = "recorded",
    overrides: Mapping[str, Any] | None = None,
    executor: Executor | None = None,
    recorded_approvals: bool = False,
) -> ReplayReport:
    """Rerun the session stored at ``path`` and compare it with its recording.

    ``executor`` (live tools only) replaces the default one of the config (the local machine
    in ``working_dir``). With live tools a call that needs a human is not approved (the
    replay then diverges there) unless ``recorded_approvals``: the caller vouches that the
    recording's answers are a human's (its own recording), and they approve live calls.
    Raises StoreError when ``path`` is not a session, ConfigError for a bad ``tools`` or
    override.
    """
    if tools not in ("recorded", "live"):
        raise ConfigError(f"tools={tools!r}: expected 'recorded' or 'live'")
    recording = load_recording(path)
    config = recording.record.config
    if overrides:
        try:
            config = attrs.evolve(config, **overrides)
        except TypeError as exc:
            raise ConfigError(f"replay overrides: {exc}") from None
    if tools == "live":  # real tools run: the recording's profile is data, not authority
        # on this machine (no executor given), in the caller's directory, not the recording's
        here = str(Path.cwd()) if executor is None else None
        config = _live_config(recording.record, overrides or {}, workspace=here)
    if "hooks" not in (overrides or {}):
        # never imported from a recording (data); what its hooks produced is recorded
        config = attrs.evolve(config, hooks=HookConfig())
    # the recording's databases, never the environment's: a replay reruns what was recorded
    base = Agent(config, environ={})
    # live tools: a delegate call still gets its recorded result. Its sub-agent is another
    # session with its own recording; run live here, it would be fed the parent's recorded
    # answers (``replay`` the child's own directory to check it).
    registry = base.registry
    if tools == "recorded":  # the recorded MCP calls answered too, no server started
        stand_ins = recorded_mcp_tools(recording.events, _servers_of(config, base.profile))
        registry = RecordedTools(registry.with_tools(*stand_ins), recording.events)
    else:
        registry = RecordedTools(registry, recording.events, only=("delegate",))
    agent = Agent(
        config,
        profile=base.profile,
        registry=registry,
        system_prompt=base.system_prompt,
        environ={},
    )
    seen: list[ev.Event] = []
    # Live calls run for real: the recording's answers approve them only when the caller
    # vouches for them (a trace is data; whoever wrote it wrote its approvals).
    answered = tools == "recorded" or recorded_approvals
    approver = RecordedApprover(recording.events if answered else ())
    session = Session(
        agent,
        model=ReplayModel.from_events(recording.events),
        executor=executor if executor is not None or tools == "live" else MemoryExecutor(),
        clock=FakeClock(),
        approver=approver,
        on_event=lambda e: seen.append(e) if ev.is_persistent(e) else None,
        interrupt_on_approval=False,  # a recorded awaiting_approval run ends the same way
        # a trace is data: the MCP servers it names are never started by a replay (live
        # tools get servers only from ``overrides``: ``_live_config``)
        tool_source=None if tools == "live" else ManualToolSource(),
    )
    try:
        for run in _runs(recording.events):
            session.tools.approver = None if run.status == "awaiting_approval" else approver
            waiting = {c.id for c in session.state.awaiting_decision()}
            for answer in run.answers_before if answered else ():
                if answer.call_id in waiting:
                    session.resolve_approval(
                        answer.call_id, answer.approved, always=answer.always, reason=answer.reason
                    )
            await session.run(run.prompt)
    finally:
        await session.close()
    recorded, replayed = steps(recording.events), steps(seen)
    return ReplayReport(
        session_id=recording.record.id,
        recorded=recorded,
        replayed=replayed,
        divergence=first_divergence(recorded, replayed),
        events=tuple(seen),
    )


def _servers_of(config: AgentConfig, profile: PermissionProfile) -> dict[str, McpServerConfig]:
    """The MCP servers a recording's config and profile define (for their read-only tools)."""
    own = {n: s for n, s in profile.mcp_servers.items() if not s.is_reference}
    return {**config.mcp_servers, **own}


def _live_config(
    record: SessionRecord, overrides: Mapping[str, Any], *, workspace: str | None
) -> AgentConfig:
    """The config live tools run under: the recorded profile only within readonly (or the one
    ``overrides`` give), no recorded databases unless given, no inherited auto-approval, and,
    with ``workspace`` (the tools run on this machine), a recorded local ``working_dir`` only
    inside it (``rho_entry.resume_policy``). Raises ConfigError saying what the recording
    asks for."""
    from rho_entry.resume_policy import ResumeAuthority, authorise

    authority = ResumeAuthority(
        profiles=(readonly_profile(),),
        given={"hooks": HookConfig(), **overrides},
        databases={},
        # the recorded model is the only reader of the system prompt: nothing is sent
        system_prompt=record.config.system_prompt,
        hint="replay it with overrides={{'profile': {profile!r}}} to run its tools live under "
        "that profile",
        workspace=workspace,
        workspace_hint="replay it with overrides={{'working_dir': {path!r}}} to run its tools "
        "live there",
    )
    return authorise(record, authority, config_dir=config_dir(os.environ)).config


def _runs(events: tuple[ev.Event, ...]) -> list[_Run]:
    """The recorded runs: prompt, how each ended, and the approvals given before it."""
    runs: list[_Run] = []
    between: list[ev.ApprovalResolved] = []
    in_run = False
    for event in events:
        if isinstance(event, ev.RunStarted):
            runs.append(_Run(prompt=event.prompt, status="", answers_before=tuple(between)))
            between, in_run = [], True
        elif isinstance(event, ev.RunEnded) and runs:
            runs[-1] = attrs.evolve(runs[-1], status=event.status.value)
            in_run = False
        elif isinstance(event, ev.ApprovalResolved) and not in_run:
            between.append(event)
    return runs
