"""The dashboard in a real headless Chromium (Debian's package, driven by Playwright for Python)
against a real uvicorn socket, with a scripted model behind the ChatModel port.

Playwright rather than raw DevTools calls: its waiting assertions (``expect``) poll the page
until a condition holds or a generous bound passes, so the tests have no sleeps and no timed
asserts; Playwright's own browser download is not used (``executable_path`` is the system
Chromium). Without Chromium the tests skip, except under ``CI=true`` where they fail
(``.ci/install-browser.sh`` installs it).
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_support import expect, shared_browser, skip_without_playwright
from server_support import UvicornThread, app_for, http, place

from rho_adapters.fakes import ScriptedModel, call, text, tools
from rho_domain.model import ModelRequest, StreamEvent, StreamFinished, TextChunk
from rho_domain.ports.model import ChatModel

XSS = '<script>window.pwned=1</script><img src=x onerror="window.pwned=2">'
SCRIPTS = ("sessions.js", "dashboard.js")
WAIT_MS = 20_000  # an upper bound for expect(...) polling, never a measured duration

skip_without_playwright()


@pytest.fixture(scope="module")
def browser(request: pytest.FixtureRequest) -> Iterator[Any]:
    with shared_browser(request) as launched:
        yield launched


class GatedModel(ChatModel):
    """Waits for ``gate``, streams ``answer`` in small pieces, then never finishes: the answer
    can only reach the page as streamed fragments (no ``message`` event follows)."""

    def __init__(self, answer: str) -> None:
        self.answer = answer
        self.gate = threading.Event()

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        return self._play()

    async def _play(self) -> AsyncIterator[StreamEvent]:
        await asyncio.to_thread(self.gate.wait, 30)
        for start in range(0, len(self.answer), 4):
            yield TextChunk(self.answer[start : start + 4])
        await asyncio.Event().wait()  # cancelled when the session is
        yield StreamFinished("stop")

    async def aclose(self) -> None:
        return None


def open_session(page: Any, server: UvicornThread, sid: str) -> None:
    """Open the dashboard as ``rho-agent serve`` prints it (the token in the fragment), then
    follow a link to one session."""
    page.goto(f"{server.url}/dashboard#token={server.token}")
    page.goto(f"{server.url}/dashboard#/sessions/{sid}")


def test_a_streamed_answer_appears_as_it_streams(tmp_path: Path, browser: Any) -> None:
    model = GatedModel("Streaming answer, four characters at a time.")
    with UvicornThread(app_for(place(tmp_path), model)) as server:
        created = http().post(
            f"{server.url}/api/sessions", json={"prompt": "stream please"}, headers=server.auth
        )
        sid = created.json()["id"]
        page = browser.new_page()
        try:
            open_session(page, server, sid)
            # the replayed user message shows the stream is connected and caught up
            expect(page.locator("#conversation .msg.user")).to_have_text(
                "stream please", timeout=WAIT_MS
            )
            expect(page.locator(f'#sessions tr[data-id="{sid}"]')).to_contain_text(
                "running", timeout=WAIT_MS
            )
            model.gate.set()
            expect(page.locator("#conversation .msg.streaming .text")).to_have_text(
                model.answer, timeout=WAIT_MS
            )
        finally:
            model.gate.set()
            http().post(f"{server.url}/api/sessions/{sid}/cancel", headers=server.auth)
            page.close()


COUNT_STREAMS = """
window.streams = 0;
const fetched = window.fetch;
window.fetch = (url, options) => {
  if (String(url).endsWith("/stream")) window.streams += 1;
  return fetched(url, options);
};
"""


def test_a_link_followed_before_the_first_list_opens_the_session_once(
    tmp_path: Path, browser: Any
) -> None:
    """The dashboard loaded, then a link to a session followed before its first list came back
    (a slow server): when the list came, the page opened the session again, its stream began
    anew, and what was sent live between the two streams (an answer's fragments, never
    stored) was lost, so the streamed answer above never appeared (round 23's CI failure, at
    load). The first list is held here until the session is open; the later ones never come."""
    with UvicornThread(app_for(place(tmp_path), ScriptedModel([text("done")]))) as server:
        created = http().post(
            f"{server.url}/api/sessions", json={"prompt": "answer once"}, headers=server.auth
        )
        sid = created.json()["id"]
        page = browser.new_page()
        page.add_init_script(COUNT_STREAMS)
        held: list[Any] = []

        def hold(route: Any) -> None:
            held.append(route)

        page.route("**/api/sessions?limit=500", hold)
        try:
            open_session(page, server, sid)
            answer = page.locator("#conversation .msg.assistant .text")
            expect(answer).to_have_text("done", timeout=WAIT_MS)
            assert held, "the first list was not held"
            held[0].continue_()
            # drawn by the first list alone, whose callback then ran (no await in between)
            expect(page.locator(f'#sessions tr[data-id="{sid}"]')).to_be_visible(timeout=WAIT_MS)
            assert page.evaluate("window.streams") == 1
            expect(answer).to_have_text("done")
        finally:
            page.unroute_all(behavior="ignoreErrors")
            page.close()


def test_approve_by_clicking_and_untrusted_output_stays_text(tmp_path: Path, browser: Any) -> None:
    model = ScriptedModel(
        [
            tools(call("write", {"path": "x.html", "content": XSS}, id="call_w"), text="Writing."),
            tools(call("read", {"path": "x.html"}, id="call_r")),
            text(f"Done: {XSS}"),
        ]
    )
    where = place(tmp_path)
    with UvicornThread(app_for(where, model)) as server:
        created = http().post(
            f"{server.url}/api/sessions",
            json={"prompt": "write the page", "profile": "developer", "model": "gpt-4o"},
            headers=server.auth,
        )
        sid = created.json()["id"]
        page = browser.new_page(viewport={"width": 1280, "height": 860})
        try:
            open_session(page, server, sid)
            approval = page.locator('#approvals .approval[data-call-id="call_w"]')
            expect(approval).to_contain_text("write needs approval", timeout=WAIT_MS)
            expect(approval.locator("pre")).to_contain_text("<script>window.pwned=1</script>")
            approval.get_by_role("button", name="Approve").click()

            result = page.locator('#conversation .tool[data-call-id="call_r"] .result')
            expect(result).to_contain_text(XSS, timeout=WAIT_MS)
            final = page.locator("#conversation .msg.assistant .text").last
            expect(final).to_have_text(f"Done: {XSS}", timeout=WAIT_MS)
            expect(page.locator("#session-status")).to_have_text("completed", timeout=WAIT_MS)
            assert (where.work / "x.html").read_text() == XSS  # the approved call ran
            # nothing of the output became markup, and nothing ran
            assert page.locator("#conversation script, #conversation img").count() == 0
            assert page.locator("#approvals script, #approvals img").count() == 0
            assert page.evaluate("window.pwned") is None
            # one bar per model call in the timing chart
            expect(page.locator("#timing svg rect.call")).to_have_count(3, timeout=WAIT_MS)
            row = page.locator(f'#sessions tr[data-id="{sid}"]')
            expect(row).to_contain_text("completed", timeout=WAIT_MS)
            expect(row).to_contain_text("gpt-4o")
            expect(row.locator("td.c-cost")).to_contain_text("$")  # priced from the table
            assert page.locator("#conversation .msg.assistant").count() == 2  # no empty bubble
        finally:
            page.close()


def test_the_dashboard_files_are_served_offline_with_a_strict_policy(tmp_path: Path) -> None:
    with UvicornThread(app_for(place(tmp_path), ScriptedModel([]))) as server:
        html = http().get(f"{server.url}/dashboard")
        scripts = [http().get(f"{server.url}/dashboard/{name}") for name in SCRIPTS]
        missing = http().get(f"{server.url}/dashboard/../../etc/passwd", headers=server.auth)
        other = http().get(f"{server.url}/dashboard/secrets.txt", headers=server.auth)
        anonymous = http().get(f"{server.url}/dashboard/secrets.txt")
    assert html.status_code == 200
    assert "script-src 'self'" in html.headers["content-security-policy"]
    for script in scripts:
        assert script.status_code == 200
        assert script.headers["content-type"].startswith("text/javascript")
        assert "innerHTML" not in script.text  # output reaches the page as text only
    assert all(f'<script src="/dashboard/{name}">' in html.text for name in SCRIPTS)
    assert "http://" not in html.text
    assert "https://" not in html.text
    assert missing.status_code == 404
    assert other.status_code == 404
    assert anonymous.status_code == 401  # only the page's own files are public


def test_the_printed_url_brings_the_token_and_it_leaves_no_trace(
    tmp_path: Path, browser: Any
) -> None:
    """``/dashboard#token=...`` (what ``rho-agent serve`` prints): the page works without
    anyone typing the token; the fragment is gone from the address bar at once, and no
    request the page makes carries the token in its URL (a fragment is never sent)."""
    model = ScriptedModel([text("Answered with the printed URL.")])
    with UvicornThread(app_for(place(tmp_path), model)) as server:
        created = http().post(
            f"{server.url}/api/sessions", json={"prompt": "hi"}, headers=server.auth
        )
        sid = created.json()["id"]
        page = browser.new_page()
        urls: list[str] = []
        page.on("request", lambda request: urls.append(request.url))
        try:
            page.goto(f"{server.url}/dashboard#token={server.token}")
            expect(page.locator(f'#sessions tr[data-id="{sid}"]')).to_contain_text(
                "completed", timeout=WAIT_MS
            )
            assert server.token not in page.url
            assert page.locator("#token-form").is_hidden()
            page.locator(f'#sessions tr[data-id="{sid}"]').click()
            final = page.locator("#conversation .msg.assistant .text").last
            expect(final).to_have_text("Answered with the printed URL.", timeout=WAIT_MS)
            assert server.token not in page.url
        finally:
            page.close()
    assert any("/api/sessions" in url for url in urls)
    assert not [url for url in urls if server.token in url]


def test_behind_a_token_the_page_loads_and_asks_for_it(tmp_path: Path, browser: Any) -> None:
    """Opened without the token (an operator's own, which serve never prints): the page (no
    data) loads, the API refuses the page until the user gives the token, and a wrong one is
    refused."""
    token = "s3cret-token-for-the-dashboard"
    model = ScriptedModel([text("Answered behind the token.")])
    with UvicornThread(app_for(place(tmp_path), model, token=token)) as server:
        auth = {"Authorization": f"Bearer {token}"}
        created = http().post(f"{server.url}/api/sessions", json={"prompt": "hi"}, headers=auth)
        sid = created.json()["id"]
        assert http().get(f"{server.url}/api/sessions").status_code == 401
        assert http().get(f"{server.url}/dashboard/dashboard.js").status_code == 200
        assert http().post(f"{server.url}/dashboard").status_code == 401  # GET and HEAD only
        page = browser.new_page()
        try:
            page.goto(f"{server.url}/dashboard#/sessions/{sid}")
            expect(page.locator("#token-form")).to_be_visible(timeout=WAIT_MS)
            assert page.locator(f'#sessions tr[data-id="{sid}"]').count() == 0
            page.fill("#token", "not-the-token")
            page.click("#token-form button")
            expect(page.locator("#connection")).to_have_text(
                "the server refused this token", timeout=WAIT_MS
            )
            page.fill("#token", token)
            page.click("#token-form button")
            expect(page.locator("#token-form")).to_be_hidden(timeout=WAIT_MS)
            expect(page.locator(f'#sessions tr[data-id="{sid}"]')).to_contain_text(
                "completed", timeout=WAIT_MS
            )
            final = page.locator("#conversation .msg.assistant .text").last
            expect(final).to_have_text("Answered behind the token.", timeout=WAIT_MS)
            assert token not in page.url  # never in a URL (logs, history, Referer)
        finally:
            page.close()


def test_an_approval_clicked_on_a_call_shown_otherwise_is_refused(
    tmp_path: Path, browser: Any
) -> None:
    """The server holds the model's write of pwned.txt; the trace the page reads says
    notes.txt. The box shows what its answer carries the digest of (one read of
    pending_approvals), and the server refuses it: nothing is written."""

    model = ScriptedModel(
        [
            tools(call("write", {"path": "pwned.txt", "content": "x"}, id="call_w")),
            text("Wrote it."),
        ]
    )
    where = place(tmp_path)
    with UvicornThread(app_for(where, model)) as server:
        created = http().post(
            f"{server.url}/api/sessions",
            json={"prompt": "write", "profile": "developer"},
            headers=server.auth,
        )
        sid = created.json()["id"]
        detail = f"{server.url}/api/sessions/{sid}"
        for _ in range(600):  # bounded: the run stops at the approval at once
            if http().get(detail, headers=server.auth).json()["pending_approvals"]:
                break
            time.sleep(0.05)
        trace = where.sessions / sid / "trace.jsonl"
        swapped = trace.with_name("trace.new")
        swapped.write_text(trace.read_text().replace("pwned.txt", "notes.txt"))
        os.replace(swapped, trace)
        page = browser.new_page()
        try:
            open_session(page, server, sid)
            approval = page.locator('#approvals .approval[data-call-id="call_w"]')
            expect(approval.locator("pre")).to_contain_text("notes.txt", timeout=WAIT_MS)
            approval.get_by_role("button", name="Approve").click()
            expect(approval).to_contain_text("changed since it was shown", timeout=WAIT_MS)
            expect(approval).to_contain_text("pwned.txt")  # the call as the server holds it
        finally:
            page.close()
    assert not (where.work / "pwned.txt").exists()
    assert not (where.work / "notes.txt").exists()


def test_a_stored_call_named_dot_or_dot_dot_is_answered_from_the_dashboard(
    tmp_path: Path, browser: Any
) -> None:
    """A trace an older version wrote keeps the model's call ids ``.`` and ``..``. In a
    URL's path a browser resolves either as a dot segment (``%2E%2E`` too): the page's
    approval went to ``/api/sessions/ID/`` and no such call could be answered there. The
    page names the call in the body (``POST .../approvals``), and both calls run."""
    where = place(tmp_path)
    first = ScriptedModel(
        [
            tools(
                call("write", {"path": "a.txt", "content": "a"}, id="call_a"),
                call("write", {"path": "b.txt", "content": "b"}, id="call_b"),
            )
        ]
    )
    with UvicornThread(app_for(where, first)) as server:
        created = http().post(
            f"{server.url}/api/sessions",
            json={"prompt": "write both", "profile": "developer"},
            headers=server.auth,
        )
        sid = created.json()["id"]
        detail = f"{server.url}/api/sessions/{sid}"
        # The batch asks its calls one at a time (views.pending_approvals lists the asked
        # call only): waiting for two listed ran out the bound, 30 s and 600 requests a run
        for _ in range(600):  # bounded: the run stops at the first approval at once
            if [
                p["call_id"]
                for p in http().get(detail, headers=server.auth).json()["pending_approvals"]
            ] == ["call_a"]:
                break
            time.sleep(0.05)
        else:
            raise AssertionError(f"{sid} never asked to approve call_a")
    trace = where.sessions / sid / "trace.jsonl"
    trace.write_text(trace.read_text().replace('"call_a"', '"."').replace('"call_b"', '".."'))
    with UvicornThread(app_for(where, ScriptedModel([text("Both written.")]))) as server:
        page = browser.new_page()
        try:
            open_session(page, server, sid)
            for call_id in (".", ".."):
                approval = page.locator(f'#approvals .approval[data-call-id="{call_id}"]')
                expect(approval).to_contain_text("write needs approval", timeout=WAIT_MS)
                approval.get_by_role("button", name="Approve").click()
                expect(approval).to_have_count(0, timeout=WAIT_MS)
            final = page.locator("#conversation .msg.assistant .text").last
            expect(final).to_have_text("Both written.", timeout=WAIT_MS)
        finally:
            page.close()
    assert (where.work / "a.txt").read_text() == "a"
    assert (where.work / "b.txt").read_text() == "b"
