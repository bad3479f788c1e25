"""The dashboard shows a call a human decides on with its hidden characters as escapes, as
the terminal does (``terminal_text.visible``): a bidi override (U+202E) in a call's
arguments reorders what follows on the page, a zero-width space hides a word boundary, so the
approval box showed one command while another ran ("Trojan Source", CVE-2021-42574). Before,
the box and the conversation's tool call put them on the page raw (``JSON.stringify`` leaves
them), textContent being no wall against them. Real Chromium, as tests/server/
test_server_dashboard.py."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_support import expect, shared_browser, skip_without_playwright
from server_support import UvicornThread, app_for, http, place

from rho_adapters.fakes import ScriptedModel, call, text, tools

WAIT_MS = 20_000  # an upper bound for expect(...) polling, never a measured duration
COMMAND = "echo safe #\u202e ;txt.nwp hcuot\u200b"
RAW = ("\u202e", "\u200b")

skip_without_playwright()


@pytest.fixture(scope="module")
def browser(request: pytest.FixtureRequest) -> Iterator[Any]:
    with shared_browser(request) as launched:
        yield launched


def test_a_call_with_hidden_characters_is_shown_with_them_escaped(
    tmp_path: Path, browser: Any
) -> None:
    model = ScriptedModel([tools(call("bash", {"command": COMMAND}, id="call_b")), text("ok")])
    with UvicornThread(app_for(place(tmp_path), model)) as server:
        created = http().post(
            f"{server.url}/api/sessions",
            json={"prompt": "run it", "profile": "developer"},
            headers=server.auth,
        )
        sid = created.json()["id"]
        page = browser.new_page()
        try:
            page.goto(f"{server.url}/dashboard#token={server.token}")
            page.goto(f"{server.url}/dashboard#/sessions/{sid}")
            approval = page.locator('#approvals .approval[data-call-id="call_b"]')
            expect(approval).to_contain_text("bash needs approval", timeout=WAIT_MS)
            shown = [
                approval.locator("pre").inner_text(),
                page.locator(
                    '#conversation .tool[data-call-id="call_b"] pre.arguments'
                ).inner_text(),
            ]
        finally:
            http().post(f"{server.url}/api/sessions/{sid}/cancel", headers=server.auth)
            page.close()
    for text_shown in shown:
        assert not any(ch in text_shown for ch in RAW), ascii(text_shown)
        assert "echo safe #\\u202e ;txt.nwp hcuot\\u200b" in text_shown
