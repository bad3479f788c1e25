"""Reopening a stored session: what ``Session.resume`` (and so ``facade.open_session`` given
``resume=``) does.

``open_stored`` opens the session in its store (a store URL opened here is closed with the
session), authorises its stored config (``resume_policy.authorise``: data, not authority),
rebuilds its state from the trace (up to a replayed run's ``run_start``), forgets the
approvals the trace records and builds the session with ``build`` (``rho_entry.session``'s,
which gives its ``Session`` an ``Agent`` of the authorised config).
It returns the session and the notices of what was not inherited. On any failure, the store's
lock is released and a store opened here is closed before the error propagates.

Imported with the first resume: a new session never loads it.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast

import attrs

from rho_entry.config.home import config_dir
from rho_entry.config.stores import close_store
from rho_entry.resume_policy import authorise, default_authority
from rho_entry.seed_api.state import State as DocumentState

if TYPE_CHECKING:
    from rho_domain import events as ev
    from rho_domain.hooks import Hooks
    from rho_domain.loop.journal import Journal
    from rho_domain.loop.session_ports import Closeable
    from rho_domain.ports.executor import Executor
    from rho_domain.ports.store import SessionStore
    from rho_entry.resume_policy import ResumeAuthority


class ClosesWith(Protocol):
    """What ``open_stored`` needs of the session it builds (the library's ``Session``)."""

    def close_with(self, resource: Any) -> None:
        """Close ``resource`` when the session closes."""
        ...

    @property
    def executor(self) -> Executor:
        """The executor its tools run on."""
        ...


S = TypeVar("S", bound=ClosesWith)
log = logging.getLogger(__name__)


async def open_stored(
    resume: str,
    *,
    store: SessionStore | str | os.PathLike[str],
    overrides: Mapping[str, Any] | None,
    authority: ResumeAuthority | None,
    hooks: Hooks | None,
    replay_run: str | None,
    options: Mapping[str, Any],
    build: Callable[..., S],
) -> tuple[S, tuple[str, ...]]:
    """The stored session ``resume`` (an id, unique prefix or ``latest``), built by
    ``build(config, hooks=hooks, **keywords)`` from its authorised config (``options`` among
    the keywords), and the notices of what it did not inherit; see ``facade.open_session``
    for what is inherited and what raises."""
    if not isinstance(resume, str):  # it failed deep in the store, naming no argument
        raise TypeError(
            f"Session.resume: session_id must be a str (an id, a prefix of one, latest or a "
            f"session directory), not {type(resume).__name__} {resume!r:.80}; nothing was opened"
        )
    opened: SessionStore | None = None  # a store opened here from a URL: the session's own
    if isinstance(store, str | os.PathLike):  # a Path was used as a store ("invalid mode")
        from rho_entry.config.stores import session_store

        store = opened = session_store(os.fspath(store), os.environ)
    if authority is None:
        authority = default_authority(overrides or {}, options, os.environ)
    elif overrides:
        authority = attrs.evolve(authority, given={**authority.given, **overrides})
    if hooks is not None:  # functions given again stand for the references stored
        authority = attrs.evolve(authority, hook_names=authority.hook_names | hooks.names)
    try:
        record, events = await store.open(resume)
    except BaseException:
        await close_store(opened)
        raise
    try:
        allowed = authorise(record, authority, config_dir=config_dir(os.environ))
        before, replay = _split_at_run(events, replay_run)
        state = DocumentState.from_events(before)
        notices = (*allowed.notices, *_forgotten(record.id, state))
        session = build(
            # the databases were decided by ``authorise``: the resumer's, or none
            allowed.config,
            hooks=hooks,
            store=store,
            session_id=record.id,
            state=state,
            created=True,
            parent_id=record.parent_id,
            labels=record.labels,
            replay=replay,
            **options,
        )
    except BaseException:
        await store.release(record.id)
        await close_store(opened)
        raise
    if opened is not None and hasattr(opened, "aclose"):
        session.close_with(cast("Closeable", opened))  # after its release, as wiring's own
    _expect_own_sandbox(session.executor, before)
    return session, notices


def _expect_own_sandbox(executor: Executor, events: Sequence[ev.Event]) -> None:
    """Tell a resumed session's Daytona executor the sandbox its trace names (the last
    placement with an id: a ``placed`` event, recorded the moment the sandbox was made, or a
    run's start or end), which alone it reattaches: found by its labels, another sandbox
    that anyone in the organisation labelled so was taken (``DaytonaExecutor.expect``)."""
    from rho_domain.events import RunEnded, RunStarted
    from rho_domain.placement import Placement, well_formed
    from rho_entry.executor_wiring import daytona_of

    daytona = daytona_of(executor)
    if daytona is None or not daytona.settings.reattach:
        return
    for event in reversed(events):
        named = isinstance(event, RunStarted | RunEnded) or event.kind == "placed"
        where: Placement | None = getattr(event, "placement", None) if named else None
        if where is None or where.backend != "daytona" or where.id is None:
            continue
        if not well_formed(where.id):  # the trace is data: as if it named none, and said
            log.warning(
                "the trace names a Daytona sandbox id that is no id (%r...); "
                "it is read as naming none",
                where.id[:40],
            )
            return
        daytona.expect(where.id)
        return


def _split_at_run(
    events: Sequence[ev.Event], run_id: str | None
) -> tuple[Sequence[ev.Event], Sequence[ev.Event]]:
    """The events before ``run_id``'s ``run_start`` and those from it on (all and none when
    the trace does not hold that run)."""
    from rho_domain.events import RunStarted

    if run_id is not None:
        for index, event in enumerate(events):
            if isinstance(event, RunStarted) and event.run_id == run_id:
                return events[:index], events[index:]
    return events, ()


def _forgotten(session_id: str, state: DocumentState) -> tuple[str, ...]:
    """Notices for the recorded approvals a resume does not inherit (``resume_policy``)."""
    again, tools = state.forget_recorded_approvals()
    notices: list[str] = []
    if again:
        notices.append(
            f"session {session_id} records approvals of {len(again)} call(s) not yet run "
            f"({', '.join(again)}); they are asked again (approve them with --approve)"
        )
    if tools:
        notices.append(
            f"session {session_id} records 'always' for {', '.join(tools)}; that is not "
            "inherited (answer 'always' again, or pass -y)"
        )
    return tuple(notices)


async def workspace_note(executor: Executor) -> str | None:
    """What a resumed session's user and model are told about its workspace: a Daytona
    sandbox gone since (deleted when the session closed, or by Daytona's auto-delete) and
    replaced by a new, empty one, else None. Its sandbox is looked for now rather than at the
    first tool call, so both hear it before the next run; when Daytona cannot be asked, the
    first tool call says why (logged here). ``ConfigError`` when the resumer's settings
    contradict the sandbox (it was built from another Dockerfile or snapshot than they name):
    raised, so the resume is refused before a run saying what to do."""
    from rho_domain.errors import ConfigError, RhoError
    from rho_entry.executor_wiring import daytona_of

    daytona = daytona_of(executor)
    if daytona is None or not daytona.settings.reattach:  # reattach: this session's own
        return None
    try:
        return await daytona.attach()
    except ConfigError:
        raise
    except RhoError as exc:
        log.warning("could not reattach the session's Daytona sandbox yet: %s", exc)
        return None


async def with_workspace_note(
    executor: Executor,
    journal: Journal,
    notices: tuple[str, ...],
    *,
    close: Callable[[], Awaitable[None]],
) -> tuple[str, ...]:
    """``notices`` with what a resumed session's user is told about its workspace (its
    ``executor``'s ``workspace_note``), which also joins its conversation through ``journal``
    as a directive, so the model hears it before the next run; ``notices`` alone when there
    is nothing to tell. A resume refused there (``workspace_note``'s ``ConfigError``) calls
    ``close`` (the session's lock let go) before it is raised."""
    from rho_domain.messages import UserMessage

    try:
        note = await workspace_note(executor)
    except BaseException:  # refused (its sandbox is another build's): the lock goes
        await close()
        raise
    if note is None:
        return notices
    said = f"Note from rho-agent on resuming this session: {note}."
    await journal.message(UserMessage(said, origin="directive"))
    return (*notices, note)
