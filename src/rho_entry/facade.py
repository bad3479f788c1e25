"""The library facade: Agent, AgentConfig and Session with real adapters wired by default.

``Agent(config)`` (``rho_entry.agent``) resolves the profile, builds the tool registry and
renders the system prompt; it holds no conversation. ``Session(agent)``
(``rho_entry.session``) runs prompts; every port can be overridden by keyword (``model=``,
``executor=``, ``store=``, ``clock=``, ``signals=``, ``approver=``, ``databases=``). Defaults
are built in ``rho_entry.wiring``, the one composition root. ``open_session``, here, opens a
new session or continues a stored one (``Session.resume``, through ``rho_entry.reopening``),
for every caller.

``Agent`` and ``Session`` hold the domain's (``definition``, ``domain``) and never subclass
them: the loop's objects stay the domain's, and the facade adds only what it owns (wiring,
the documents' approval interrupt, ``run_sync``: ``rho_entry.run_modes``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from rho_entry.agent import Agent, AgentConfig
from rho_entry.session import Session

if TYPE_CHECKING:
    from rho_domain import agent as domain_agent
    from rho_domain.hooks import Hooks
    from rho_domain.ports.store import SessionStore
    from rho_entry.resume_policy import ResumeAuthority

__all__ = ["Agent", "AgentConfig", "Session", "open_session"]


async def open_session(
    agent: Agent | domain_agent.Agent | None,
    *,
    resume: str | None = None,
    store: SessionStore | str | os.PathLike[str] | None = None,
    overrides: Mapping[str, Any] | None = None,
    authority: ResumeAuthority | None = None,
    hooks: Hooks | None = None,
    replay_run: str | None = None,
    **options: Any,
) -> Session:
    """A new session of ``agent``, or (``resume`` given: an id, unique prefix or ``latest``)
    the stored one continued: the one way every caller (the CLI, the runtime and the server,
    ``SessionStore``, ``Session.resume``) opens a session. ``options`` are ``Session``'s
    keywords (ports, ``session_id``, ``labels``, ``on_event``, ``approval_callback``...).

    Resuming, the stored config is data, not authority (``rho_entry.resume_policy``): its
    profile must be within what ``authority`` allows (by content; default: readonly, or the
    ``profile`` override), its endpoint and databases must be the caller's (from the
    environment, or given again in ``overrides``), and auto-approval is off unless
    ``overrides`` turn it on; approvals its trace records for calls not yet run, and
    "always" answers, are forgotten (they are asked again). ``overrides`` replace individual
    config fields (e.g. ``{"model": ...}``); every other saved setting is kept. Tool calls
    left without a result get an interrupted result. ``resume_notices`` says what was not
    inherited. Hooks are not taken from the directory either: ``hooks`` (functions) and
    ``overrides={'hooks': HookConfig(...)}`` (references) are the ones it runs; a stored
    session naming a hook that is in neither is refused (a new session's hooks are its
    agent's). ``replay_run`` (a durable run executed again after its worker died): when the
    trace holds that run's ``run_start``, the session's state is the trace before it and the
    events from it on are replayed by the run (``Session(replay=...)``). Raises
    ``ConfigError`` when the stored session asks for more than is allowed,
    ``SessionNotFound`` or ``SessionLocked`` from the store.
    """
    if resume is None:
        if agent is None:
            raise TypeError("open_session: give an agent, or resume= a stored session")
        return Session(agent, store=store, **options)
    if store is None:
        raise TypeError("open_session: resuming needs the store= the session is kept in")
    return await Session.resume(
        resume,
        store=store,
        overrides=overrides,
        authority=authority,
        hooks=hooks,
        replay_run=replay_run,
        **options,
    )
