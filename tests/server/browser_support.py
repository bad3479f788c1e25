"""One headless Chromium per test process for the browser tests, and playwright imported only
by the process that runs them.

A module-scoped browser fixture started playwright's driver (a node process, about 0.4 s of
CPU) and Chromium (about 0.6 s more with a first page) once per module, in each xdist worker
that ran one of the module's tests: three modules, up to three starts a worker. Here the
driver is started once per test process, on first use, and one Chromium per set of launch
arguments (the dashboard modules share one; the browser attacks launch theirs with host and
network flags of their own). Each test still gets a page in a new browser context
(``browser.new_page()``: no cookies, storage or cache from an earlier test) and closes it.
Everything started here is closed when the session's last test tears down (as a session
fixture's finalizer: a per-test CPU recorder counts the browsers' CPU on that test).

``import playwright.sync_api`` costs about 0.1 s of CPU; at a module's top every worker paid
it while collecting. The modules check that playwright is installed with ``find_spec`` and
this module imports it where a browser or ``expect`` is first needed.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = os.environ.get("RHO_AGENT_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"

_BROWSERS: dict[tuple[str, ...], Any] = {}
_STOPS = contextlib.ExitStack()  # the browsers, then the driver


def skip_without_playwright() -> None:
    """Skip the calling module when playwright (a dev extra) is not installed."""
    if importlib.util.find_spec("playwright") is None:
        pytest.skip("playwright is a dev extra", allow_module_level=True)


@contextlib.contextmanager
def shared_browser(request: pytest.FixtureRequest, *args: str) -> Iterator[Any]:
    """This test process's Chromium launched with ``--no-sandbox`` and ``args`` (launched on
    the first call with those arguments, closed with the driver after the session's last
    test), for the tests of one module (``request``: its fixture's). Without Chromium the
    test skips, and under ``CI=true`` fails.

    While playwright's sync API is started, its event loop counts as the thread's running
    loop (its dispatcher is suspended inside ``run_until_complete``), and ``asyncio.run`` or
    a pytest-asyncio test in the same thread would refuse to start. So the loop is set
    running only while a browser module's tests run, and parked when they end, as
    playwright itself does between calls (``asyncio._set_running_loop``)."""
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"Chromium is not installed at {CHROMIUM}: run .ci/install-browser.sh")
        pytest.skip(
            f"no Chromium at {CHROMIUM} (apt-get install chromium, or set RHO_AGENT_CHROMIUM)"
        )
    _resume()
    try:
        if args not in _BROWSERS:
            if not _BROWSERS:  # closed when the session's last test tears down
                request.session.addfinalizer(_close)
            launched = _driver().chromium.launch(
                executable_path=CHROMIUM, args=["--no-sandbox", *args]
            )
            _STOPS.callback(launched.close)  # closed before the driver (last in, first out)
            _BROWSERS[args] = launched
        yield _BROWSERS[args]
    finally:
        _park()


_DRIVERS: list[Any] = []
_PARKED: list[asyncio.AbstractEventLoop] = []


def _driver() -> Any:
    if not _DRIVERS:
        from playwright.sync_api import sync_playwright

        _DRIVERS.append(_STOPS.enter_context(sync_playwright()))
    return _DRIVERS[0]


def _park() -> None:
    loop = asyncio._get_running_loop()
    if loop is not None:
        _PARKED.append(loop)
        asyncio._set_running_loop(None)


def _resume() -> None:
    if _PARKED:
        asyncio._set_running_loop(_PARKED.pop())


def _close() -> None:
    _resume()
    try:
        _STOPS.close()
    finally:
        _BROWSERS.clear()
        _DRIVERS.clear()
        _park()
        _PARKED.clear()


EXPECT_MS = 20_000  # how long an expect(...) polls: a bound against a hang, never a speed


def expect(actual: Any, message: str | None = None) -> Any:
    """playwright's ``expect``, imported on first use, polling for up to ``EXPECT_MS`` unless
    the call says otherwise: its own default, 5 s, is what a page took to render and filter
    at load 8-16 (the dashboard tests failed in full runs and passed alone)."""
    from playwright.sync_api import expect as playwright_expect

    playwright_expect.set_options(timeout=EXPECT_MS)
    return playwright_expect(actual, message)
