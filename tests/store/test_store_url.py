"""Choosing the store by URL: ``--store``, ``$RHO_AGENT_STORE``, ``store:`` in the YAML, the
library's ``store=``; and one clear error (URL with its password hidden, the setting named)
for a bad URL, an unreachable server, missing rights or a missing driver."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pg_rig import pg_server_url, schema_url

from rho_adapters.extras import install_command
from rho_adapters.fakes import ScriptedModel, text
from rho_adapters.pgstore import PgSessionStore
from rho_adapters.store import FileSessionStore
from rho_domain.errors import ConfigError
from rho_entry import AgentConfig
from rho_entry.config.stores import choose_store, store_setting
from rho_entry.facade import Agent, Session
from rho_entry.stored import SessionStore

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))
# the CLI's main in this process, for commands whose process is not the point (~0.6 s each)
import program_zygote
from cli_support import rho as rho_here

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))
from server_support import serve_refused

__all__ = ["pg_server_url"]
SECRET = "pw-4b1d-not-for-logs"


def with_password(url: str) -> str:
    """The same URL with a password (the test server trusts local connections: any works)."""
    return url.replace("postgres@", f"postgres:{SECRET}@", 1)


def rho(*args: str, home: Path, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "RHO_AGENT_HOME": str(home / "rho"),
        "NO_COLOR": "1",
        "LANG": "C.UTF-8",
        "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src"),
        **env,
    }
    # a process of its own, forked from the CLI's zygote (program_zygote: its interpreter and
    # imports, ~0.3 s of CPU, are not what these tests test); the shadowed driver's
    # directory below is first on its path as in a cold Python, or it starts cold
    return program_zygote.run(
        "rho",
        [sys.executable, "-m", "rho_entry", *args],
        cwd=cwd,
        env=environ,
        timeout=60,
        text=True,
    )


def test_the_setting_in_force_flag_then_environment_then_config() -> None:
    env = {"RHO_AGENT_STORE": "postgresql://e@h/db"}
    assert store_setting("postgresql://f@h/db", env, "c") == ("postgresql://f@h/db", "--store")
    assert store_setting(None, env, "c") == ("postgresql://e@h/db", "$RHO_AGENT_STORE")
    assert store_setting(None, {}, "/srv/s") == ("/srv/s", "store: in the agent config")
    assert store_setting(None, {}, None)[0] is None


def test_paths_and_file_urls_are_the_file_store(tmp_path: Path) -> None:
    for value in (str(tmp_path / "s"), f"file://{tmp_path}/s", tmp_path / "s"):
        chosen = choose_store(value, {})
        assert isinstance(chosen.store, FileSessionStore)
        assert chosen.store.root == tmp_path / "s"
    default = choose_store(None, {"RHO_AGENT_HOME": str(tmp_path / "home")}).store
    assert isinstance(default, FileSessionStore)
    assert default.root == tmp_path / "home" / "sessions"


@pytest.mark.parametrize(
    ("url", "why"),
    [
        (f"mysql://me:{SECRET}@db/x", "the scheme is not one rho-agent knows"),
        (f"postgresql://me:{SECRET}@db:port/x", "Port could not be cast"),
        (f"postgresql://me:{SECRET}@/x", "it names no host"),
        (f"file://otherhost/{SECRET}", "a path on this host"),
        ("  ", "it is empty"),
    ],
)
def test_a_bad_url_is_one_error_naming_it_and_the_setting(url: str, why: str) -> None:
    with pytest.raises(ConfigError) as caught:
        choose_store(url, {}, origin="$RHO_AGENT_STORE")
    message = str(caught.value)
    assert why in message
    assert "(set by $RHO_AGENT_STORE)" in message
    assert SECRET not in message or url.startswith("file://")


def test_a_run_lists_and_ps_on_postgresql_leave_no_file_and_no_password(
    pg_server_url: str, tmp_path: Path
) -> None:
    import psycopg

    url = with_password(schema_url(pg_server_url))
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    done = rho("--store", url, "-m", "demo", "hello there", home=home, cwd=work)
    assert done.returncode == 0, done.stderr
    # the run and the bare `export` in processes of their own; the rest in this one
    listed = rho_here("--list", "--json", "--store", url, home=home, cwd=work)
    [row] = json.loads(listed.stdout)
    assert (row["first_prompt"], row["status"]) == ("hello there", "completed")
    other = tmp_path / "other-host"  # another config directory: only the URL is shared
    ps = rho_here("ps", "--json", home=other, cwd=work, RHO_AGENT_STORE=url)
    assert [r["id"] for r in json.loads(ps.stdout)] == [row["id"]]
    assert not (home / "rho" / "sessions").exists()
    for result in (done, listed, ps):
        assert SECRET not in result.stdout + result.stderr
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT config, meta, labels FROM rho_sessions").fetchall()
        lines = conn.execute("SELECT line FROM rho_events ORDER BY session_id, seq").fetchall()
    assert lines
    assert SECRET not in json.dumps([rows, lines])
    exported = program_zygote.run(
        "rho",
        [sys.executable, "-m", "rho_entry", "export", row["id"][:6], "--format", "trace"],
        env={"PYTHONPATH": os.environ.get("PYTHONPATH", ""), "RHO_AGENT_STORE": url},
        timeout=60,
    )
    assert exported.returncode == 0, exported.stderr
    assert exported.stdout == b"".join(line.encode() + b"\n" for (line,) in lines)
    document = json.loads(
        rho_here("export", row["id"], "--store", url, home=other, cwd=work).stdout
    )
    assert document["events"][0]["kind"] == "run_start"
    assert document["session"]["first_prompt"] == "hello there"
    again = rho_here(
        "--resume", row["id"], "-m", "demo", "and more", home=other, cwd=work, RHO_AGENT_STORE=url
    )
    assert again.returncode == 0, again.stderr  # continued from another config directory
    stats = json.loads(
        rho_here("stats", "--all", "--json", "--store", url, home=other, cwd=work).stdout
    )
    assert [(s["session_id"], s["turn_count"] > 0) for s in stats] == [(row["id"], True)]


def test_store_in_the_agent_yaml_is_used(pg_server_url: str, tmp_path: Path) -> None:
    import psycopg

    url = schema_url(pg_server_url)
    config = tmp_path / "agent.yaml"
    config.write_text(f"model: demo\nstore: {url}\n")
    done = rho_here("-c", str(config), "from yaml", home=tmp_path / "home", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT count(*) FROM rho_sessions").fetchone() == (1,)


def test_an_unreachable_server_is_one_error_without_the_password(tmp_path: Path) -> None:
    url = f"postgresql://rho:{SECRET}@127.0.0.1:1/rho"
    result = rho("-m", "demo", "hi", home=tmp_path, cwd=tmp_path, RHO_AGENT_STORE=url)
    assert result.returncode != 0
    assert "postgresql://rho:***@127.0.0.1:1/rho (set by $RHO_AGENT_STORE)" in result.stderr
    assert SECRET not in result.stdout + result.stderr
    assert "Traceback" not in result.stderr


def test_missing_rights_are_named(pg_server_url: str, tmp_path: Path) -> None:
    import psycopg

    url = schema_url(pg_server_url)
    schema = url.rsplit("%3D", 1)[1]
    with psycopg.connect(pg_server_url, autocommit=True) as conn:
        conn.execute("DROP ROLE IF EXISTS visitor")
        conn.execute("CREATE ROLE visitor LOGIN")
        conn.execute(f"GRANT USAGE ON SCHEMA {schema} TO visitor")  # no CREATE
    visitor = url.replace("postgres@", "visitor@", 1)
    result = rho_here("ps", "--store", visitor, home=tmp_path, cwd=tmp_path)
    assert result.returncode == 1
    assert "the role lacks a right it needs" in result.stderr
    assert "(set by --store)" in result.stderr


def test_a_missing_driver_names_the_extra_and_the_url(tmp_path: Path) -> None:
    shadow = tmp_path / "shadow" / "psycopg"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('no psycopg here')\n")
    src = Path(__file__).resolve().parents[2] / "src"
    url = f"postgresql://rho:{SECRET}@db.internal/rho"
    result = rho(
        "ps",
        "--store",
        url,
        home=tmp_path,
        cwd=tmp_path,
        PYTHONPATH=f"{tmp_path / 'shadow'}:{src}",
    )
    assert result.returncode == 1
    assert install_command("postgres") in result.stderr
    assert "postgresql://rho:***@db.internal/rho (set by --store)" in result.stderr
    assert SECRET not in result.stderr


async def test_the_library_takes_a_url(pg_server_url: str) -> None:
    url = schema_url(pg_server_url)
    agent = Agent(AgentConfig(profile="readonly", model="scripted"))
    session = Session(agent, store=url, model=ScriptedModel([text("stored")]))
    assert (await session.run("remember me")).ok
    await session.close()
    store = SessionStore(url)
    assert isinstance(store.backend, PgSessionStore)
    assert await store.get_latest_id() == session.id
    again = await store.resume(session.id, model=ScriptedModel([text("again")]))
    assert (await again.run("and again")).text == "again"
    await again.close()
    infos = await store.list()
    assert infos[0].first_prompt == "remember me"
    await store.aclose()  # this process's connections and listener for the URL end here


def test_serve_with_an_unreachable_store_is_one_error_at_start(tmp_path: Path) -> None:
    environ = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path)}
    environ |= {"RHO_AGENT_HOME": str(tmp_path / "rho"), "OPENAI_API_KEY": "sk-x"}
    # in this process, whose backend for a URL keeps the setting that first named it: each
    # setting its own URL (nothing listens on port 1 or 2)
    by_flag = f"postgresql://rho:{SECRET}@127.0.0.1:1/rho"
    by_env = f"postgresql://rho:{SECRET}@127.0.0.1:2/rho"
    for url, args, env, origin in (
        (by_flag, ("--store", by_flag), {}, "(set by --store)"),
        (by_env, (), {"RHO_AGENT_STORE": by_env}, "(set by $RHO_AGENT_STORE)"),
    ):
        result = serve_refused(tmp_path, environ | env, *args)
        assert result.returncode == 1
        assert url.replace(SECRET, "***") in result.stderr
        assert origin in result.stderr
        assert SECRET not in result.stderr
        assert "Traceback" not in result.stderr
