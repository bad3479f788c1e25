"""``rho-agent serve`` refuses to start on a configuration no request could fix (issue 30):
an allowed profile that does not exist, no model endpoint, a port already taken. Each exits 1
before listening, naming the flag or variable to change; a good configuration still serves."""

from __future__ import annotations

import asyncio
import socket
import subprocess
from pathlib import Path

from server_support import Serve, http, place, serve_env, serve_refused

from rho_entry.server.startup_checks import listen


def _env(home: Path, base_url: str = "http://127.0.0.1:9/v1", **extra: str) -> dict[str, str]:
    return serve_env(home, base_url, **extra)


def _serve(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return serve_refused(cwd, env, *args)  # in this process: a refusal starts nothing


def test_an_unknown_allowed_profile_is_refused_at_start(tmp_path: Path) -> None:
    where = place(tmp_path)
    flag = _serve(where.work, _env(where.home), "--port", "0", "--allow-profile", "nosuch")
    assert flag.returncode == 1
    assert flag.stderr.startswith("rho-agent serve: --allow-profile 'nosuch': unknown profile")
    assert "listening" not in flag.stderr
    env = _env(where.home, RHO_AGENT_SERVER_PROFILES="readonly,ops")
    variable = _serve(where.work, env, "--port", "0")
    assert variable.returncode == 1
    assert "RHO_AGENT_SERVER_PROFILES 'ops': unknown profile 'ops'" in variable.stderr
    # a profile file in <config dir>/profiles/ is a known profile
    (where.home / "profiles").mkdir()
    (where.home / "profiles" / "ops.yaml").write_text("shell: restricted\n")
    serve = Serve(where.work, env)
    try:
        answer = http().get(f"{serve.url}/api/sessions", headers=serve.auth, timeout=10)
        assert answer.status_code == 200
    finally:
        assert serve.stop() == 0


def test_no_model_endpoint_is_refused_at_start(tmp_path: Path) -> None:
    where = place(tmp_path)
    env = _env(where.home)
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY"):
        del env[name]
    done = _serve(where.work, env, "--port", "0")
    assert done.returncode == 1
    assert "no model endpoint configured: OPENAI_API_KEY is not set" in done.stderr
    assert "export OPENAI_API_KEY=<key>, or OPENAI_BASE_URL=" in done.stderr
    demo = Serve(where.work, {**env, "RHO_AGENT_MODEL": "demo"})  # the demo needs neither
    assert demo.stop() == 0


def test_a_busy_port_exits_1_naming_the_flag(tmp_path: Path) -> None:
    where = place(tmp_path)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = _serve(where.work, _env(where.home), "--port", str(port))
    assert done.returncode == 1, done.stderr
    assert f"cannot listen on 127.0.0.1:{port}: Address already in use" in done.stderr
    assert "choose another --port" in done.stderr
    assert "Errno" not in done.stderr


def test_the_served_connections_do_not_wait_for_acks() -> None:
    """The listening socket says it is TCP (its protocol number, from ``getaddrinfo``), and
    asyncio turns Nagle's algorithm off only on sockets that say so: with it on, a
    response's body, written after its headers, waited for the client's delayed ACK (40 ms
    a request on a kept-alive connection: the tests' servers on a ``socket.socket()`` did)."""

    async def accepted_nodelay() -> int:
        seen: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        async def accept(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            sock = writer.get_extra_info("socket")
            seen.set_result(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        server = await asyncio.start_server(accept, sock=listen("127.0.0.1", 0))
        async with server:
            port = server.sockets[0].getsockname()[1]
            _, writer = await asyncio.open_connection("127.0.0.1", port)
            try:
                return await asyncio.wait_for(seen, 30)
            finally:
                writer.close()

    assert asyncio.run(accepted_nodelay()) != 0


def test_help_shows_the_defaults() -> None:
    done = serve_refused(Path.cwd(), {"COLUMNS": "80"}, "-h")  # as a pipe: 80 columns
    assert done.returncode == 0
    assert "port (default 8765; 0: any free one)" in done.stdout
    assert "--max-runs N" in done.stdout
    assert "MAX_RUNS" not in done.stdout
