"""The dashboard's approval box of a delegate call shows the sub-agent's call its answer
approves, from the same read as the digest it sends (``pending_approvals[].sub_agent``);
before, only the event's reason named it (test_server_delegate_shown.py). Real Chromium."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_support import expect, shared_browser, skip_without_playwright
from server_support import UvicornThread, app_for, http, place
from test_server_delegate_shown import delegating

WAIT_MS = 20_000  # an upper bound for expect(...) polling, never a measured duration

skip_without_playwright()


@pytest.fixture(scope="module")
def browser(request: pytest.FixtureRequest) -> Iterator[Any]:
    with shared_browser(request) as launched:
        yield launched


def test_the_dashboard_box_shows_the_sub_agents_call(tmp_path: Path, browser: Any) -> None:
    with UvicornThread(app_for(place(tmp_path), delegating())) as server:
        created = http().post(
            f"{server.url}/api/sessions",
            json={"prompt": "delegate a note", "profile": "developer"},
            headers=server.auth,
        )
        sid = created.json()["id"]
        page = browser.new_page()
        try:
            page.goto(f"{server.url}/dashboard#token={server.token}")
            page.goto(f"{server.url}/dashboard#/sessions/{sid}")
            approval = page.locator('#approvals .approval[data-call-id="d1"]')
            expect(approval).to_contain_text("delegate needs approval", timeout=WAIT_MS)
            expect(approval.locator("pre.sub-agent-call")).to_contain_text('"note.txt"')
        finally:
            page.close()
