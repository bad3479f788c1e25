"""Web pages attacking ``rho-agent serve`` from a real headless Chromium.

- CSRF: a page served by a second local HTTP server, on another origin, fires what a page may
  send anywhere without asking: ``fetch`` in ``no-cors`` mode (text/plain, a JSON blob, a
  form body), a CORS ``fetch`` of JSON (pre-flighted), ``sendBeacon``, and three auto-submitted
  forms (text/plain shaped as JSON, urlencoded, multipart). The server records what reached
  it: every one arrived, every one was refused, and no session was created.
- DNS rebinding: Chromium resolves ``attacker.test`` to 127.0.0.1 (``--host-resolver-rules``),
  the page is served at ``http://attacker.test:<server port>/`` (Playwright answers that one
  URL, as the attacker's own server would before the name is re-pointed), and its same-origin
  requests reach the server with ``Host: attacker.test:<port>``; even with the token they are
  refused and read nothing.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from browser_support import shared_browser, skip_without_playwright
from server_support import UvicornThread, app_for, http, place

from rho_adapters.fakes import ScriptedModel, text

SECRET = "SECRET-PROMPT-b41c"
WAIT_S = 20.0  # an upper bound for requests to arrive, never a measured duration
# Chromium's own Private Network Access checks would stop some of these pages before the
# server sees them; they are off, as in browsers without them (Firefox, Safari, older
# Chromium), so that what is tested is the server's wall.
NO_PNA = (
    "--disable-features=BlockInsecurePrivateNetworkRequests,PrivateNetworkAccessSendPreflights,"
    "PrivateNetworkAccessRespectPreflightResults,LocalNetworkAccessChecks"
)

skip_without_playwright()


@pytest.fixture(scope="module")
def browser(request: pytest.FixtureRequest) -> Iterator[Any]:
    resolve = "--host-resolver-rules=MAP attacker.test 127.0.0.1"
    with shared_browser(request, resolve, NO_PNA) as launched:
        yield launched


class Recorder:
    """The app, recording each request's method, path, Origin and answer status."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.state = app.state
        self.seen: list[dict[str, Any]] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode(): v.decode("latin-1") for k, v in scope["headers"]}
        entry = {"method": scope["method"], "path": scope["path"], "headers": headers}

        async def recording_send(message: Any) -> None:
            if message["type"] == "http.response.start":
                entry["status"] = message["status"]
                self.seen.append(entry)
            await send(message)

        await self.app(scope, receive, recording_send)

    def wait_for(self, count: int, path: str) -> list[dict[str, Any]]:
        """The requests to ``path`` from other origins, once ``count`` arrived (or the bound
        passed)."""
        deadline = time.monotonic() + WAIT_S
        while True:
            found = [e for e in self.seen if e["path"] == path and _foreign(e)]
            if len(found) >= count or time.monotonic() > deadline:
                return found
            time.sleep(0.05)


def _foreign(entry: dict[str, Any]) -> bool:
    headers = entry["headers"]
    return headers.get("sec-fetch-site") not in (None, "same-origin", "none")


ATTACK = """<!doctype html><html><body>
<iframe name="s1"></iframe><iframe name="s2"></iframe><iframe name="s3"></iframe>
<form id="f1" action="{victim}/api/sessions" method="POST" enctype="text/plain" target="s1">
  <input name='{{"prompt":"csrf-form-text","x":"' value='"}}'></form>
<form id="f2" action="{victim}/api/sessions" method="POST" target="s2">
  <input name="prompt" value="csrf-form-urlencoded"></form>
<form id="f3" action="{victim}/api/sessions" method="POST" enctype="multipart/form-data"
  target="s3"><input name="prompt" value="csrf-form-multipart"></form>
<script>
(async () => {{
  const url = "{victim}/api/sessions";
  const results = [];
  const attempts = [
    () => fetch(url, {{method: "POST", mode: "no-cors", headers: {{"Content-Type": "text/plain"}},
                      body: JSON.stringify({{prompt: "csrf-fetch-text"}})}}),
    () => fetch(url, {{method: "POST", mode: "no-cors",
                      body: new Blob([JSON.stringify({{prompt: "csrf-fetch-blob"}})],
                                     {{type: "application/json"}})}}),
    () => fetch(url, {{method: "POST", mode: "no-cors",
                      body: new URLSearchParams({{prompt: "csrf-fetch-urlencoded"}})}}),
    () => fetch(url, {{method: "POST", headers: {{"Content-Type": "application/json"}},
                      body: JSON.stringify({{prompt: "csrf-fetch-cors"}})}}),
    () => fetch("{victim}/api/sessions/{sid}/cancel", {{method: "POST", mode: "no-cors"}}),
    () => navigator.sendBeacon(url, JSON.stringify({{prompt: "csrf-beacon"}})),
  ];
  for (const attempt of attempts) {{
    try {{ await attempt(); results.push("sent"); }} catch (e) {{ results.push(String(e)); }}
  }}
  for (const id of ["f1", "f2", "f3"]) document.getElementById(id).submit();
  window.results = results;
}})();
</script></body></html>"""

REBIND = """<!doctype html><html><body><script>
(async () => {{
  const auth = {{Authorization: "Bearer {token}"}};
  const results = [];
  for (const [path, init] of [
    ["/api/sessions", {{headers: auth}}],
    ["/api/sessions/{sid}/stream?until=idle", {{headers: auth}}],
    ["/api/sessions", {{method: "POST", headers: {{...auth, "Content-Type": "application/json"}},
                       body: JSON.stringify({{prompt: "rebound"}})}}],
  ]) {{
    const response = await fetch(path, init);
    results.push({{status: response.status, body: await response.text()}});
  }}
  window.results = results;
}})();
</script></body></html>"""


class AttackerSite:
    """A second local HTTP server (another port: another origin) serving one page."""

    def __init__(self, page: str) -> None:
        body = page.encode()

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                return None

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> AttackerSite:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _victim(tmp_path: Path) -> tuple[Recorder, Any]:
    where = place(tmp_path)
    app = app_for(where, ScriptedModel([text("done")] * 20))
    return Recorder(app), where


def _seed(server: UvicornThread) -> str:
    created = http().post(
        f"{server.url}/api/sessions", json={"prompt": SECRET}, headers=server.auth
    )
    assert created.status_code == 201, created.text
    sid: str = created.json()["id"]
    idle = http().get(
        f"{server.url}/api/sessions/{sid}/stream?until=idle", headers=server.auth, timeout=30
    )
    assert idle.status_code == 200
    return sid


@pytest.mark.parametrize(
    ("page_host", "victim_host"),
    [("attacker.test", "127.0.0.1"), ("localhost", "localhost")],
    ids=["cross-site", "same-site-other-port"],
)
def test_a_page_of_another_origin_cannot_create_or_cancel_a_session(
    tmp_path: Path, browser: Any, page_host: str, victim_host: str
) -> None:
    recorder, where = _victim(tmp_path)
    with UvicornThread(recorder) as server:
        sid = _seed(server)
        victim = f"http://{victim_host}:{server.port}"
        with AttackerSite(ATTACK.format(victim=victim, sid=sid)) as site:
            page = browser.new_page()
            try:
                page.goto(f"http://{page_host}:{site.port}/")
                page.wait_for_function("window.results !== undefined", timeout=WAIT_S * 1000)
                results = page.evaluate("window.results")
                posts = recorder.wait_for(
                    8, "/api/sessions"
                )  # 6 attempts (one pre-flight) + 3 forms
                cancels = recorder.wait_for(1, f"/api/sessions/{sid}/cancel")
            finally:
                page.close()
        listed = http().get(f"{server.url}/api/sessions", headers=server.auth).json()["sessions"]
    assert len(posts) >= 8, (results, [(e["method"], e.get("status")) for e in posts])
    assert len(cancels) == 1, results
    for entry in [*posts, *cancels]:
        assert entry["status"] in (401, 403, 415), entry
    assert [s["id"] for s in listed] == [sid]
    assert listed[0]["status"] == "completed"  # not cancelled either
    assert sorted(p.name for p in where.sessions.iterdir()) == [sid]


def test_a_rebound_name_reads_nothing_even_with_the_token(tmp_path: Path, browser: Any) -> None:
    recorder, where = _victim(tmp_path)
    with UvicornThread(recorder) as server:
        sid = _seed(server)
        origin = f"http://attacker.test:{server.port}"
        page = browser.new_page()
        html = REBIND.format(token=server.token, sid=sid)
        page.route(f"{origin}/", lambda route: route.fulfill(body=html, content_type="text/html"))
        try:
            page.goto(f"{origin}/")
            page.wait_for_function("window.results !== undefined", timeout=WAIT_S * 1000)
            results = page.evaluate("window.results")
        finally:
            page.close()
        arrived = [
            e for e in recorder.seen if e["headers"].get("host") == f"attacker.test:{server.port}"
        ]
    assert [r["status"] for r in results] == [421, 421, 421], results
    for result in results:
        assert SECRET not in result["body"]
        assert json.loads(result["body"])["error"]["code"] == "wrong_host"
    # they did reach the server, under the attacker's name (Chromium retries once on 421)
    assert len(arrived) >= 3
    assert {e["status"] for e in arrived} == {421}
    assert sorted(p.name for p in where.sessions.iterdir()) == [sid]
