"""One Playwright driver and one Chromium per test process, for the browser test modules.

A module-scoped fixture that starts ``sync_playwright()`` costs a driver process (node) and a
Chromium launch, about a second of CPU, in every worker that runs one of the module's tests:
three modules, three of each. Two ``sync_playwright()`` cannot be open at once in one thread
either, so the modules share one driver: started by the first fixture that needs it, stopped
when pytest ends (``config.add_cleanup``). The dashboard modules share the plain Chromium; a
module that needs other flags launches its own from the same driver and closes it. Each test
opens its pages in a context of its own (``browser.new_page()``), so nothing carries over.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = os.environ.get("RHO_AGENT_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"

_SHARED: dict[str, Any] = {}


def require_chromium() -> None:
    """Skip without Chromium, except under ``CI=true`` where that fails."""
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"Chromium is not installed at {CHROMIUM}: run .ci/install-browser.sh")
        pytest.skip(
            f"no Chromium at {CHROMIUM} (apt-get install chromium, or set RHO_AGENT_CHROMIUM)"
        )


def playwright_driver(config: pytest.Config) -> Any:
    """The process's Playwright (sync API), started on first use."""
    if "driver" not in _SHARED:
        sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is a dev extra")
        _SHARED["driver"] = sync_api.sync_playwright().start()
        config.add_cleanup(_stop)
    return _SHARED["driver"]


def chromium(config: pytest.Config) -> Any:
    """The process's Chromium with the dashboard tests' flags, launched on first use."""
    require_chromium()
    if "chromium" not in _SHARED:
        driver = playwright_driver(config)
        _SHARED["chromium"] = driver.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox"]
        )
    return _SHARED["chromium"]


def _stop() -> None:
    browser = _SHARED.pop("chromium", None)
    if browser is not None:
        browser.close()
    driver = _SHARED.pop("driver", None)
    if driver is not None:
        driver.stop()
