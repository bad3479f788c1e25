"""Session: owns the ports and the conversation State, and runs its prompts.

Its public API is here; what each call does lives in the module that owns it: what a session is
made of (its ports, the constructor, ``from_ports``, ``related``) in ``session_core``, one run
at a time and the refusals that keep it so in ``run_gate``, a run's frame in
``run_boundaries.bounded_run``, a compaction asked for in ``compaction_run.compact_asked``, an
approval answered between runs in ``tool_approval.record_answer``, closing in
``Journal.release``, children in ``sub_agents``.

One run, top to bottom: ``begin_run`` → the turns (``rho_domain.loop.turns.Turns``: add the
user message → (pause, cancel, compaction, directives) → stream the model call → assemble the
assistant message → for each tool call: policy → approval → execute → append the result →
loop until a turn has no tool calls) → ``end_run``, however the run ended.

Every state change is an event, applied to State, persisted and announced by the Journal.
Replaying the persisted events rebuilds the session exactly.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from rho_domain import events as ev
from rho_domain.agent import Agent
from rho_domain.loop.compaction_run import compact_asked
from rho_domain.loop.journal import Listener
from rho_domain.loop.listeners import refuse_non_listener
from rho_domain.loop.run_boundaries import bounded_run
from rho_domain.loop.run_gate import run_arguments
from rho_domain.loop.session_core import SessionCore
from rho_domain.loop.tally import RunTally
from rho_domain.run import RunResult, new_id

if TYPE_CHECKING:
    from rho_domain.compaction_values import CompactResult, CompactTrigger
    from rho_domain.ports.approver import Approver


class Session(SessionCore):
    """The execution context of an agent: runs prompts, keeps State, obeys signals.

    All ports are passed in, one by one or as a ``SessionPorts`` bundle (``from_ports``;
    ``rho_entry``'s ``open_session`` wires defaults). ``state`` with ``created=True`` resumes a
    stored session. One run at a time. ``tool_source``
    serves tools that may change (MCP servers): ``agent`` then includes the ones it served
    last, taken at each run's start and before each model call (``tool_refresh``).
    ``steps`` makes its runs durable (each model call and tool call one step,
    ``durable_steps``); ``replay``, the trace's events from the run being executed again
    (after a dead worker), is retraced by the Journal instead of written twice.
    """

    def set_approver(self, approver: Approver | None) -> None:
        """Ask ``approver`` from now on (None: a call that needs an answer ends the run
        ``awaiting_approval``); a run in progress asks it from its next tool call."""
        self.approver = approver
        self.tools.approver = approver

    def cancel(self) -> None:
        """Stop the current run at its next checkpoint; a running tool is killed."""
        self.control.cancel()

    def resolve_approval(
        self,
        call_id: str,
        approved: bool,
        *,
        always: bool = False,
        reason: str = "",
        digest: str | None = None,
    ) -> None:
        """Answer a pending approval; the next ``run()`` (without a prompt) continues.
        ``reason`` (for a rejection) reaches the model in the call's result.

        ``digest`` binds the answer to the call its answerer was shown
        (``rho_domain.call_digest``): a surface that showed the call from stored data gives
        it, and a call held under ``call_id`` with another digest raises ``CallChanged``,
        nothing answered (the call still waits). None: the caller holds this session's call
        itself (in-process), so there is nothing between the showing and the answer."""
        from rho_domain.loop.tool_approval import record_answer  # with the first answer

        place = self.executor.working_dir  # where the call runs now, not what was stored
        record_answer(
            self.journal,
            call_id,
            approved,
            always=always,
            reason=reason,
            digest=digest,
            place=place,
        )

    async def run(
        self,
        prompt: str | None = None,
        *,
        max_turns: int | None = None,
        on_event: Listener | None = None,
        run_id: str | None = None,
    ) -> RunResult:
        """Run until the model answers without tool calls, or a limit, signal or error.

        ``max_turns`` None takes the config's; 0 means no limit. ``run_id`` names the run (a
        durable run's is its queue's; otherwise a new id). Model, tool and store failures,
        and a context window too small for the system prompt and tools (``ConfigError``), end
        the run with status ``error`` (never raised). A model repeating a tool call ends it
        ``stuck`` once told (``rho_domain.loop.stuck``); with an ``output_schema`` the final answer
        is parsed and checked, corrected once (``rho_domain.loop.output_check``).
        Raises ``SessionStateError`` if a run or a ``compact()`` is already in progress, or
        if the session is stored and was closed (its lock released: resume it); ``TypeError``
        or ``ValueError`` for a prompt or ``max_turns`` of the wrong kind (``run_arguments``), and
        ``TypeError`` for an ``on_event`` that is not callable.
        """
        run_arguments(prompt, max_turns)
        refuse_non_listener(on_event, "Session.run")
        self._gate.open(stored=self.journal.created and self.store is not None)
        tally = self._gate.tally = RunTally(
            id=run_id or new_id(),
            started=self.clock.monotonic(),
            tools_before=self.state.tool_calls,
        )
        if on_event is not None:
            self.journal.listeners.append(on_event)

        def ended() -> None:
            if on_event is not None:
                self.journal.listeners.remove(on_event)
            self._gate.ended()

        return await bounded_run(
            self,
            tally,
            prompt,
            max_turns,
            record=self._record,
            refresh_tools=self._refresh_tools,
            ended=ended,
        )

    async def stream(
        self, prompt: str | None = None, *, max_turns: int | None = None
    ) -> AsyncIterator[ev.Event]:
        """Run and yield every event as it happens; ``last_result`` then holds the result.
        Leaving the loop early cancels the run."""
        from rho_domain.loop.event_stream import stream_events  # with the first stream

        run = self.run
        async for event in stream_events(
            lambda listener: run(prompt, max_turns=max_turns, on_event=listener), self.cancel
        ):
            yield event

    async def compact(
        self, custom_instructions: str = "", *, trigger: CompactTrigger = "manual"
    ) -> CompactResult:
        """Summarise old history through the model and replace it.

        When nothing was compacted (too little history, or a summary that would not make the
        context smaller) the result says so: empty ``summary``, the reason in ``note``.
        Raises ``ModelError`` when the summary fails; history is then left untouched.
        Raises ``SessionStateError`` while a run or another compaction is in progress, while
        tool calls wait for approval (``compact_asked``), or if the session is stored and was
        closed (as ``run``)."""
        with self._gate.compacting(stored=self.journal.created and self.store is not None):
            return await compact_asked(
                self.agent, self.model, self.journal, custom_instructions, trigger
            )

    async def fork(self, *, at: int, agent: Agent | None = None) -> Session:
        """A new session whose history is this one's turns 1..``at`` (``fork.turns`` numbers
        them), sharing this session's ports, with ``agent`` (another model, say) or this one's.

        The new session records this one as its parent (``parent_id``, and the labels
        ``forked_from`` and ``fork_at``) and, with a store, is saved at once. This session is
        not changed. Raises SessionStateError for a turn that is not in the history or falls
        inside a tool batch (refused, naming the batch's boundaries; see ``rho_domain.fork``).
        """
        from rho_domain.fork import fork_labels, history_until  # with the first fork

        history = history_until(self.state.messages, at)
        child = self.related(
            agent if agent is not None else self.agent,
            signals=self.signals,
            labels=fork_labels(self.id, at, self.labels),
        )
        for message in history:
            child.journal.record(ev.MessageAdded(at=self.clock.now(), message=message))
        await child.save()
        return child

    async def save(self) -> None:
        """Create the stored session now (otherwise its first run does) and write its events.
        Without a store, does nothing."""
        await self.journal.create(self._record())
        await self.journal.flush()

    async def close(self) -> None:
        """Persist anything pending and release the store's lock; tell listeners that end with
        the session (``EndsWithSession``); close the adapters built for it (``owned``; their
        failures to close are not raised). Idempotent. A stored session closed does not
        run again (``SessionStateError``: resume it); one without a store does.

        Called while a run is in progress (another task's), the run is cancelled and its end
        awaited first: released under it, the lock would let another process take the
        session while this run still writes. A run on another event loop (another thread)
        cannot be awaited from here: ``SessionStateError``, nothing closed."""
        await self._gate.close(self.control)
        try:
            await self.journal.release()
        finally:
            owned, self._owned = self._owned, ()
            for resource in owned:
                with contextlib.suppress(Exception):
                    await resource.aclose()

    async def __aenter__(self) -> Session:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()
