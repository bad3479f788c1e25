"""How a runtime opens the sessions its handles run: its own, a new one, a stored one.

``SessionOpener`` holds what every opening needs (the runtime's agent, store, ports, whether
to trace, the profiles and roots a stored session may be continued with) and the runtime's own
session (``own_id``, and without a store the State its last dispatch left). ``open`` opens a
new session or resumes a stored one through the one ``facade.open_session`` (a resumed one
under ``authority()``: the resumer's profile, endpoint, hooks and MCP servers, never the
stored ones); ``open_own`` continues the own session. Handles answer approvals themselves, so
a session opened here never raises ``ApprovalInterrupt``. ``AgentRuntime`` (``core.py``)
decides where a dispatch runs and when; this module only opens.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from rho_domain.agent import Agent as DomainAgent
from rho_domain.errors import ConfigError, SessionNotFound
from rho_domain.permissions import PermissionProfile
from rho_domain.ports.store import SessionStore
from rho_domain.run import new_id, spelled_whole, takes_exact
from rho_domain.state import State
from rho_domain.value_methods import value_eq, value_repr
from rho_entry.facade import Session, open_session
from rho_entry.seed_api.approval_callback import ApprovalCallback

if TYPE_CHECKING:
    from rho_entry.resume_policy import ResumeAuthority


@attrs.define(kw_only=True)
class SessionOpener:
    """The sessions of one runtime, opened (see the module docstring)."""

    __repr__ = value_repr
    __eq__ = value_eq

    agent: DomainAgent
    store: SessionStore | None
    ports: Mapping[str, Any]
    trace: bool
    profiles: tuple[PermissionProfile, ...]
    roots: tuple[Path, ...]
    own_id: str = attrs.field(factory=new_id)
    # the own session's conversation between dispatches, when no store keeps it; None
    # until its first dispatch opened it
    _own_state: State | None = None

    def own_opened(self) -> bool:
        """The own session has run (or opened for) a prompt: there is something to continue."""
        return self._own_state is not None

    async def open_own(
        self,
        listener: Any,
        labels: Mapping[str, str] | None,
        output_schema: Mapping[str, Any] | None,
        approval_callback: ApprovalCallback | None,
    ) -> Session:
        """The runtime's own session: new on its first dispatch; then, with a store, reopened
        from it as any stored session is (its lock, its trace); without one, on the State the
        last dispatch left."""
        if self._own_state is not None and self.store is not None:
            try:
                return await self.open(
                    self.own_id, True, listener, labels, output_schema, approval_callback
                )
            except SessionNotFound:
                pass  # its first run never started: nothing was stored
        session = await self.open(
            self.own_id,
            False,
            listener,
            labels,
            output_schema,
            approval_callback,
            state=self._own_state,
        )
        self._own_state = session.domain.state
        return session

    async def open(
        self,
        session_id: str,
        resume: bool,
        listener: Any,
        labels: Mapping[str, str] | None,
        output_schema: Mapping[str, Any] | None,
        approval_callback: ApprovalCallback | None,
        *,
        state: State | None = None,
    ) -> Session:
        """Session ``session_id``: resumed from the store (``resume``) under ``authority()``
        with this runtime's hooks, else new (on ``state`` when given), its answers shaped by
        ``output_schema`` when given; ``listener`` gets its events."""
        # handles answer approvals themselves (handle.approve): no ApprovalInterrupt
        ports = dict(
            self.ports,
            on_event=listener,
            approval_callback=approval_callback,
            interrupt_on_approval=False,
        )
        schema = {} if output_schema is None else {"output_schema": output_schema}
        if resume:  # the stored session's id and labels, the resumer's authority
            assert self.store is not None
            authority = self.authority()
            authority = attrs.evolve(authority, given={**authority.given, **schema})
            try:
                session = await open_session(
                    None,
                    # whole: a store reads a short id as a prefix (``nightly`` beside
                    # ``nightly-2``), which named another session or none (ambiguous)
                    resume=spelled_whole(session_id),
                    store=self.store,
                    authority=authority,
                    hooks=self.agent.hooks,  # this runtime's, never the directory's
                    **ports,
                )
            except SessionNotFound:
                if takes_exact(session_id):
                    raise
                raise ConfigError(exact_id(session_id)) from None  # a prefix, or nothing
            if session.id != session_id:  # never a prefix now; kept as the last word
                await session.close()
                raise ConfigError(exact_id(session_id, session.id))
        else:
            agent = self.agent
            if output_schema is not None:  # the same agent, its answer shaped for this prompt
                agent = attrs.evolve(
                    agent, config=attrs.evolve(agent.config, output_schema=output_schema)
                )
            session = await open_session(
                agent,
                store=self.store,
                session_id=session_id,
                labels=labels,
                state=state,
                **ports,
            )
        if self.trace:
            from rho_entry.otel import instrument_if_configured

            instrument_if_configured(session)
        return session

    def authority(self) -> ResumeAuthority:
        """What a stored session continued here may run with: a profile within one this
        runtime allows (by content), this runtime's endpoint, auto-approval and MCP servers, a
        working directory in its own (or in ``allowed_roots``), never the stored ones
        (``rho_entry.resume_policy``)."""
        from rho_entry.config.env_settings import base_url_of
        from rho_entry.resume_endpoint import Endpoint
        from rho_entry.resume_limits import limits_of
        from rho_entry.resume_policy import ResumeAuthority
        from rho_entry.wiring import working_dir_of

        config = self.agent.config
        roots = self.roots or (Path(working_dir_of(config)),)
        endpoint = None
        if self.ports.get("model") is None:
            endpoint = attrs.evolve(
                Endpoint.of(config, os.environ),
                base_url=base_url_of(config, os.environ),
            )
        return ResumeAuthority(
            profiles=self.profiles,
            # the runtime's own MCP servers, never the stored ones
            given={"auto_approve": config.auto_approve, "mcp_servers": config.mcp_servers},
            endpoint=endpoint,
            databases=None if self.ports.get("databases") is not None else config.databases,
            roots=roots if config.backend == "local" else None,
            hint="allow a profile that grants it (create_runtime(allowed_profiles=[...]), "
            "rho-agent serve --allow-profile {profile})",
            endpoint_hint="configure the runtime's {field} to match it",
            hook_names=self.agent.hooks.names,
            hooks_hint="give the runtime's agent those hooks",
            system_prompt=config.system_prompt,
            system_prompt_hint="give the runtime's agent the system prompt {path}",
            **limits_of(config),
            backend=config.backend,
            backend_hint="configure the runtime's backend as {backend!r} to run it there",
        )


def exact_id(session_id: str, resolved: str | None = None) -> str:
    """Why ``session_id=`` does not name a stored session exactly: a runtime's caller passes
    ids from its own callers (a service's requests), so a prefix, ``latest`` or a path (a
    person's shorthand at the CLI) would continue another session than the one named."""
    found = f", which the store resolves to session {resolved}" if resolved else ""
    return (
        f"session_id={session_id!r} is not a stored session's exact id{found}: dispatch_prompt "
        "continues a session by its whole id (a prefix, latest or a path is the CLI's "
        "shorthand); nothing was run"
    )
