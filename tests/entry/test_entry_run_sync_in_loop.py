"""``run_sync`` called from async code (a notebook cell, a test, a server's handler) said
asyncio's "asyncio.run() cannot be called from a running event loop" and left "coroutine
'Session.run_sync.<locals>._run' was never awaited" behind; it now says what to call instead,
and nothing is left unawaited. ``replay`` (README: the blocking ``replay_async``) did the same
after that: "coroutine 'replay_async' was never awaited"."""

from __future__ import annotations

import gc
import warnings

import pytest

from rho_adapters.fakes import FakeClock, ScriptedModel, text
from rho_domain.errors import SessionStateError
from rho_entry import Agent, AgentConfig, Session
from rho_entry.replay import replay


async def test_run_sync_inside_a_running_loop_says_to_await_run() -> None:
    session = Session(Agent(AgentConfig()), model=ScriptedModel([text("hi")]), clock=FakeClock())
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with pytest.raises(SessionStateError, match=r"await session\.run\(\.\.\.\) instead"):
            session.run_sync("hello")
        gc.collect()
    assert [str(w.message) for w in seen if "never awaited" in str(w.message)] == []
    assert (await session.run("hello")).text == "hi"  # the session was left as it was
    await session.close()


async def test_replay_inside_a_running_loop_says_to_await_replay_async() -> None:
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with pytest.raises(SessionStateError, match=r"await replay_async\(\.\.\.\) instead"):
            replay("no-such-session/trace.jsonl")
        gc.collect()
    assert [str(w.message) for w in seen if "never awaited" in str(w.message)] == []
