"""The dashboard under hostile data, in real Chromium: one page, several sessions whose stored
text names markup.

- The approval box's "in DIR" (the directory a call was asked about): a real working_dir whose
  name holds ``<img onerror>``, ``</script>`` (two nested directories, ``<`` then
  ``script>``), a bidi override and a zero-width space. It renders as text, with the hidden
  characters escaped (``visible``), and the pending list's JSON carries the name unchanged.
- A first prompt of 10^6 characters planted in a meta.json (a hostile or foreign store: what
  rho-agent writes is cut to ``FIRST_PROMPT_CHARS``), starting with markup: the list renders
  within the poll, as text.
- The 409 ``unreadable_session`` detail of a session whose meta.json is past its bound: the
  page asked for its stream, got the 409, threw its detail away and retried every second,
  leaving an empty pane with no word of why. Now the detail is shown as one notice (text).
  Every path of this test sits under a directory whose name is markup.
- The page's Content-Security-Policy names no ``unsafe-inline``/``unsafe-eval`` and the page
  has no inline script or handler to hash.

Each checks the DOM holds no element the data named and no dialog fired.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_support import expect, shared_browser, skip_without_playwright
from dashboard_support import model, start
from server_support import UvicornThread, app_for, http, place

from rho_adapters.store.layout import META_BYTES

MARKUP = "<img src=x onerror=alert(1)><"  # then "script>": the path reads ...</script>
HIDDEN = "\u202e\u200b"
BIG = 10**6

skip_without_playwright()


@pytest.fixture(scope="module")
def browser(request: pytest.FixtureRequest) -> Iterator[Any]:
    with shared_browser(request) as launched:
        yield launched


def _planted_prompt(sessions: Path, sid: str) -> str:
    meta_path = sessions / sid / "meta.json"
    meta = json.loads(meta_path.read_text())
    meta["first_prompt"] = "<b id=big>" + "x" * BIG
    meta_path.write_text(json.dumps(meta))
    assert meta_path.stat().st_size < META_BYTES
    return str(meta["first_prompt"])


def _record(dialogs: list[str], dialog: Any) -> None:
    dialogs.append(dialog.message)
    dialog.dismiss()


def _named_elements(page: Any) -> dict[str, int]:
    counts: dict[str, int] = page.evaluate(
        """() => ({img: document.querySelectorAll('img').length,
                   b: document.querySelectorAll('b').length,
                   inline: [...document.scripts].filter((s) => !s.src).length,
                   handlers: document.querySelectorAll('[onerror],[onclick],[onload]').length})"""
    )
    return counts


def test_hostile_names_and_a_huge_prompt_render_as_text(tmp_path: Path, browser: Any) -> None:
    where = place(tmp_path / "<img src=x onerror=alert(2)>")
    odd = where.work / MARKUP / f"script>{HIDDEN}"
    odd.mkdir(parents=True)
    dialogs: list[str] = []
    with UvicornThread(app_for(where, model(), approval_hold=0)) as server:
        body = {"prompt": "ask to write", "profile": "developer", "working_dir": str(odd)}
        created = http().post(f"{server.url}/api/sessions", json=body, headers=server.auth)
        assert created.status_code == 201, created.text
        asking = created.json()["id"]
        big = start(server.url, server.auth, "plain hello")
        broken = start(server.url, server.auth, "plain again")
        planted = _planted_prompt(where.sessions, big)
        (where.sessions / broken / "meta.json").write_bytes(b"{" * (META_BYTES + 1))
        refused = http().get(f"{server.url}/api/sessions/{broken}/stream", headers=server.auth)
        assert refused.json()["error"]["code"] == "unreadable_session", refused.text
        detail = http().get(f"{server.url}/api/sessions/{asking}", headers=server.auth).json()
        assert [p["working_dir"] for p in detail["pending_approvals"]] == [str(odd)]
        listed = http().get(f"{server.url}/api/sessions", headers=server.auth)
        csp = listed.headers.get("content-security-policy", "") + http().get(
            f"{server.url}/dashboard"
        ).headers.get("content-security-policy", "")
        page = browser.new_page()
        page.on("dialog", lambda d: _record(dialogs, d))
        try:
            page.goto(f"{server.url}/dashboard#token={server.token}")
            prompt_cell = page.locator("#sessions tbody td.c-prompt").filter(has_text="<b id=big>")
            expect(prompt_cell).to_have_count(1)
            assert len(prompt_cell.inner_text()) >= BIG
            page.goto(f"{server.url}/dashboard#/sessions/{asking}")
            where_shown = page.locator("#approvals .approval .where")
            expect(where_shown).to_contain_text("script>")
            shown_dir = where_shown.inner_text()
            listed_elements = _named_elements(page)
            page.goto(f"{server.url}/dashboard#/sessions/{broken}")
            notice = page.locator("#conversation .refused")
            expect(notice).to_contain_text("stream 409: ")
            expect(notice).to_contain_text(f"`rho-agent --resume {broken}` rebuilds it")
            broken_elements = _named_elements(page)
        finally:
            http().post(f"{server.url}/api/sessions/{asking}/cancel", headers=server.auth)
            page.close()
    assert planted.startswith("<b id=big>")
    assert shown_dir == f"in {str(odd)[: -len(HIDDEN)]}\\u202e\\u200b", ascii(shown_dir)
    assert not any(ch in shown_dir for ch in HIDDEN)
    nothing = {"img": 0, "b": 0, "inline": 0, "handlers": 0}
    assert (listed_elements, broken_elements, dialogs) == (nothing, nothing, [])
    assert "dashboard" in csp or "script-src 'self'" in csp
    assert "unsafe" not in csp, csp
