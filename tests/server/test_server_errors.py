"""The refusals: 401, 403, 404, 409, 413, 422 and 429, each with a JSON error that says what
to fix (and names the field where there is one)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from server_support import app_for, by_prompt, client_for, place, wait_idle

from rho_adapters.extras import install_command
from rho_adapters.fakes import ScriptedModel, text
from rho_domain.errors import ConfigError
from rho_entry.server.settings import ServerSettings, check_bind, is_loopback


def _error(response: Any, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    error: dict[str, Any] = response.json()["error"]
    assert error["message"]
    return error


async def test_401_without_the_token_and_200_with_it(tmp_path: Path) -> None:
    app = app_for(place(tmp_path), ScriptedModel([]), token="s3cret-token")
    async with client_for(app, anonymous=True) as anonymous:
        missing = await anonymous.get("/api/sessions")
        wrong = await anonymous.get(
            "/api/sessions", headers={"Authorization": "Bearer s3cret-tokem"}
        )
        basic = await anonymous.get(
            "/api/sessions", headers={"Authorization": "Basic s3cret-token"}
        )
        page = await anonymous.get("/")
    for response in (missing, wrong, basic, page):
        assert _error(response, 401)["code"] == "unauthorized"
        assert response.headers["www-authenticate"] == "Bearer"
        assert "RHO_AGENT_SERVER_TOKEN" in response.json()["error"]["message"]
    # each says its own fix: a curl with a token of an earlier start (or of another config
    # directory) and one without the word Bearer were told only to send one
    said = [_error(response, 401)["message"] for response in (missing, wrong, basic)]
    assert said[0].startswith("this server needs its token: send 'Authorization: Bearer")
    assert said[1].startswith("the token sent is not this server's (rho-agent serve makes a")
    assert said[2].startswith("send the token as 'Authorization: Bearer <token>' (the word")
    async with client_for(app, token="s3cret-token") as client:
        assert (await client.get("/api/sessions")).status_code == 200


async def test_403_for_a_profile_or_working_dir_not_allowed(tmp_path: Path) -> None:
    where = place(tmp_path)
    (where.work / "sub").mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, where.work / "escape")
    async with client_for(app_for(where, ScriptedModel([]))) as client:
        profile = await client.post("/api/sessions", json={"profile": "eval"})
        assert _error(profile, 403)["field"] == "profile"
        for working_dir in (str(outside), "../outside", "escape", "/"):
            refused = await client.post("/api/sessions", json={"working_dir": working_dir})
            assert _error(refused, 403)["field"] == "working_dir", working_dir
        inside = await client.post("/api/sessions", json={"working_dir": "sub"})
        assert inside.json()["working_dir"] == str((where.work / "sub").resolve())
        absent = await client.post("/api/sessions", json={"working_dir": "nope"})
        assert _error(absent, 422)["field"] == "working_dir"
    assert not list(outside.iterdir())


async def test_404s(tmp_path: Path) -> None:
    where = place(tmp_path)
    async with client_for(app_for(where, ScriptedModel([text("hi")]))) as client:
        sid = (await client.post("/api/sessions", json={"prompt": "hi"})).json()["id"]
        await wait_idle(client, sid)
        for path in (
            "/api/sessions/0123456789ab",
            "/api/sessions/0123456789ab/stream",
            f"/api/sessions/{sid[:4]}",  # prefixes are for people; clients name sessions
        ):
            assert _error(await client.get(path), 404)["code"] == "not_found", path
        dotted = await client.get("/api/sessions/..%2F..%2Fetc/stream")  # before any route
        assert _error(dotted, 400)["field"] == "path"
        call = await client.post(
            f"/api/sessions/{sid}/approvals/nope", json={"decision": "deny", "digest": "0" * 32}
        )
        assert "no tool call 'nope' awaits approval" in _error(call, 404)["message"]
        chat = await client.post("/api/sessions/0123456789ab/chat", json={"prompt": "x"})
        _error(chat, 404)


async def test_a_session_outside_the_roots_is_invisible(tmp_path: Path) -> None:
    """A session another server (or the CLI) ran elsewhere is neither listed nor readable."""
    where = place(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    model = ScriptedModel([text("secret findings")])
    async with client_for(app_for(where, model, roots=(other.resolve(),))) as client:
        sid = (await client.post("/api/sessions", json={"prompt": "look"})).json()["id"]
        await wait_idle(client, sid)
    async with client_for(app_for(where, ScriptedModel([]))) as client:
        assert (await client.get("/api/sessions")).json()["sessions"] == []
        _error(await client.get(f"/api/sessions/{sid}/stream?until=idle"), 404)
        _error(await client.post(f"/api/sessions/{sid}/chat", json={"prompt": "x"}), 404)


async def test_409_while_a_run_is_in_progress(tmp_path: Path) -> None:
    # answer_grace: how long an approval waits for the asking run to stop before the 409
    app = app_for(place(tmp_path), by_prompt({}), answer_grace=0.05)
    async with client_for(app) as client:
        created = (await client.post("/api/sessions", json={"prompt": "hang"})).json()
        sid = created["id"]
        # a run just dispatched is running, even before meta.json says so
        assert (created["running_here"], created["liveness"]) == (True, "running")
        busy = await client.post(f"/api/sessions/{sid}/chat", json={"prompt": "more"})
        assert "is running" in _error(busy, 409)["message"]
        resume = await client.post(f"/api/sessions/{sid}/resume", json={})
        _error(resume, 409)
        approve = await client.post(
            f"/api/sessions/{sid}/approvals/c1", json={"decision": "deny", "digest": "0" * 32}
        )
        _error(approve, 409)
        await client.post(f"/api/sessions/{sid}/cancel")
        await wait_idle(client, sid)


async def test_413_for_a_body_over_the_limit(tmp_path: Path) -> None:
    async with client_for(app_for(place(tmp_path), ScriptedModel([]), max_body_bytes=100)) as c:
        large = await c.post("/api/sessions", json={"prompt": "x" * 200})
        assert _error(large, 413)["code"] == "body_too_large"

        async def chunks() -> Any:  # no Content-Length: counted as it arrives
            for _ in range(10):
                yield b" " * 50

        json_type = {"Content-Type": "application/json"}
        streamed = await c.post("/api/sessions", content=chunks(), headers=json_type)
        _error(streamed, 413)
        assert (await c.get("/api/sessions")).json()["sessions"] == []


def _deep_schema(depth: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(depth):
        schema = {"type": "array", "items": schema}
    return schema


DEEP_SCHEMA = _deep_schema(600)  # legal, parsed by the body reader; it answered 500


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"promt": "typo"}, "promt"),
        ({"prompt": 3}, "prompt"),
        ({"prompt": "  "}, "prompt"),
        ({"max_turns": -1}, "max_turns"),
        ({"max_turns": True}, "max_turns"),
        ({"vars": {"a": 1}}, "vars"),
        ({"labels": ["a"]}, "labels"),
        ({"prompt": "x", "template": "t"}, "template"),
        ([1, 2], "body"),
        ({"prompt": "x", "output_schema": DEEP_SCHEMA}, "output_schema"),
        # compiled in a worker, not on the server's loop (check_schema only parses the body)
        ({"prompt": "x", "output_schema": {"pattern": "a{2,1}"}}, "output_schema"),
    ],
)
async def test_422_names_the_field(tmp_path: Path, body: Any, field: str) -> None:
    async with client_for(app_for(place(tmp_path), ScriptedModel([]))) as client:
        refused = await client.post("/api/sessions", json=body)
    assert _error(refused, 422)["field"] == field


async def test_422_names_what_the_body_holds_in_json_words(tmp_path: Path) -> None:
    """A value of the wrong kind was named in Python's words (``not NoneType``, ``not list``,
    ``not int``), which a client writing JSON does not know."""
    async with client_for(app_for(place(tmp_path), ScriptedModel([]))) as client:
        json_type = {"Content-Type": "application/json"}
        said = [
            _error(await client.post("/api/sessions", content=body, headers=json_type), 422)
            for body in (b"null", b"[1]", b'"x"', b"5", b"1.5", b"true")
        ]
        field = _error(await client.post("/api/sessions", json={"prompt": 3}), 422)
        listed = _error(await client.post("/api/sessions", json={"model": ["m"]}), 422)
    assert [error["message"] for error in said] == [
        f"the body must be a JSON object, not {kind}"
        for kind in ("null", "an array", "a string", "a number", "a number", "true (a boolean)")
    ]
    assert field["message"] == "prompt must be a string, not a number"
    assert listed["message"] == "model must be a string, not an array"


async def test_422_for_other_bodies_and_parameters(tmp_path: Path) -> None:
    async with client_for(app_for(place(tmp_path), ScriptedModel([]))) as client:
        sid = (await client.post("/api/sessions", json={})).json()["id"]
        not_json = await client.post(
            "/api/sessions", content=b"{nope", headers={"Content-Type": "application/json"}
        )
        assert _error(not_json, 422)["field"] == "body"
        deep = b"[" * 100_000 + b"]" * 100_000  # within the size limit; it answered 500
        nested = await client.post(
            "/api/sessions", content=deep, headers={"Content-Type": "application/json"}
        )
        assert "nests arrays or objects too deeply" in _error(nested, 422)["message"]
        # read differently by two parsers (Python took the last key; NaN and Infinity are not
        # JSON, and a NaN reached a session's output_schema): refused, nothing created
        json_type = {"Content-Type": "application/json"}
        for body, said in (
            (b'{"profile": "readonly", "profile": "developer"}', "key 'profile' twice"),
            (b'{"labels": {"a": "1", "a": "2"}}', "key 'a' twice"),
            (b'{"output_schema": {"type": "number", "maximum": NaN}}', "holds NaN"),
            (b'{"output_schema": {"maximum": -Infinity}}', "holds -Infinity"),
        ):
            ambiguous = await client.post("/api/sessions", content=body, headers=json_type)
            assert said in _error(ambiguous, 422)["message"], body
        twice = b'{"decision": "deny", "decision": "approve", "digest": "00"}'
        answer = await client.post(
            f"/api/sessions/{sid}/approvals/c1", content=twice, headers=json_type
        )
        assert "key 'decision' twice" in _error(answer, 422)["message"]
        listed = (await client.get("/api/sessions")).json()["sessions"]
        assert [row["id"] for row in listed] == [sid]
        chat = await client.post(f"/api/sessions/{sid}/chat", json={})
        assert _error(chat, 422)["field"] == "prompt"
        decision = await client.post(f"/api/sessions/{sid}/approvals/c1", json={"decision": "ok"})
        assert _error(decision, 422)["field"] == "decision"
        last_id = await client.get(f"/api/sessions/{sid}/stream", headers={"Last-Event-ID": "ten"})
        assert _error(last_id, 422)["field"] == "Last-Event-ID"
        after = await client.get(f"/api/sessions/{sid}/stream?after=-3")
        assert _error(after, 422)["field"] == "after"
        limit = await client.get("/api/sessions?limit=0")
        assert _error(limit, 422)["field"] == "limit"
        # no maximum listed past the store's 10,000 marks: every trace read whole each poll
        past = _error(await client.get("/api/sessions?limit=1001"), 422)
        assert (past["field"], "from 1 to 1,000" in past["message"]) == ("limit", True)
        assert (await client.get("/api/sessions?limit=1000")).status_code == 200


async def test_429_with_retry_after_when_every_slot_is_busy(tmp_path: Path) -> None:
    app = app_for(place(tmp_path), by_prompt({"quick": "done"}), max_runs=1, retry_after=7)
    async with client_for(app) as client:
        first = (await client.post("/api/sessions", json={"prompt": "hang"})).json()["id"]
        second = (await client.post("/api/sessions", json={})).json()["id"]
        full = await client.post("/api/sessions", json={"prompt": "quick"})
        assert _error(full, 429)["code"] == "busy"
        assert full.headers["retry-after"] == "7"
        chat = await client.post(f"/api/sessions/{second}/chat", json={"prompt": "quick"})
        _error(chat, 429)
        await client.post(f"/api/sessions/{first}/cancel")
        await wait_idle(client, first)
        again = await client.post(f"/api/sessions/{second}/chat", json={"prompt": "quick"})
        assert again.status_code == 202
        assert (await wait_idle(client, second))["status"] == "completed"


def test_binding_beyond_loopback_needs_a_token(tmp_path: Path) -> None:
    settings = ServerSettings(sessions_root=tmp_path)
    for host in ("127.0.0.1", "localhost", "::1", "127.0.0.2"):
        assert is_loopback(host)
        check_bind(host, settings)
    for host in ("0.0.0.0", "192.168.1.10", "example.org", "::"):  # noqa: S104 - refused
        assert not is_loopback(host)
        with pytest.raises(Exception, match="RHO_AGENT_SERVER_TOKEN"):
            check_bind(host, settings)
    with_token = ServerSettings(sessions_root=tmp_path, token="t")
    check_bind("0.0.0.0", with_token)  # noqa: S104 - allowed with a token


def test_settings_from_the_environment_name_the_variable(tmp_path: Path) -> None:
    env = {
        "RHO_AGENT_SERVER_ROOTS": str(tmp_path),
        "RHO_AGENT_SERVER_PROFILES": "developer, readonly",
        "RHO_AGENT_SERVER_MAX_RUNS": "4",
        "RHO_AGENT_SERVER_TOKEN": "t",
        "RHO_AGENT_SERVER_CORS_ORIGINS": "https://a.example",
    }
    settings = ServerSettings.from_environ(env, sessions_root=tmp_path)
    assert settings.roots == (tmp_path.resolve(),)
    assert settings.profiles == ("developer", "readonly")
    assert (settings.max_runs, settings.token) == (4, "t")
    assert settings.cors_origins == ("https://a.example",)
    for name, value in (
        ("RHO_AGENT_SERVER_MAX_RUNS", "many"),
        ("RHO_AGENT_SERVER_MAX_RUNS", "0"),
        ("RHO_AGENT_SERVER_ROOTS", str(tmp_path / "missing")),
    ):
        with pytest.raises(Exception, match=name):
            ServerSettings.from_environ({name: value}, sessions_root=tmp_path)
    with pytest.raises(ConfigError, match=r"^RHO_AGENT_SERVER_ROOTS: ' ' is not a directory \("):
        ServerSettings.from_environ({"RHO_AGENT_SERVER_ROOTS": " "}, sessions_root=tmp_path)


async def test_cors_is_off_unless_configured(tmp_path: Path) -> None:
    preflight = {
        "Origin": "https://ui.example",
        "Access-Control-Request-Method": "POST",
    }
    async with client_for(app_for(place(tmp_path), ScriptedModel([]))) as client:
        off = await client.options("/api/sessions", headers=preflight)
    assert "access-control-allow-origin" not in off.headers
    app = app_for(place(tmp_path / "b"), ScriptedModel([]), cors_origins=("https://ui.example",))
    async with client_for(app) as client:
        on = await client.options("/api/sessions", headers=preflight)
    assert on.headers["access-control-allow-origin"] == "https://ui.example"


async def test_403_for_a_stored_session_whose_profile_is_not_allowed(tmp_path: Path) -> None:
    where = place(tmp_path)
    async with client_for(app_for(where, ScriptedModel([]))) as client:
        sid = (await client.post("/api/sessions", json={"profile": "developer"})).json()["id"]
    readonly_only = app_for(where, ScriptedModel([]), profiles=("readonly",))
    async with client_for(readonly_only) as client:
        assert (await client.get(f"/api/sessions/{sid}")).status_code == 200  # visible
        chat = await client.post(f"/api/sessions/{sid}/chat", json={"prompt": "x"})
        assert _error(chat, 403)["field"] == "profile"
        _error(await client.post(f"/api/sessions/{sid}/resume", json={}), 403)


async def test_409_for_a_session_another_process_drives(tmp_path: Path) -> None:
    import subprocess
    import sys

    where = place(tmp_path)
    async with client_for(app_for(where, ScriptedModel([]))) as client:
        sid = (await client.post("/api/sessions", json={})).json()["id"]
        holder = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "import asyncio, sys\n"
                "from rho_adapters.store import FileSessionStore\n"
                f"store = FileSessionStore({str(where.sessions)!r})\n"
                f"asyncio.run(store.open({sid!r}))\n"
                "print('held', flush=True)\n"
                "sys.stdin.read()\n",
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert holder.stdout is not None
            assert holder.stdout.readline().strip() == "held"
            chat = await client.post(f"/api/sessions/{sid}/chat", json={"prompt": "x"})
            assert f"pid {holder.pid}" in _error(chat, 409)["message"]
        finally:
            holder.communicate("", timeout=20)
        assert (await client.get(f"/api/sessions/{sid}")).json()["liveness"] != "idle"


def test_without_the_extra_the_error_names_it() -> None:
    import subprocess
    import sys

    script = (
        "import sys\n"
        "import rho_entry.server.app, rho_entry.server.routes, rho_entry.server.serve\n"
        "assert 'starlette' not in sys.modules and 'uvicorn' not in sys.modules\n"
        "sys.modules['starlette'] = None  # as if the extra were not installed\n"
        "from rho_entry.server import create_app\n"
        "try:\n"
        "    create_app()\n"
        "except Exception as exc:\n"
        "    print(type(exc).__name__, exc)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("MissingExtra")
    assert install_command("server") in done.stdout
