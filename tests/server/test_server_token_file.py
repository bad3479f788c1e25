"""The token of ``rho-agent serve``: generated per start, kept in a 0600 file that the CLI and
the client find by URL, printed once in the dashboard URL's fragment, removed at exit, and
nowhere else (not in the sessions' files, not sent to the model, not in the server's log).

The server is stopped with SIGHUP (its terminal closed) here, SIGTERM elsewhere: uvicorn
listens for SIGINT and SIGTERM only, so SIGHUP killed the server (status -1), its token file
stayed on disk and its runs in flight ended in no trace; it now stops as SIGTERM does."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import stat
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from server_support import Place, Serve, http, place, serve_env, serve_process, serve_refused

from rho_adapters.fakes.loopback import LoopbackServer
from rho_adapters.fakes.wire import call, text_reply, tool_reply
from rho_domain.errors import ConfigError
from rho_entry.client import AgentClient
from rho_entry.server.errors import Unauthorized
from rho_entry.server.settings import ServerSettings
from rho_entry.server.token_file import find_token, remove_token, token_path, write_token


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def test_serve_writes_a_private_token_file_that_clients_find_and_removes_it(
    tmp_path: Path,
) -> None:
    where = place(tmp_path)
    reply = [tool_reply(call("list", {"path": "."})), text_reply("Listed.")]
    with LoopbackServer(reply) as model:
        serve = Serve(where.work, serve_env(where.home, model.base_url))
        try:
            port = serve.url.rsplit(":", 1)[1]
            path = where.home / "server" / f"127.0.0.1-{port}.token"
            assert serve.token is not None
            assert len(serve.token) >= 40
            assert path.read_text().strip() == serve.token
            assert (_mode(path), _mode(path.parent)) == (0o600, 0o700)
            assert str(path) in serve.listening
            own = {"RHO_AGENT_HOME": str(where.home)}
            sid, listed, by_name = asyncio.run(_use(serve.url, own))
            assert listed == [sid]
            assert by_name == [sid]  # http://localhost:PORT finds the 127.0.0.1 file
            with pytest.raises(Unauthorized, match="token"):
                asyncio.run(_use(serve.url, {"RHO_AGENT_HOME": str(tmp_path / "other")}))
        finally:
            assert serve.stop(signal.SIGHUP) == 0
        log = serve.dashboard + serve.process.communicate(timeout=10)[1]
    assert not path.exists()
    assert log.count(serve.token) == 1  # the dashboard URL, printed once
    assert serve.token not in serve.listening
    for file in where.sessions.rglob("*"):
        if file.is_file():
            assert serve.token not in file.read_text(errors="replace"), file
    assert model.requests, "the session did call the model"
    assert serve.token not in repr(model.requests)


async def _use(url: str, env: dict[str, str]) -> tuple[str, list[str], list[str]]:
    async with AgentClient(url, environ=env) as client:
        created = await client.create_session(prompt="what is here?")
        async for _ in client.events(created["id"], until_idle=True):
            pass
        listed = [s["id"] for s in await client.list_sessions()]
    port = url.rsplit(":", 1)[1]
    async with AgentClient(f"http://localhost:{port}", environ=env) as client:
        by_name = [s["id"] for s in await client.list_sessions()]
    return created["id"], listed, by_name


def test_an_operators_token_is_neither_written_nor_printed(tmp_path: Path) -> None:
    where = place(tmp_path)
    token = "operator-chosen-token-0123456789abcdef"
    env = serve_env(where.home, "http://127.0.0.1:9/v1", RHO_AGENT_SERVER_TOKEN=token)
    serve = Serve(where.work, env, "--allow-host", "agent.example.com")
    try:
        assert serve.token is None
        assert not (where.home / "server").exists()
        auth = {"Authorization": f"Bearer {token}"}
        assert http().get(f"{serve.url}/api/sessions", headers=auth).status_code == 200
        proxied = {**auth, "Host": "agent.example.com"}
        assert http().get(f"{serve.url}/api/sessions", headers=proxied).status_code == 200
        other = {**auth, "Host": "attacker.example"}
        assert http().get(f"{serve.url}/api/sessions", headers=other).status_code == 421
    finally:
        assert serve.stop() == 0
        out = serve.listening + serve.dashboard + serve.process.communicate(timeout=10)[1]
    assert token not in out
    assert "RHO_AGENT_SERVER_TOKEN" in serve.listening


def _serve_fails(where: Place, *args: str) -> subprocess.CompletedProcess[str]:
    """A refusal found once serving starts, in a process of its own."""
    return serve_process(where.work, serve_env(where.home, "http://127.0.0.1:9/v1"), *args)


def test_serve_refuses_a_bad_allow_host_and_a_linked_token_directory(tmp_path: Path) -> None:
    where = place(tmp_path)
    env = serve_env(where.home, "http://127.0.0.1:9/v1")
    for bad in ("http://agent.example.com", "localhost.", "agent.example.com:443", "a b"):
        done = serve_refused(where.work, env, "--port", "0", "--allow-host", bad)
        assert done.returncode == 1, done.stderr
        assert "--allow-host" in done.stderr
        assert repr(bad) in done.stderr
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (where.home / "server").symlink_to(elsewhere)
    done = _serve_fails(where)
    assert done.returncode == 1, done.stderr
    assert "not a link" in done.stderr
    assert list(elsewhere.iterdir()) == []


def test_the_file_is_created_private_and_never_through_a_link(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    path = token_path(tmp_path, "127.0.0.1", 8765)
    path.parent.mkdir(mode=0o755)
    os.chmod(path.parent, 0o755)  # noqa: S103 - a loose directory the server must tighten
    path.symlink_to(victim)  # planted where the server will write
    old = os.umask(0)
    try:
        assert write_token(tmp_path, "127.0.0.1", 8765, "tok-1") == path
    finally:
        os.umask(old)
    assert victim.read_text() == "keep me\n"
    assert not path.is_symlink()
    assert (_mode(path), _mode(path.parent)) == (0o600, 0o700)
    assert path.read_text() == "tok-1\n"
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temporary left
    write_token(tmp_path, "127.0.0.1", 8765, "tok-2")  # a restart replaces it
    remove_token(path, "tok-1")  # the old server's exit leaves the new file alone
    assert path.read_text() == "tok-2\n"
    remove_token(path, "tok-2")
    assert not path.exists()


def test_the_token_is_found_by_url(tmp_path: Path) -> None:
    home = {"RHO_AGENT_HOME": str(tmp_path)}
    write_token(tmp_path, "0.0.0.0", 9001, "everywhere")  # noqa: S104 - a wildcard bind
    write_token(tmp_path, "::1", 9002, "six")
    write_token(tmp_path, "agent.example.com", 443, "proxied")
    assert find_token("http://127.0.0.1:9001", home) == "everywhere"
    assert find_token("http://localhost:9001/api", home) == "everywhere"
    assert find_token("http://[::1]:9002", home) == "six"
    assert find_token("http://127.0.0.1:9002", home) == "six"
    assert find_token("https://agent.example.com", home) == "proxied"
    assert find_token("http://other.example:9001", home) is None  # not a loopback URL
    assert find_token("http://127.0.0.1:9003", home) is None
    assert find_token("http://127.0.0.1:bad", home) is None
    assert find_token("http://127.0.0.1:9003", {**home, "RHO_AGENT_SERVER_TOKEN": "env"}) == "env"
    link = token_path(tmp_path, "127.0.0.1", 9004)
    link.symlink_to(token_path(tmp_path, "0.0.0.0", 9001))  # noqa: S104
    assert find_token("http://127.0.0.1:9004", home) is None  # a link is not followed


def test_a_fifo_in_the_token_files_place_blocks_no_reader(tmp_path: Path) -> None:
    """A FIFO under a token file's name blocked its open until a writer came: the client
    looking for the token (``rho-agent --server URL``) and a server's exit hung for good."""
    home = {"RHO_AGENT_HOME": str(tmp_path)}
    path = token_path(tmp_path, "127.0.0.1", 9005)
    path.parent.mkdir(mode=0o700)
    os.mkfifo(path)
    assert _unblocked(path, lambda: find_token("http://127.0.0.1:9005", home)) == (True, None)
    assert _unblocked(path, lambda: remove_token(path, "tok")) == (True, None)
    assert path.exists()  # not a token file: left alone


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
def test_another_users_file_is_no_token(tmp_path: Path) -> None:
    """A token file this user does not own (a config directory shared with another user,
    who wrote it) is not taken: the client would send a token it did not get from its own
    server, to whatever listens there."""
    home = {"RHO_AGENT_HOME": str(tmp_path)}
    path = write_token(tmp_path, "127.0.0.1", 9006, "theirs")
    assert find_token("http://127.0.0.1:9006", home) == "theirs"
    os.chown(path, 65534, 65534)
    assert find_token("http://127.0.0.1:9006", home) is None


def _unblocked(fifo: Path, read: Callable[[], object]) -> tuple[bool, object]:
    """(whether ``read`` returned within 30 s, what it returned); a read still blocked on
    ``fifo`` is let go by opening its other end, so a failure never hangs the suite."""
    import threading

    found: list[object] = []
    reader = threading.Thread(target=lambda: found.append(read()))
    reader.start()
    reader.join(30)
    in_time = not reader.is_alive()
    if not in_time:
        os.close(os.open(fifo, os.O_WRONLY))
        reader.join()
    return in_time, found[0] if found else None


def test_allowed_hosts_in_settings_are_checked(tmp_path: Path) -> None:
    env = {"RHO_AGENT_SERVER_ALLOW_HOSTS": "agent.example.com, 10.0.0.5"}
    settings = ServerSettings.from_environ(env, sessions_root=tmp_path)
    assert settings.allowed_hosts == ("agent.example.com", "10.0.0.5")
    for bad in ("agent.example.com.", "*.example.com", "https://x", "x/y", "ex ample"):
        with pytest.raises(ConfigError, match="RHO_AGENT_SERVER_ALLOW_HOSTS"):
            ServerSettings(sessions_root=tmp_path, allowed_hosts=(bad,))


def test_serve_will_not_write_the_token_where_a_session_could_read_it(tmp_path: Path) -> None:
    """A config directory inside a root is readable by the sessions' file tools, unless the
    secrets policy hides it (``.config/rho-agent``): serve refuses to put the token there."""
    where = place(tmp_path)
    inside = where.work / "rho-home"
    env = serve_env(inside, "http://127.0.0.1:9/v1")
    done = serve_refused(where.work, env, "--port", "0")
    assert done.returncode == 1, done.stderr
    assert "inside the root" in done.stderr
    assert not (inside / "server").exists()
    hidden = where.work / ".config" / "rho-agent"
    with LoopbackServer([]) as model:
        serve = Serve(where.work, serve_env(hidden, model.base_url))
        try:
            assert serve.token is not None
            port = serve.url.rsplit(":", 1)[1]
            name = f".config/rho-agent/server/127.0.0.1-{port}.token"
            assert (where.work / name).read_text().strip() == serve.token
            model.replies[:] = [  # a session in that root tries to read it
                tool_reply(call("read", {"path": name}, call_id="r")),
                tool_reply(call("grep", {"pattern": ".", "path": ".config"}, call_id="g")),
                tool_reply(call("bash", {"command": f"cat {name}"}, call_id="b")),
                tool_reply(call("bash", {"command": "grep -r . .config"}, call_id="b2")),
                text_reply("Nothing there."),
            ]
            created = http().post(
                f"{serve.url}/api/sessions", json={"prompt": "find the token"}, headers=serve.auth
            )
            sid = created.json()["id"]
            stream = http().get(
                f"{serve.url}/api/sessions/{sid}/stream?until=idle", headers=serve.auth, timeout=60
            )
            assert "Nothing there." in stream.text
        finally:
            assert serve.stop() == 0
    assert len(model.requests) == 5
    trace = (hidden / "sessions" / sid / "trace.jsonl").read_text().splitlines()
    # A call the profile refuses is blocked before it runs (tool_blocked, with the reason).
    events = [json.loads(line) for line in trace]
    results = [
        e.get("content") or e.get("reason", "")
        for e in events
        if e.get("kind") in ("tool_end", "tool_blocked")
    ]
    assert len(results) == 4
    assert "secret location" in results[0]
    assert "secret location" in results[2]
    assert serve.token not in stream.text
    assert serve.token not in repr(model.requests)
    assert serve.token not in (hidden / "sessions" / sid / "trace.jsonl").read_text()


def test_a_token_an_http_header_cannot_carry_is_refused_before_any_request(
    tmp_path: Path,
) -> None:
    # A token with a trailing line break (`RHO_AGENT_SERVER_TOKEN=$(cat token)\n`, a paste)
    # reached the first request, where httpx/h11 refuse it ("Illegal header value").
    with pytest.raises(ConfigError) as refused:
        AgentClient("http://127.0.0.1:9", environ={"RHO_AGENT_SERVER_TOKEN": "tok-SECRET\n"})
    assert str(refused.value).startswith(
        "the server token (token=, RHO_AGENT_SERVER_TOKEN or serve's token file) has a line "
        "break at character 11"
    )
    assert "SECRET" not in str(refused.value)
