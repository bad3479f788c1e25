"""The library's Agent, Session and State hold the domain's (composition), show its members,
and report the module users import them from (issue 25, item 5).

The user-visible API is unchanged (the seed documents' blocks run verbatim in
``test_seed_documents.py``); what changed is underneath: ``session.domain`` is a plain
``rho_domain.loop.session.Session`` built from a ``SessionPorts`` bundle, and every caller opens
sessions through ``open_session``.
"""

from __future__ import annotations

import pickle
import pydoc
from pathlib import Path

import pytest

import rho_agent
import rho_entry
from rho_adapters.fakes import (
    ManualSignals,
    MemoryExecutor,
    MemorySessionStore,
    ScriptedModel,
    text,
)
from rho_domain import agent as domain_agent
from rho_domain import state as domain_state
from rho_domain.errors import SessionNotFound
from rho_domain.loop import session as domain_session
from rho_domain.ports.signals import SignalSource
from rho_domain.ports.store import SignalingStore
from rho_entry.facade import open_session


@pytest.mark.parametrize("name", ["Agent", "AgentConfig", "Session", "SessionStore", "State"])
def test_public_classes_report_the_module_they_are_imported_from(name: str) -> None:
    cls = getattr(rho_agent, name)
    assert cls.__module__ == "rho_agent"
    assert cls.__qualname__ == name
    assert repr(cls) == f"<class 'rho_agent.{name}'>"
    assert f"class {name} in module rho_agent" in pydoc.plain(pydoc.render_doc(cls))
    assert pickle.loads(pickle.dumps(cls)) is cls  # noqa: S301 - our own bytes: found again where it says it lives
    assert getattr(rho_entry, name) is cls


def test_domain_objects_keep_their_module() -> None:
    assert rho_agent.RunResult.__module__ == "rho_domain.run"
    assert rho_agent.PermissionProfile.__module__ == "rho_domain.permissions"


async def test_a_library_session_drives_a_domain_session(tmp_path: Path) -> None:
    agent = rho_agent.Agent(rho_agent.AgentConfig(working_dir=str(tmp_path)))
    assert isinstance(agent.definition, domain_agent.Agent)
    assert not isinstance(agent, domain_agent.Agent)
    model = ScriptedModel([text("hello")])
    session = rho_agent.Session(agent, model=model, executor=MemoryExecutor())
    assert type(session.domain) is domain_session.Session
    assert session.domain.agent is agent.definition
    assert session.agent is agent
    assert isinstance(session.state, rho_agent.State)
    assert type(session.state.core) is domain_state.State
    assert session.state.core is session.domain.state
    assert session.model is model
    assert session.ports.model is model
    result = await session.run("hi")
    assert result.text == "hello"
    assert session.state.messages is session.domain.state.messages  # read through, not copied
    assert session.last_result is result
    await session.close()


def test_what_the_wrappers_show_cannot_be_replaced(tmp_path: Path) -> None:
    agent = rho_agent.Agent(rho_agent.AgentConfig(working_dir=str(tmp_path)))
    with pytest.raises(AttributeError):
        agent.config = rho_agent.AgentConfig()  # type: ignore[misc]
    state = rho_agent.State()
    with pytest.raises(AttributeError):
        state.messages = []  # type: ignore[misc]
    session = rho_agent.Session(agent, model=ScriptedModel([]), executor=MemoryExecutor())
    with pytest.raises(AttributeError, match=r"model.*cannot be replaced"):
        session.model = ScriptedModel([])


async def test_open_session_opens_a_new_one_or_continues_a_stored_one(tmp_path: Path) -> None:
    store = MemorySessionStore()
    agent = rho_agent.Agent(rho_agent.AgentConfig(working_dir=str(tmp_path), profile="readonly"))
    first = await open_session(
        agent, store=store, model=ScriptedModel([text("one")]), executor=MemoryExecutor()
    )
    await first.run("first")
    await first.close()
    again = await open_session(
        None,
        resume=first.id,
        store=store,
        model=ScriptedModel([text("two")]),
        executor=MemoryExecutor(),
    )
    assert again.id == first.id
    assert [m.role for m in again.state.messages] == ["user", "assistant"]
    assert (await again.run("second")).text == "two"
    await again.close()
    with pytest.raises(SessionNotFound):
        await open_session(None, resume="nope", store=store, model=ScriptedModel([]))
    with pytest.raises(TypeError, match="give an agent"):
        await open_session(None, store=store)


class _SignalingMemoryStore(MemorySessionStore, SignalingStore):
    """A store adapter of someone else's: it carries its sessions' signals itself."""

    def __init__(self) -> None:
        super().__init__()
        self.own_signals = ManualSignals()

    def signals(self) -> SignalSource:
        return self.own_signals


def test_a_store_that_carries_signals_gets_them_wired_without_the_wiring_knowing_it(
    tmp_path: Path,
) -> None:
    """The change walk's store adapter: its module, the package's exports, the contract suite;
    nothing in the wiring names it."""
    from rho_adapters.store import FileSessionStore, FileSignals
    from rho_entry import wiring

    agent = rho_agent.Agent(rho_agent.AgentConfig(working_dir=str(tmp_path))).definition
    store = _SignalingMemoryStore()
    wired = wiring.build_ports(
        agent, store=store, model=ScriptedModel([]), executor=MemoryExecutor()
    )
    assert wired.signals is store.own_signals
    plain = wiring.build_ports(
        agent, store=MemorySessionStore(), model=ScriptedModel([]), executor=MemoryExecutor()
    )
    assert plain.signals is None
    for files in (FileSessionStore(tmp_path / "a"), rho_agent.SessionStore(tmp_path / "b")):
        ports = wiring.build_ports(
            agent, store=files, model=ScriptedModel([]), executor=MemoryExecutor()
        )
        assert isinstance(ports.signals, FileSignals)
