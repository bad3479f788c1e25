"""The runtime-checkable protocols a Session asks about at each build and close
(``SignalingStore`` for its store, ``EndsWithSession`` for each listener): decided without the
protocol's ``isinstance`` where the class or a missing member already says (that check walks
the protocol's attributes and the ABC's hooks at every call, 20-70 µs; a service builds and
closes a Session per request, issue 33), with the same answers."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from types import FrameType

from domain_support import make_session

from rho_adapters.fakes import MemorySessionStore, text
from rho_adapters.store import FileSessionStore
from rho_domain import events as ev
from rho_domain.loop.listeners import ends_with_session
from rho_domain.ports.store import signals_of
from rho_entry.wiring import build_signals


def protocol_checks(work: Callable[[], object]) -> int:
    """How many protocol ``isinstance`` checks ``work()`` made (a profile hook on typing's
    own ``__instancecheck__``: what ran, not a stand-in for it)."""
    checks = 0
    typing_file = sys.modules["typing"].__file__

    def hook(frame: FrameType, event: str, _arg: object) -> None:
        nonlocal checks
        code = frame.f_code
        if event == "call" and code.co_name == "__instancecheck__":
            checks += code.co_filename == typing_file

    sys.setprofile(hook)
    try:
        work()
    finally:
        sys.setprofile(None)
    return checks


class _Closing:
    def __init__(self) -> None:
        self.closed = 0

    def __call__(self, event: ev.Event) -> None:
        pass

    def session_closed(self) -> None:
        self.closed += 1


class _Blocked(_Closing):
    session_closed = None  # type: ignore[assignment]  # the protocol counts it absent


def test_a_file_store_s_signals_are_found_by_its_class(tmp_path: Path) -> None:
    store = FileSessionStore(tmp_path)
    assert build_signals(store) is not None
    assert protocol_checks(lambda: build_signals(store)) == 0  # was 1 a Session
    assert build_signals(MemorySessionStore()) is None


def test_a_store_whose_instance_has_signals_still_counts(tmp_path: Path) -> None:
    store = MemorySessionStore()
    given = FileSessionStore(tmp_path).signals()
    store.signals = lambda: given  # type: ignore[attr-defined]
    assert signals_of(store) is given


def test_a_function_listener_is_passed_over_at_close_without_the_protocol_check() -> None:
    def plain(event: ev.Event) -> None:
        pass

    assert protocol_checks(lambda: ends_with_session(plain)) == 0  # was 1 a listener
    assert not ends_with_session(_Blocked())
    closing = _Closing()
    assert ends_with_session(closing)


async def test_a_closing_listener_is_still_told_and_a_blocked_one_not() -> None:
    closing, blocked = _Closing(), _Blocked()
    session = make_session([text("done")])
    session.journal.listeners.extend([lambda event: None, closing, blocked])
    await session.run("go")
    await session.close()
    assert closing.closed == 1
    assert blocked.closed == 0
